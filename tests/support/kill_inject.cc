#include "support/kill_inject.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "support/cni_call.h"

namespace cni::test {
namespace {

std::vector<std::string> AddEnv(const AddCall& call) {
  return {kTestPath, "CNI_COMMAND=ADD", absl::StrCat("CNI_CONTAINERID=", call.container_id),
          absl::StrCat("CNI_NETNS=", call.netns), absl::StrCat("CNI_IFNAME=", call.ifname),
          absl::StrCat("CNI_PATH=", PluginDir())};
}

}  // namespace

const std::vector<std::string>& KillSyscalls() {
  static const std::vector<std::string> calls = {
      "sendmsg", "sendto", "recvmsg", "recvfrom", "openat", "write", "rename",
      "flock",   "clone3", "setns",   "unlink",   "mkdir",  "execve"};
  return calls;
}

RunResult AddKilledAt(const AddCall& call, const std::string& syscall, int nth) {
  std::vector<std::string> argv = {"/usr/bin/strace", "-f", "-qq", "-o", "/dev/null",
                                   "-e", absl::StrCat("trace=", syscall),
                                   "-e", absl::StrCat("inject=", syscall, ":signal=SIGKILL:when=", nth),
                                   absl::StrCat(PluginDir(), "/", call.plugin)};
  return RunProcess(argv, AddEnv(call), call.conf, 30000);
}

std::map<std::string, int> KillPointsOfAdd(const AddCall& call) {
  TempDir dir;
  const std::string log = dir.str() + "/trace";
  std::vector<std::string> argv = {"/usr/bin/strace", "-f", "-qq", "-e", "signal=none", "-o", log,
                                   "-e", absl::StrCat("trace=", absl::StrJoin(KillSyscalls(), ",")),
                                   absl::StrCat(PluginDir(), "/", call.plugin)};
  RunResult run = RunProcess(argv, AddEnv(call), call.conf, 30000);
  INFO(Describe(run));
  REQUIRE(run.exit_code == 0);
  // "<pid> <call>(..." starts a call; "<pid> <... <call> resumed>" goes on with one.
  std::map<std::string, std::map<std::string, int>> per_tracee;  // call -> pid -> calls
  std::ifstream in(log);
  bool first = true;
  for (std::string line; std::getline(in, line); first = false) {
    std::vector<std::string> words = absl::StrSplit(line, absl::MaxSplits(' ', 1));
    if (words.size() < 2) continue;
    const size_t paren = words[1].find('(');
    if (paren == std::string::npos || absl::StartsWith(words[1], "<...")) continue;
    const std::string name = words[1].substr(0, paren);
    if (first && name == "execve") continue;
    ++per_tracee[name][words[0]];
  }
  std::map<std::string, int> points;
  for (const std::string& name : KillSyscalls()) points[name] = 0;
  for (const auto& [name, pids] : per_tracee) {
    for (const auto& [pid, n] : pids) points[name] = std::max(points[name], n);
  }
  return points;
}

}  // namespace cni::test

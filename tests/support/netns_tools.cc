#include "support/netns_tools.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>

#include "absl/strings/str_join.h"
#include "support/run.h"

extern char** environ;

namespace cni::test {

std::string MustExec(const NetnsFixture& fx, const std::string& netns, const std::vector<std::string>& argv) {
  RunResult r = fx.Exec(netns, argv);
  INFO(absl::StrJoin(argv, " ") << ": " << r.err);
  REQUIRE(r.exit_code == 0);
  return r.out;
}

Json LinkJson(const NetnsFixture& fx, const std::string& netns, const std::string& name) {
  Json j = Json::parse(MustExec(fx, netns, {"ip", "-d", "-j", "link", "show", "dev", name}));
  REQUIRE(j.size() == 1);
  return j[0];
}

void TearDown(NetnsFixture& fx, const std::vector<std::string>& netns,
              const std::vector<std::string>& host_links) {
  for (const std::string& ns : netns) fx.DelNetns(ns);
  for (const std::string& l : host_links) fx.Exec("", {"ip", "link", "del", l});
  CHECK(fx.Leftovers().empty());
}

BackgroundProcess::BackgroundProcess(const std::string& netns, const std::vector<std::string>& argv) {
  std::vector<std::string> full = {"/usr/bin/timeout", "120", "/usr/bin/nsenter", "--net=" + netns, "--"};
  full.insert(full.end(), argv.begin(), argv.end());
  std::vector<char*> cargv;
  for (std::string& s : full) cargv.push_back(s.data());
  cargv.push_back(nullptr);
  if (posix_spawn(&pid_, cargv[0], nullptr, nullptr, cargv.data(), environ) != 0) pid_ = -1;
}

BackgroundProcess::~BackgroundProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
  }
}

std::string SocatExchange(const std::string& netns, const std::string& addr, const std::string& data) {
  std::vector<std::string> argv;
  if (!netns.empty()) argv = {"/usr/bin/nsenter", "--net=" + netns, "--"};
  argv.insert(argv.end(), {"/usr/bin/socat", "-T", "2", "-t", "2", "-", addr});
  return RunProcess(argv, {kTestPath}, data, 8000).out;
}

}  // namespace cni::test

#include "support/netns_tools.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "support/cni_call.h"
#include "support/run.h"

extern char** environ;

namespace cni::test {

std::string MustExec(const NetnsFixture& fx, const std::string& netns, const std::vector<std::string>& argv) {
  RunResult r = fx.Exec(netns, argv);
  INFO(absl::StrJoin(argv, " ") << ": " << r.err);
  REQUIRE(r.exit_code == 0);
  return r.out;
}

void MustExecLines(const NetnsFixture& fx, const std::string& netns, const std::string& lines) {
  for (absl::string_view line : absl::StrSplit(lines, '\n', absl::SkipWhitespace())) {
    std::vector<std::string> argv;
    for (absl::string_view w : absl::StrSplit(line, ' ', absl::SkipEmpty())) argv.emplace_back(w);
    MustExec(fx, netns, argv);
  }
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
  // The kernel destroys a deleted namespace later, on a work queue, and the
  // host ends of its veths go only then: on a busy machine that can take a
  // while. Given 5 s; anything still there after that is a leftover.
  for (int i = 0; i < 50 && !fx.Leftovers().empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK(fx.Leftovers() == std::vector<std::string>{});  // prints what is left
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

namespace {

// What CheckSameAsUpstream compares, for one implementation.
struct LinkSnapshot {
  cni::Result result;
  std::string link, addrs, routes;
};

LinkSnapshot SnapshotAddDel(const NetnsFixture& fx, const std::string& plugin, const std::string& conf,
                            const std::string& netns, const std::string& dir) {
  LinkSnapshot s;
  s.result = MustResult(CallPlugin(plugin, "ADD", conf, netns, "diff", {.dir = dir}));
  NormalizeForDiff(s.result, "");
  Json l = LinkJson(fx, netns, "eth0");
  s.link = absl::StrCat(l.value("mtu", 0), " ", l["linkinfo"].dump(), " ",
                        l.value("flags", Json::array()).dump(), " txqlen ", l.value("txqlen", 0));
  s.addrs = MustExec(fx, netns, {"ip", "-4", "-o", "addr", "show", "dev", "eth0"});
  s.routes = MustExec(fx, netns, {"ip", "route", "show"});
  MustSucceed(CallPlugin(plugin, "DEL", conf, netns, "diff", {.dir = dir}));
  CHECK(fx.Links(netns) == std::vector<std::string>{"lo"});
  return s;
}

}  // namespace

bool CheckSameAsUpstream(NetnsFixture& fx, const std::string& plugin, const std::string& conf) {
  if (!std::filesystem::exists(std::string(kUpstreamDir) + "/" + plugin)) {
    WARN("no upstream " << plugin << ": differential skipped");
    return false;
  }
  std::string up_ns = fx.AddNetns();
  std::string our_ns = fx.AddNetns();
  LinkSnapshot up = SnapshotAddDel(fx, plugin, conf, up_ns, kUpstreamDir);
  LinkSnapshot ours = SnapshotAddDel(fx, plugin, conf, our_ns, "");
  CHECK(ours.result == up.result);
  CHECK(ours.link == up.link);
  CHECK(ours.addrs == up.addrs);
  CHECK(ours.routes == up.routes);
  fx.DelNetns(up_ns);
  fx.DelNetns(our_ns);
  return true;
}

bool IptablesNft(const NetnsFixture& fx) {
  if (absl::StrContains(fx.Exec("", {"iptables", "--version"}).out, "nf_tables")) return true;
  WARN("skipped: iptables is not iptables-nft here");
  return false;
}

std::vector<std::string> LinesWith(const std::string& text, absl::string_view needle) {
  std::vector<std::string> out;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::StrContains(line, needle)) continue;
    std::string l(line.substr(0, line.find(" # handle")));
    size_t c = l.find("counter packets");
    if (c != std::string::npos) l = l.substr(0, c);
    out.push_back(l);
  }
  return out;
}

}  // namespace cni::test

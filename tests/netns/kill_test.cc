// A plugin killed at any step of ADD (SIGKILL: no cleanup runs) must not stop
// the runtime's DEL from removing everything, nor the node from working.
//
// strace's fault injection (support/kill_inject.h) kills the process at the
// N-th call of one system call, for N = 1, 2, ... until an ADD runs to its
// end, for each kind of call a plugin makes (netlink, files, locks, threads
// entering namespaces, the delegate's exec). After each kill the test does what a runtime does after a
// failed ADD: DEL of the whole chain (portmap, then bridge with host-local),
// and then checks that no link, reservation, firewall rule, state file or
// temporary file is left. At the end of each kind a new container gets the
// chain and answers ping: the node works.
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "cni/base/json.h"
#include "support/cni_call.h"
#include "support/kill_inject.h"
#include "support/netns_fixture.h"
#include "support/netns_tools.h"
#include "support/run.h"

namespace {

using cni::Json;
using namespace cni::test;  // NOLINT: test brevity

constexpr const char* kContainer = "ctr-kill";

Json BridgeConf(const TempDir& dir) {
  return {{"cniVersion", "1.0.0"}, {"name", "killnet"}, {"type", "bridge"}, {"bridge", "cni0"},
          {"isGateway", true},
          {"ipam", HostLocalIpam(dir, {"10.89.0.0/24"}, Json::array({{{"dst", "0.0.0.0/0"}}}))}};
}

std::string PortmapConf(const std::string& backend, const std::string& prev) {
  Json maps = Json::array({{{"hostPort", 8080}, {"containerPort", 80}, {"protocol", "tcp"}}});
  return Json{{"cniVersion", "1.0.0"}, {"name", "killnet"}, {"type", "portmap"}, {"backend", backend},
              {"runtimeConfig", {{"portMappings", maps}}}, {"prevResult", Json::parse(prev)}}
      .dump();
}

// The ADD of `plugin` in the killed container.
AddCall Call(const std::string& plugin, const std::string& conf, const std::string& netns) {
  return AddCall{.plugin = plugin, .conf = conf, .netns = netns, .container_id = kContainer};
}

// What a runtime does after a failed ADD: DEL of every plugin of the chain,
// last first. DEL must succeed whatever ADD left.
void DelChain(const std::string& backend, const std::string& bridge_conf, const std::string& prev,
              const std::string& netns) {
  MustSucceed(CallPlugin("portmap", "DEL", PortmapConf(backend, prev), netns, kContainer), "portmap DEL");
  MustSucceed(CallPlugin("bridge", "DEL", bridge_conf, netns, kContainer), "bridge DEL");
}

// Files under `dir` (recursively) whose names mark a temporary or an
// attachment's state.
std::vector<std::string> StateFiles(const std::string& dir) {
  std::vector<std::string> found;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_directory()) continue;
    const std::string name = it->path().filename().string();
    if (absl::EndsWith(name, "~") || absl::StrContains(name, ".tmp") ||
        absl::StrContains(name, kContainer)) {
      found.push_back(it->path().string());
    }
  }
  return found;
}

// Everything the attachment could have left, as lines (empty when clean).
std::vector<std::string> Leftovers(const NetnsFixture& fx, const TempDir& ipam_dir,
                                   const std::string& netns) {
  std::vector<std::string> left;
  for (const std::string& link : fx.Links()) {
    if (link != "lo" && link != "cni0") left.push_back("host link " + link);  // the bridge is shared
  }
  for (const std::string& link : fx.Links(netns)) {
    if (link != "lo") left.push_back("container link " + link);
  }
  for (const std::string& ip : Reservations(ipam_dir)) left.push_back("reservation " + ip);
  std::string rules = fx.Exec("", {"nft", "list", "ruleset"}).out;
  if (absl::StrContains(rules, kContainer) || absl::StrContains(rules, "CNI-DN-")) {
    left.push_back("firewall: " + rules);
  }
  for (const std::string& f : StateFiles("/run/cni")) left.push_back("file " + f);
  for (const std::string& f : StateFiles(ipam_dir.str())) left.push_back("file " + f);
  return left;
}

// A fresh container gets the whole chain and answers the host's ping; then it
// goes again.
void NodeWorks(NetnsFixture& fx, const TempDir& ipam_dir, const std::string& backend) {
  std::string ns = fx.AddNetns();
  const std::string conf = BridgeConf(ipam_dir).dump();
  RunResult add = CallPlugin("bridge", "ADD", conf, ns, "ctr-after");
  cni::Result result = MustResult(add);
  MustSucceed(CallPlugin("portmap", "ADD", PortmapConf(backend, add.out), ns, "ctr-after"), "portmap ADD");
  // The leftover check looks for these: they must be there while attached.
  std::string rules = fx.Exec("", {"nft", "list", "ruleset"}).out;
  CHECK((absl::StrContains(rules, "ctr-after") || absl::StrContains(rules, "CNI-DN-")));
  REQUIRE(!result.ips.empty());
  CHECK(Ping("", result.ips[0].address.addr()));
  MustSucceed(CallPlugin("portmap", "DEL", PortmapConf(backend, add.out), ns, "ctr-after"), "portmap DEL");
  MustSucceed(CallPlugin("bridge", "DEL", conf, ns, "ctr-after"), "bridge DEL");
  fx.DelNetns(ns);
}

// Kills the ADD of `plugin` at every call of every kind in KillSyscalls();
// returns how many kill points there were.
int KillEverywhere(NetnsFixture& fx, const TempDir& ipam_dir, const std::string& backend,
                   const std::string& plugin) {
  const std::string netns = fx.AddNetns("killed");
  const std::string bridge_conf = BridgeConf(ipam_dir).dump();
  // portmap is killed after a bridge ADD that worked; its prevResult is that one's.
  std::string prev = R"({"cniVersion":"1.0.0"})";
  int kills = 0;
  std::map<std::string, int> kills_at;  // per kind of call
  for (const std::string& syscall : KillSyscalls()) {
    bool finished = false;
    for (int nth = 1; nth <= 400 && !finished; ++nth) {
      if (plugin == "portmap") prev = CallPlugin("bridge", "ADD", bridge_conf, netns, kContainer).out;
      const std::string conf = plugin == "bridge" ? bridge_conf : PortmapConf(backend, prev);
      RunResult run = AddKilledAt(Call(plugin, conf, netns), syscall, nth);
      finished = run.exit_code == 0;
      if (!finished) {
        ++kills;
        ++kills_at[syscall];
        INFO(plugin << " killed at " << syscall << " #" << nth << ": " << Describe(run));
        // Killed itself, or failed (and rolled back) with a CNI error because
        // a process it ran (the IPAM delegate, iptables-restore) was killed.
        bool child_killed = run.exit_code == 1 && cni::test::ErrorCode(run) > 0;
        CHECK((run.exit_code == 128 + 9 || child_killed));
      }
      if (plugin == "bridge" && finished) prev = run.out;
      DelChain(backend, bridge_conf, prev, netns);
      INFO(plugin << " killed at " << syscall << " #" << nth << ", then DEL");
      std::vector<std::string> left = Leftovers(fx, ipam_dir, netns);
      INFO(absl::StrJoin(left, "\n"));
      CHECK(left.empty());
      if (!left.empty()) return kills;  // one report is enough
    }
    INFO(syscall);
    CHECK(finished);  // the ADD ran to its end once N passed its last call
  }
  // The injection reached every kill point an ADD that nothing stops offers
  // (counted here on the node as the loop left it; the loop's first runs, on
  // a fresh node, may have had more).
  if (plugin == "portmap") prev = CallPlugin("bridge", "ADD", bridge_conf, netns, kContainer).out;
  std::map<std::string, int> points =
      KillPointsOfAdd(Call(plugin, plugin == "bridge" ? bridge_conf : PortmapConf(backend, prev), netns));
  if (plugin == "bridge") prev = CallPlugin("bridge", "ADD", bridge_conf, netns, kContainer).out;
  DelChain(backend, bridge_conf, prev, netns);
  for (const std::string& syscall : KillSyscalls()) {
    INFO(plugin << " (" << backend << "): " << syscall << ": " << points[syscall] << " kill points, "
                << kills_at[syscall] << " kills");
    CHECK(kills_at[syscall] >= points[syscall]);
  }
  NodeWorks(fx, ipam_dir, backend);
  fx.DelNetns(netns);
  return kills;
}

}  // namespace

TEST_CASE("kill: bridge + host-local killed at every step of ADD, then DEL leaves nothing", "[netns][kill]") {
  NetnsFixture fx;
  TempDir ipam_dir;
  int kills = KillEverywhere(fx, ipam_dir, "nftables", "bridge");
  WARN("bridge + host-local ADD: " << kills << " kill points");
  CHECK(kills > 50);  // and KillEverywhere checked each kind against an ADD's calls
}

TEST_CASE("kill: portmap killed at every step of ADD on both backends, then DEL leaves nothing", "[netns][kill]") {
  for (const std::string backend : {"nftables", "iptables"}) {
    DYNAMIC_SECTION(backend) {
      NetnsFixture fx;
      TempDir ipam_dir;
      int kills = KillEverywhere(fx, ipam_dir, backend, "portmap");
      WARN("portmap (" << backend << ") ADD: " << kills << " kill points");
      // Each kind was checked against an uninjected ADD's calls of it (in
      // KillEverywhere); this is the floor of what portmap ADD must do.
      CHECK(kills > 15);
    }
  }
}

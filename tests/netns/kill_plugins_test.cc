// The newer plugins killed at every step of ADD (tests/netns/kill_test.cc
// does the same for the bridge, host-local and portmap chain): tap, sbr,
// flannel, host-device and etcd-ipam.
//
// For each kind of system call in KillSyscalls(), an ADD is SIGKILLed at its
// 1st, 2nd, ... call of that kind until one runs to its end (support/
// kill_inject.h). After each, the test does what a runtime does after a
// failed ADD: DEL of everything the attachment has, without prevResult; then
// nothing may be left (links, addresses, routes, rules, firewall rules,
// files, reservations, a moved device's name and alias). At the end a fresh
// ADD and DEL must work: the node is not wedged.
#include <sys/mount.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cni/base/json.h"
#include "support/cni_call.h"
#include "support/etcd_cluster.h"
#include "support/kill_inject.h"
#include "support/netns_fixture.h"
#include "support/netns_tools.h"
#include "support/run.h"

namespace {

using cni::Json;
using namespace cni::test;  // NOLINT: test brevity

constexpr const char* kContainer = "ctr-kill";

// One plugin's scene: what its ADD needs, what a runtime's DEL does after it
// and what an attachment could leave behind.
struct Scene {
  std::string plugin;
  // Runs before each ADD (sbr: the bridge ADD it is chained after); returns
  // the ADD's configuration.
  std::function<std::string()> prepare;
  // The runtime's DEL of the whole attachment (no prevResult), each call
  // REQUIREd to succeed.
  std::function<void()> del;
  // Everything the attachment could have left, one line each; empty when clean.
  std::function<std::vector<std::string>()> leftovers;
  // The kinds of system call killed at: all of KillSyscalls() unless set.
  std::vector<std::string> kinds = {};
};

// The names under `dir` (recursively) of files that mark a temporary or the
// container's state.
std::vector<std::string> StateFiles(const std::string& dir) {
  std::vector<std::string> found;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_directory()) continue;
    const std::string name = it->path().filename().string();
    if (absl::EndsWith(name, "~") || absl::StrContains(name, ".tmp") || absl::StrContains(name, kContainer)) {
      found.push_back("file " + it->path().string());
    }
  }
  return found;
}

// Links of `netns` ("" the host) other than lo and `shared`.
std::vector<std::string> ExtraLinks(const NetnsFixture& fx, const std::string& netns,
                                    const std::vector<std::string>& shared = {}) {
  std::vector<std::string> out;
  for (const std::string& link : fx.Links(netns)) {
    if (link == "lo" || std::find(shared.begin(), shared.end(), link) != shared.end()) continue;
    out.push_back(absl::StrCat(netns.empty() ? "host" : netns, " link ", link));
  }
  return out;
}

// Policy rules of `netns` other than the kernel's three defaults, and routes
// outside the main and local tables, both families.
std::vector<std::string> ExtraRulesAndRoutes(const NetnsFixture& fx, const std::string& netns) {
  std::vector<std::string> out;
  for (const char* family : {"-4", "-6"}) {
    for (absl::string_view line : absl::StrSplit(fx.Exec(netns, {"ip", family, "rule"}).out, '\n', absl::SkipEmpty())) {
      if (absl::StartsWith(line, "0:") || absl::StartsWith(line, "32766:") || absl::StartsWith(line, "32767:")) {
        continue;
      }
      out.push_back(absl::StrCat("rule ", line));
    }
    std::string routes = fx.Exec(netns, {"ip", family, "route", "show", "table", "all"}).out;
    for (absl::string_view line : absl::StrSplit(routes, '\n', absl::SkipEmpty())) {
      if (!absl::StrContains(line, "table ") || absl::StrContains(line, "table local")) continue;
      out.push_back(absl::StrCat("route ", line));
    }
  }
  return out;
}

// Firewall rules (nftables and iptables) naming the container.
std::vector<std::string> FirewallRules(const NetnsFixture& fx) {
  std::string rules = fx.Exec("", {"nft", "list", "ruleset"}).out + fx.Exec("", {"iptables-save"}).out;
  if (!absl::StrContains(rules, kContainer)) return {};
  return {"firewall: " + rules};
}

void Append(std::vector<std::string>& to, const std::vector<std::string>& more) {
  to.insert(to.end(), more.begin(), more.end());
}

// Kills the scene's ADD at every call of every kind; returns the kill count.
int KillEverywhere(const Scene& scene, const std::string& netns) {
  int kills = 0;
  std::map<std::string, int> kills_at;  // per kind of call
  auto call = [&](const std::string& conf) {
    return AddCall{.plugin = scene.plugin, .conf = conf, .netns = netns, .container_id = kContainer};
  };
  // The scene works when nothing is killed (else every kill point below
  // would wait for an ADD that cannot finish).
  MustSucceed(CallPlugin(scene.plugin, "ADD", scene.prepare(), netns, kContainer), "ADD before the kills");
  scene.del();
  const std::vector<std::string>& kinds = scene.kinds.empty() ? KillSyscalls() : scene.kinds;
  for (const std::string& syscall : kinds) {
    bool finished = false;
    for (int nth = 1; nth <= 400 && !finished; ++nth) {
      RunResult run = AddKilledAt(call(scene.prepare()), syscall, nth);
      INFO(scene.plugin << " killed at " << syscall << " #" << nth << ": " << Describe(run));
      finished = run.exit_code == 0;
      if (finished) {
        // What a whole attachment leaves before its DEL: the check below sees it.
        CHECK(!scene.leftovers().empty());
      } else {
        ++kills;
        ++kills_at[syscall];
        // Killed itself, or failed (and rolled back) with a CNI error because
        // a process it ran (its IPAM or delegate) was killed.
        const bool child_killed = run.exit_code == 1 && ErrorCode(run) > 0;
        CHECK((run.exit_code == 128 + 9 || child_killed));
      }
      scene.del();
      const std::vector<std::string> left = scene.leftovers();
      INFO("then DEL left:\n" << absl::StrJoin(left, "\n"));
      CHECK(left.empty());
      if (!left.empty()) return kills;  // one report is enough
    }
    INFO(syscall);
    CHECK(finished);  // the ADD ran to its end once N passed its last call
  }
  // The injection reached every kill point an uninjected ADD offers.
  std::map<std::string, int> points = KillPointsOfAdd(call(scene.prepare()));
  scene.del();
  for (const std::string& syscall : kinds) {
    INFO(scene.plugin << ": " << syscall << ": " << points[syscall] << " kill points, " << kills_at[syscall]
                      << " kills");
    CHECK(kills_at[syscall] >= points[syscall]);
  }
  // And the node still works: a whole ADD, then a DEL that leaves nothing.
  MustSucceed(CallPlugin(scene.plugin, "ADD", scene.prepare(), netns, kContainer), "ADD after the kills");
  CHECK(!scene.leftovers().empty());
  scene.del();
  const std::vector<std::string> left = scene.leftovers();
  INFO(absl::StrJoin(left, "\n"));
  CHECK(left.empty());
  return kills;
}

// Runs `scene` and reports its kill count and time.
void RunScene(const Scene& scene, const std::string& netns, int at_least) {
  const auto start = std::chrono::steady_clock::now();
  const int kills = KillEverywhere(scene, netns);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
  WARN(scene.plugin << " ADD: " << kills << " kill points, " << ms << " ms");
  CHECK(kills >= at_least);
}

// An ADD killed while its link is under the temporary name (the first
// netlink request, counting up, after which the container has a link that is
// not lo or eth0) and followed by no DEL (the runtime died too): the next ADD
// of the attachment still works, and its DEL leaves nothing, not even what
// the killed one made.
void KilledThenAddedAgain(const NetnsFixture& fx, const Scene& scene, const std::string& netns) {
  const AddCall call{.plugin = scene.plugin, .conf = scene.prepare(), .netns = netns, .container_id = kContainer};
  bool left_temporary = false;
  for (int nth = 1; nth <= 40 && !left_temporary; ++nth) {
    RunResult killed = AddKilledAt(call, "sendto", nth);
    REQUIRE(killed.exit_code == 128 + 9);
    for (const std::string& link : fx.Links(netns)) left_temporary |= link != "lo" && link != "eth0";
    if (!left_temporary) scene.del();
  }
  REQUIRE(left_temporary);
  MustSucceed(CallPlugin(scene.plugin, "ADD", scene.prepare(), netns, kContainer), "ADD after the kill");
  scene.del();
  const std::vector<std::string> left = scene.leftovers();
  INFO(absl::StrJoin(left, "\n"));
  CHECK(left.empty());
}

void Del(const std::string& plugin, const std::string& conf, const std::string& netns) {
  MustSucceed(CallPlugin(plugin, "DEL", conf, netns, kContainer), plugin + " DEL");
}

}  // namespace

TEST_CASE("kill: tap with host-local killed at every step of ADD, then DEL leaves nothing", "[netns][kill]") {
  NetnsFixture fx;
  TempDir ipam_dir;
  const std::string netns = fx.AddNetns("killed");
  const std::string conf = Json{{"cniVersion", "1.1.0"}, {"name", "tapnet"}, {"type", "tap"}, {"mtu", 1400},
                                {"mac", "02:00:00:00:7a:01"},
                                {"ipam", HostLocalIpam(ipam_dir, {"10.71.0.0/24"}, nullptr)}}
                               .dump();
  Scene scene{.plugin = "tap",
              .prepare = [&] { return conf; },
              .del = [&] { Del("tap", conf, netns); },
              .leftovers = [&] {
                std::vector<std::string> left = ExtraLinks(fx, netns);
                for (const std::string& ip : Reservations(ipam_dir)) left.push_back("reservation " + ip);
                Append(left, StateFiles(ipam_dir.str()));
                Append(left, StateFiles("/run/cni"));
                return left;
              }};
  RunScene(scene, netns, 20);
  KilledThenAddedAgain(fx, scene, netns);
}

TEST_CASE("kill: sbr after bridge killed at every step of ADD, then DEL leaves nothing", "[netns][kill]") {
  NetnsFixture fx;
  TempDir ipam_dir;
  const std::string netns = fx.AddNetns("killed");
  Json bridge = {{"cniVersion", "1.1.0"}, {"name", "sbrnet"}, {"type", "bridge"}, {"bridge", "sbr0"},
                 {"isGateway", true},
                 {"ipam", HostLocalIpam(ipam_dir, {"10.72.0.0/24", "fd72::/64"},
                                        Json::array({{{"dst", "0.0.0.0/0"}}, {{"dst", "::/0"}}}))}};
  const std::string bridge_conf = bridge.dump();
  auto sbr_conf = [](const Json& prev) {
    return Json{{"cniVersion", "1.1.0"}, {"name", "sbrnet"}, {"type", "sbr"}, {"prevResult", prev}}.dump();
  };
  Scene scene{
      .plugin = "sbr",
      .prepare = [&] {
        RunResult add = CallPlugin("bridge", "ADD", bridge_conf, netns, kContainer);
        MustSucceed(add, "bridge ADD");
        return sbr_conf(Json::parse(add.out));
      },
      .del =
          [&] {
            // As a runtime DELs a chain: last first, without prevResult.
            Del("sbr", sbr_conf(Json()), netns);
            Del("bridge", bridge_conf, netns);
          },
      .leftovers = [&] {
        std::vector<std::string> left = ExtraLinks(fx, netns);
        Append(left, ExtraLinks(fx, "", {"sbr0"}));
        Append(left, ExtraRulesAndRoutes(fx, netns));
        for (const std::string& ip : Reservations(ipam_dir)) left.push_back("reservation " + ip);
        Append(left, StateFiles(ipam_dir.str()));
        Append(left, StateFiles("/run/cni"));
        return left;
      }};
  // A whole attachment shows in leftovers() through its link; sbr's own
  // rules and routes must show too, or the check could not see them leak.
  MustSucceed(CallPlugin("sbr", "ADD", scene.prepare(), netns, kContainer), "sbr ADD");
  CHECK(ExtraRulesAndRoutes(fx, netns).size() >= 4);  // a rule and a table route per family
  scene.del();
  REQUIRE(scene.leftovers().empty());
  RunScene(scene, netns, 20);
}

TEST_CASE("kill: flannel delegating to bridge killed at every step of ADD, then DEL leaves nothing",
          "[netns][kill]") {
  NetnsFixture fx;
  TempDir dir;
  const std::string netns = fx.AddNetns("killed");
  const std::string subnet_file = dir.str() + "/subnet.env";
  std::ofstream(subnet_file) << "FLANNEL_NETWORK=10.73.0.0/16\nFLANNEL_SUBNET=10.73.5.1/24\n"
                                "FLANNEL_MTU=1450\nFLANNEL_IPMASQ=false\n";
  const std::string data_dir = dir.str() + "/flannel";
  const std::string ipam_dir = dir.str() + "/ipam";
  // FLANNEL_IPMASQ=false: the bridge masquerades, so firewall rules are made too.
  const std::string conf = Json{{"cniVersion", "1.0.0"}, {"name", "cbr0"}, {"type", "flannel"},
                                {"subnetFile", subnet_file}, {"dataDir", data_dir},
                                {"delegate", {{"bridge", "fl0"}}}, {"ipam", {{"dataDir", ipam_dir}}}}
                               .dump();
  Scene scene{.plugin = "flannel",
              .prepare = [&] { return conf; },
              .del = [&] { Del("flannel", conf, netns); },
              .leftovers = [&] {
                std::vector<std::string> left = ExtraLinks(fx, netns);
                Append(left, ExtraLinks(fx, "", {"fl0"}));
                Append(left, FirewallRules(fx));
                Append(left, StateFiles(data_dir));
                Append(left, StateFiles(ipam_dir));
                Append(left, StateFiles("/run/cni"));
                return left;
              }};
  RunScene(scene, netns, 30);
}

TEST_CASE("kill: host-device killed at every step of ADD, then DEL gives the device back as it was",
          "[netns][kill]") {
  NetnsFixture fx;
  TempDir ipam_dir;
  const std::string netns = fx.AddNetns("killed");
  MustExec(fx, "", {"ip", "link", "add", "hd0", "type", "veth", "peer", "name", "hd0p"});
  const std::string conf = Json{{"cniVersion", "1.1.0"}, {"name", "hdnet"}, {"type", "host-device"},
                                {"device", "hd0"}, {"ipam", HostLocalIpam(ipam_dir, {"10.74.0.0/24"}, nullptr)}}
                               .dump();
  Scene scene{.plugin = "host-device",
              .prepare = [&] { return conf; },
              .del = [&] { Del("host-device", conf, netns); },
              .leftovers = [&] {
                std::vector<std::string> left = ExtraLinks(fx, netns);
                Append(left, ExtraLinks(fx, "", {"hd0", "hd0p"}));
                // Back under its name, down (as the kernel moves it), no alias.
                RunResult dev = fx.Exec("", {"ip", "-j", "link", "show", "hd0"});
                if (dev.exit_code != 0) {
                  left.push_back("hd0 is not in the host");
                } else {
                  Json link = Json::parse(dev.out)[0];
                  if (link.contains("ifalias")) left.push_back("hd0 alias " + link["ifalias"].dump());
                  if (link.value("operstate", "") == "UP") left.push_back("hd0 up");
                }
                for (const std::string& ip : Reservations(ipam_dir)) left.push_back("reservation " + ip);
                Append(left, StateFiles(ipam_dir.str()));
                return left;
              }};
  RunScene(scene, netns, 20);
}

TEST_CASE("kill: etcd-ipam killed at every step of ADD, then DEL leaves no reservation", "[netns][kill]") {
  NetnsFixture fx;
  EtcdCluster etcd(1, "127.0.0.1", 23890);
  const std::string prefix = "/cni/ipam/killnet";
  const std::string conf =
      Json{{"cniVersion", "1.1.0"}, {"name", "killnet"}, {"type", "etcd-ipam"},
           {"ipam",
            {{"type", "etcd-ipam"},
             {"ranges", Json::array({Json::array({{{"subnet", "10.75.0.0/24"}}})})},
             {"etcd", {{"endpoints", etcd.Endpoints()}, {"timeout", 5}}}}}}
          .dump();
  const std::string netns = "/run/netns/none";  // IPAM needs no namespace
  Scene scene{.plugin = "etcd-ipam",
              .prepare = [&] { return conf; },
              .del = [&] { Del("etcd-ipam", conf, netns); },
              .leftovers = [&] {
                std::vector<std::string> left;
                for (const auto& [key, value] : etcd.Get(prefix + "/")) {
                  // The range's allocation cursor is the network's, not the attachment's.
                  if (absl::StrContains(key, "/ips/") || absl::StrContains(key, "/attachments/")) {
                    left.push_back(key + " = " + value);
                  }
                }
                return left;
              }};
  RunScene(scene, netns, 20);
}

namespace {

// macvlan, ipvlan and vlan share their steps (sdk sublink.h): each makes its
// link in the container under a temporary name, then renames it. `kinds`:
// as Scene::kinds.
void KillSublink(const std::string& plugin, const std::vector<std::string>& kinds = {}) {
  NetnsFixture fx;
  TempDir ipam_dir;
  const std::string netns = fx.AddNetns("killed");
  MustExec(fx, "", {"ip", "link", "add", "mst0", "type", "veth", "peer", "name", "mst0p"});
  MustExec(fx, "", {"ip", "link", "set", "mst0", "up"});  // a vlan on a master that is down cannot come up
  Json conf = {{"cniVersion", "1.1.0"}, {"name", "subnet"}, {"type", plugin}, {"master", "mst0"},
               {"ipam", HostLocalIpam(ipam_dir, {"10.76.0.0/24"}, nullptr)}};
  if (plugin == "vlan") conf["vlanId"] = 76;
  Scene scene{.plugin = plugin,
              .prepare = [&] { return conf.dump(); },
              .del = [&] { Del(plugin, conf.dump(), netns); },
              .leftovers = [&] {
                std::vector<std::string> left = ExtraLinks(fx, netns);
                Append(left, ExtraLinks(fx, "", {"mst0", "mst0p"}));
                for (const std::string& ip : Reservations(ipam_dir)) left.push_back("reservation " + ip);
                Append(left, StateFiles(ipam_dir.str()));
                return left;
              },
              .kinds = kinds};
  RunScene(scene, netns, kinds.empty() ? 20 : 10);
  KilledThenAddedAgain(fx, scene, netns);
}

}  // namespace

TEST_CASE("kill: macvlan killed at every step of ADD, then DEL leaves nothing", "[netns][kill]") {
  KillSublink("macvlan");
}

// ipvlan and vlan need a kernel with both (the VM tier's guest, emulated:
// slow). Only their netlink steps are killed: every other kind of call is
// host-local's or the shared steps', which the macvlan case covers.
TEST_CASE("kill: ipvlan and vlan killed at every netlink step of ADD, then DEL leaves nothing", "[vm][kill]") {
  for (const std::string plugin : {"ipvlan", "vlan"}) {
    DYNAMIC_SECTION(plugin) { KillSublink(plugin, {"sendto", "recvfrom"}); }
  }
}

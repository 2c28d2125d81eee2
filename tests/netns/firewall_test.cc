// The firewall plugin through the CNI protocol, against the kernel of a
// private host namespace, iptables and nftables backends. Layout for the
// traffic tests:
//
//   host bridge cnia (10.61.0.1/24): containers a1, a2   network "neta"
//   host bridge cnib (10.62.0.1/24): container b1        network "netb"
//
// each container attached by bridge (gateway) chained with firewall. With
// iptables, FORWARD's policy is DROP, so only what the firewall plugin lets
// through crosses the host (as on a node whose FORWARD policy is DROP, the
// plugin's reason to exist); bridged frames meet FORWARD too (br_netfilter).
// The firewalld backend is tested against a real firewalld in
// firewalld_test.cc.
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "cni/base/json.h"
#include "support/cni_call.h"
#include "support/netns_fixture.h"
#include "support/netns_tools.h"
#include "support/run.h"

namespace {

using cni::Json;
using namespace cni::test;  // NOLINT: test brevity

// A prevResult of a bridge ADD: the bridge, the host veth, the container's
// interface and its addresses.
Json PrevResult(const std::vector<std::string>& addresses, const std::string& bridge = "cnia") {
  Json ips = Json::array();
  for (const std::string& a : addresses) ips.push_back({{"address", a}, {"interface", 2}});
  return {{"cniVersion", "1.0.0"},
          {"interfaces", Json::array({{{"name", bridge}}, {{"name", "veth0"}}, {{"name", "eth0"}, {"sandbox", "/x"}}})},
          {"ips", ips}};
}

std::string FirewallConf(const Json& keys, const Json& prev, const std::string& version = "1.0.0") {
  return NetConf(version, "neta", "firewall", keys, prev).dump();
}

RunResult Fw(const std::string& command, const std::string& conf, const std::string& id,
             const std::string& dir = "") {
  return CallPlugin("firewall", command, conf, "/var/run/netns/none", id, {.dir = dir});
}

// The filter tables as iptables-save prints them, "-A" lines only.
std::vector<std::string> IptRules(const NetnsFixture& fx, bool v6 = false) {
  std::vector<std::string> out;
  std::string save = fx.Exec("", {v6 ? "ip6tables-save" : "iptables-save", "-t", "filter"}).out;
  for (absl::string_view line : absl::StrSplit(save, '\n')) {
    if (absl::StartsWith(line, "-A ")) out.emplace_back(line);
  }
  return out;
}

// The rules mentioning `what`.
std::vector<std::string> Mentioning(const std::vector<std::string>& rules, const std::string& what) {
  std::vector<std::string> out;
  for (const std::string& r : rules) {
    if (absl::StrContains(r, what)) out.push_back(r);
  }
  return out;
}

const std::vector<std::string> kA2Rules = {
    "-A CNI-FORWARD -d 10.61.0.2/32 -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT",
    "-A CNI-FORWARD -s 10.61.0.2/32 -j ACCEPT",
};

TEST_CASE("firewall: iptables rules are upstream's, chain for chain", "[netns][firewall]") {
  NetnsFixture fx;
  Json prev = PrevResult({"10.61.0.2/24", "fd00:61::2/64"});
  std::string conf = FirewallConf({{"backend", "iptables"}}, prev);
  RunResult add = Fw("ADD", conf, "c1");
  MustSucceed(add, "ADD");
  // ADD passes prevResult through.
  CHECK(Json::parse(add.out)["ips"].size() == 2);
  std::vector<std::string> v4 = IptRules(fx);
  CHECK(v4 == std::vector<std::string>{
                  "-A FORWARD -m comment --comment \"CNI firewall plugin rules\" -j CNI-FORWARD",
                  "-A CNI-FORWARD -m comment --comment \"CNI firewall plugin admin overrides\" -j CNI-ADMIN",
                  kA2Rules[0], kA2Rules[1]});
  CHECK(Mentioning(IptRules(fx, true), "fd00:61::2/128").size() == 2);
  MustSucceed(Fw("CHECK", conf, "c1"), "CHECK");
  // A repeated ADD adds nothing twice.
  MustSucceed(Fw("ADD", conf, "c1"), "ADD again");
  CHECK(IptRules(fx) == v4);
  // The admin chain belongs to the administrator: kept, never flushed.
  REQUIRE(fx.Exec("", {"iptables", "-A", "CNI-ADMIN", "-s", "192.0.2.9", "-j", "DROP"}).exit_code == 0);
  MustSucceed(Fw("DEL", conf, "c1"), "DEL");
  CHECK(Mentioning(IptRules(fx), "10.61.0.2").empty());
  CHECK(Mentioning(IptRules(fx, true), "fd00:61::2").empty());
  CHECK(Mentioning(IptRules(fx), "CNI-ADMIN -s 192.0.2.9/32 -j DROP").size() == 1);
  // DEL again, and DEL without prevResult: nothing to do, success.
  MustSucceed(Fw("DEL", conf, "c1"), "DEL again");
  MustSucceed(Fw("DEL", FirewallConf({{"backend", "iptables"}}, nullptr), "c1"), "DEL without prevResult");
  // CHECK notices a rule removed behind the plugin's back.
  MustSucceed(Fw("ADD", conf, "c1"));
  REQUIRE(fx.Exec("", {"iptables", "-D", "CNI-FORWARD", "-s", "10.61.0.2/32", "-j", "ACCEPT"}).exit_code == 0);
  RunResult check = Fw("CHECK", conf, "c1");
  CHECK(check.exit_code != 0);
  CHECK(absl::StrContains(ErrorMessage(check), "-s 10.61.0.2/32 -j ACCEPT"));
  MustSucceed(Fw("DEL", conf, "c1"));
  CHECK(fx.Leftovers().empty());
}

TEST_CASE("firewall: ours and upstream's plugin remove each other's rules", "[netns][firewall]") {
  NetnsFixture fx;
  // A first container sets up the shared chains: later ADDs take the
  // netlink path, whose rules upstream's iptables must recognise.
  std::string first = FirewallConf({{"backend", "iptables"}}, PrevResult({"10.61.0.9/24"}));
  MustSucceed(Fw("ADD", first, "c0"));
  std::string conf = FirewallConf({{"backend", "iptables"}}, PrevResult({"10.61.0.2/24", "fd00:61::2/64"}));

  SECTION("ours ADD, upstream CHECK and DEL") {
    MustSucceed(Fw("ADD", conf, "c1"), "our ADD");
    // The rules as iptables-nft itself reads them back: -C compares every
    // match's options, so a wrong encoding fails here.
    CHECK(fx.Exec("", {"iptables", "-C", "CNI-FORWARD", "-d", "10.61.0.2/32", "-m", "conntrack", "--ctstate",
                       "RELATED,ESTABLISHED", "-j", "ACCEPT"})
              .exit_code == 0);
    MustSucceed(Fw("CHECK", conf, "c1", kUpstreamDir), "upstream CHECK");
    MustSucceed(Fw("DEL", conf, "c1", kUpstreamDir), "upstream DEL");
  }
  SECTION("upstream ADD, ours CHECK and DEL") {
    MustSucceed(Fw("ADD", conf, "c1", kUpstreamDir), "upstream ADD");
    MustSucceed(Fw("CHECK", conf, "c1"), "our CHECK");
    MustSucceed(Fw("DEL", conf, "c1"), "our DEL");
  }
  CHECK(Mentioning(IptRules(fx), "10.61.0.2/").empty());
  CHECK(Mentioning(IptRules(fx, true), "fd00:61::2/").empty());
  CHECK(Mentioning(IptRules(fx), "10.61.0.9/").size() == 2);
  MustSucceed(Fw("DEL", first, "c0"));
  // Upstream's DEL cannot know our handle records: the runtime's next GC
  // drops the one it left.
  Json gc = NetConf("1.1.0", "neta", "firewall", {{"backend", "iptables"}});
  gc["cni.dev/valid-attachments"] = Json::array();
  MustSucceed(CallPlugin("firewall", "GC", gc.dump(), "", "", {.ifname = ""}), "GC");
  INFO(absl::StrJoin(fx.Leftovers(), ", "));
  CHECK(fx.Leftovers().empty());
}

TEST_CASE("firewall: rules written over netlink read back as iptables-restore writes them", "[netns][firewall]") {
  NetnsFixture fx;
  MustSucceed(Fw("ADD", FirewallConf({{"backend", "iptables"}}, PrevResult({"10.61.0.9/24"})), "c0"));
  MustSucceed(Fw("ADD", FirewallConf({{"backend", "iptables"}}, PrevResult({"10.61.0.2/24"})), "c1"));
  MustSucceed(Fw("ADD", FirewallConf({{"backend", "iptables"}}, PrevResult({"10.61.0.3/24"})), "c2", kUpstreamDir));
  // nft's view of the expressions, one block per rule, with the handles and
  // addresses taken out: ours (c1, netlink) and upstream's (c2) must match.
  std::string debug = fx.Exec("", {"nft", "--debug=netlink", "list", "chain", "ip", "filter", "CNI-FORWARD"}).out;
  std::vector<std::string> blocks;
  for (absl::string_view block : absl::StrSplit(debug, "\n\n")) {
    if (!absl::StartsWith(block, "ip filter CNI-FORWARD")) continue;
    std::string b(block.substr(block.find('\n')));
    blocks.push_back(b);
  }
  // jump to admin, then two rules each for c0, c1, c2.
  REQUIRE(blocks.size() == 7);
  auto same_but_address = [](std::string a, std::string b) {
    return absl::StrReplaceAll(a, {{"0x02003d0a", "ADDR"}}) == absl::StrReplaceAll(b, {{"0x03003d0a", "ADDR"}});
  };
  CHECK(same_but_address(blocks[3], blocks[5]));
  CHECK(same_but_address(blocks[4], blocks[6]));
  INFO(debug);
  CHECK(Mentioning(IptRules(fx), "10.61.0.2/32") == kA2Rules);
}

// The two networks of the traffic tests, every container attached with
// bridge + firewall under `policy` through `backend`.
struct TwoBridges {
  NetnsFixture& fx;
  std::string backend;
  std::string policy;
  TempDir ipam_a, ipam_b;
  std::string a1, a2, b1;

  std::string BridgeConf(const std::string& net, const std::string& bridge, const std::string& subnet,
                         const TempDir& dir) {
    Json routes = Json::array({{{"dst", "0.0.0.0/0"}}});
    return NetConf("1.0.0", net, "bridge", {{"bridge", bridge}, {"isGateway", true}, {"ipam", HostLocalIpam(dir, {subnet}, routes)}})
        .dump();
  }
  std::string FwConf(const std::string& net, const std::string& bridge_out) {
    Json c = NetConf("1.0.0", net, "firewall", {{"backend", backend}, {"ingressPolicy", policy}});
    return WithPrevResult(c.dump(), bridge_out);
  }
  void Attach(const std::string& ns, const std::string& id, const std::string& net, const std::string& bridge,
              const std::string& subnet, const TempDir& dir) {
    RunResult br = CallPlugin("bridge", "ADD", BridgeConf(net, bridge, subnet, dir), ns, id);
    MustSucceed(br, "bridge ADD");
    MustSucceed(CallPlugin("firewall", "ADD", FwConf(net, br.out), ns, id), "firewall ADD");
    added.push_back({ns, id, net, bridge, subnet, br.out});
  }
  struct Added {
    std::string ns, id, net, bridge, subnet, bridge_out;
  };
  std::vector<Added> added;

  TwoBridges(NetnsFixture& f, std::string be, std::string pol) : fx(f), backend(std::move(be)), policy(std::move(pol)) {
    REQUIRE(fx.Exec("", {"sysctl", "-qw", "net.ipv4.ip_forward=1"}).exit_code == 0);
    if (backend == "iptables") REQUIRE(fx.Exec("", {"iptables", "-P", "FORWARD", "DROP"}).exit_code == 0);
    a1 = fx.AddNetns("a1");
    a2 = fx.AddNetns("a2");
    b1 = fx.AddNetns("b1");
    Attach(a1, "a1", "neta", "cnia", "10.61.0.0/24", ipam_a);
    Attach(a2, "a2", "neta", "cnia", "10.61.0.0/24", ipam_a);
    Attach(b1, "b1", "netb", "cnib", "10.62.0.0/24", ipam_b);
  }
  // DEL in reverse order, firewall first, as a runtime does.
  void Detach() {
    for (auto it = added.rbegin(); it != added.rend(); ++it) {
      MustSucceed(CallPlugin("firewall", "DEL", FwConf(it->net, it->bridge_out), it->ns, it->id), "firewall DEL");
      MustSucceed(CallPlugin("bridge", "DEL", BridgeConf(it->net, it->bridge, it->subnet, it->net == "neta" ? ipam_a : ipam_b),
                             it->ns, it->id),
                  "bridge DEL");
      fx.DelNetns(it->ns);
    }
    added.clear();
    // Bridges outlive their containers (bridge DEL keeps them).
    for (const char* bridge : {"cnia", "cnib"}) fx.Exec("", {"ip", "link", "del", bridge});
  }
};

// What a test leaves besides the isolation records: the ingress policy's
// per-bridge rules are shared and stay after the last container (as
// upstream's do), and so does their record (/run/cni/firewall/isolation).
std::vector<std::string> LeftoversButIsolation(const NetnsFixture& fx) {
  std::vector<std::string> out;
  for (const std::string& l : fx.Leftovers()) {
    if (!absl::StrContains(l, "/run/cni/firewall/isolation/")) out.push_back(l);
  }
  return out;
}

bool Reach(const std::string& from, const char* to) {
  return Ping(from, *cni::net::IpAddress::Parse(to), 1500);
}

TEST_CASE("firewall: ingress policies decide who reaches whom", "[netns][firewall]") {
  // Host-local hands out .2 then .3: a1 10.61.0.2, a2 10.61.0.3, b1 10.62.0.2.
  const char* a2_ip = "10.61.0.3";
  const char* b1_ip = "10.62.0.2";
  const char* a1_ip = "10.61.0.2";
  for (const std::string backend : {"iptables", "nftables"}) {
    DYNAMIC_SECTION(backend) {
      SECTION("open: everyone reaches everyone") {
        NetnsFixture fx;
        TwoBridges t(fx, backend, "open");
        CHECK(Reach(t.a1, a2_ip));
        CHECK(Reach(t.a1, b1_ip));
        CHECK(Reach(t.b1, a1_ip));
        CHECK(Reach(t.a1, "10.61.0.1"));
        t.Detach();
        CHECK(LeftoversButIsolation(fx).empty());
      }
      SECTION("same-bridge: neighbours and the host only") {
        NetnsFixture fx;
        TwoBridges t(fx, backend, "same-bridge");
        CHECK(Reach(t.a1, a2_ip));
        CHECK_FALSE(Reach(t.a1, b1_ip));
        CHECK_FALSE(Reach(t.b1, a1_ip));
        CHECK(Reach(t.a1, "10.61.0.1"));
        CHECK(Reach(t.b1, "10.62.0.1"));
        t.Detach();
        CHECK(LeftoversButIsolation(fx).empty());
      }
      SECTION("isolated: the host only") {
        NetnsFixture fx;
        TwoBridges t(fx, backend, "isolated");
        CHECK_FALSE(Reach(t.a1, a2_ip));
        CHECK_FALSE(Reach(t.a1, b1_ip));
        CHECK_FALSE(Reach(t.b1, a1_ip));
        CHECK(Reach(t.a1, "10.61.0.1"));
        t.Detach();
        CHECK(LeftoversButIsolation(fx).empty());
      }
    }
  }
}

TEST_CASE("firewall: without the plugin's rules FORWARD's DROP policy holds", "[netns][firewall]") {
  // The control for the test above: the same layout, the firewall rules of
  // both ends removed behind the containers' backs, cuts them apart (either
  // end's rules alone let a flow through: its own packets, and the replies).
  NetnsFixture fx;
  TwoBridges t(fx, "iptables", "open");
  REQUIRE(Reach(t.a1, "10.62.0.2"));
  for (const TwoBridges::Added& a : t.added) {
    if (a.id == "a2") continue;
    MustSucceed(CallPlugin("firewall", "DEL", t.FwConf(a.net, a.bridge_out), a.ns, a.id));
  }
  CHECK_FALSE(Reach(t.a1, "10.62.0.2"));
  CHECK(Reach(t.a1, "10.61.0.1"));  // the host is not behind FORWARD
  const TwoBridges::Added& a1 = t.added.front();
  MustSucceed(CallPlugin("firewall", "ADD", t.FwConf(a1.net, a1.bridge_out), a1.ns, a1.id));
  CHECK(Reach(t.a1, "10.62.0.2"));
  t.Detach();
}

TEST_CASE("firewall: iptables isolation chains are upstream's", "[netns][firewall]") {
  NetnsFixture fx;
  MustExec(fx, "", {"ip", "link", "add", "cnia", "type", "bridge"});  // an ingress policy needs the bridge
  Json keys = {{"backend", "iptables"}, {"ingressPolicy", "isolated"}};
  std::string conf = FirewallConf(keys, PrevResult({"10.61.0.2/24"}));
  MustSucceed(Fw("ADD", conf, "c1"));
  MustSucceed(Fw("ADD", FirewallConf(keys, PrevResult({"10.61.0.3/24"})), "c2"));  // the recorded way
  const std::string shared = "\"CNI firewall plugin rules (ingressPolicy: same-bridge|isolated)\"";
  const std::string policy = "\"CNI firewall plugin rules (ingressPolicy: isolated)\"";
  std::vector<std::string> rules = IptRules(fx);
  CHECK(Mentioning(rules, "STAGE-1") ==
        std::vector<std::string>{
            "-A FORWARD -m comment --comment " + shared + " -j CNI-ISOLATION-STAGE-1",
            "-A CNI-ISOLATION-STAGE-1 -i cnia -o cnia -m comment --comment " + policy + " -j DROP",
            "-A CNI-ISOLATION-STAGE-1 -i cnia ! -o cnia -m comment --comment " + policy + " -j CNI-ISOLATION-STAGE-2",
            "-A CNI-ISOLATION-STAGE-1 -m comment --comment " + shared + " -j RETURN",
        });
  CHECK(Mentioning(rules, "-A CNI-ISOLATION-STAGE-2") ==
        std::vector<std::string>{"-A CNI-ISOLATION-STAGE-2 -o cnia -m comment --comment " + shared + " -j DROP",
                                 "-A CNI-ISOLATION-STAGE-2 -m comment --comment " + shared + " -j RETURN"});
  // The isolation jump comes before the firewall's own.
  CHECK(absl::StrContains(rules[0], "CNI-ISOLATION-STAGE-1"));
  CHECK(absl::StrContains(rules[1], "-j CNI-FORWARD"));
  // A third ADD (recorded way again) and upstream's plugin (1.1.1 knows
  // same-bridge only), on the same bridge, add nothing twice.
  MustSucceed(Fw("ADD", FirewallConf(keys, PrevResult({"10.61.0.4/24"})), "c3"));
  CHECK(IptRules(fx).size() == rules.size() + 2);
  MustSucceed(Fw("DEL", conf, "c1"));
}

TEST_CASE("firewall: nftables backend, records, repeated ADD, DEL and GC", "[netns][firewall]") {
  NetnsFixture fx;
  Json keys = {{"backend", "nftables"}};
  std::string c1 = FirewallConf(keys, PrevResult({"10.61.0.2/24", "fd00:61::2/64"}));
  std::string c2 = FirewallConf(keys, PrevResult({"10.61.0.3/24"}));
  auto rules_of = [&](const std::string& id) {
    std::string list = fx.Exec("", {"nft", "list", "table", "ip", "cni_firewall"}).out +
                       fx.Exec("", {"nft", "list", "table", "ip6", "cni_firewall"}).out;
    return Mentioning(absl::StrSplit(list, '\n'), absl::StrCat(" ", id, " eth0\""));
  };
  MustSucceed(Fw("ADD", c1, "c1"));
  MustSucceed(Fw("ADD", c1, "c1"));  // replaces, does not duplicate
  MustSucceed(Fw("ADD", c2, "c2"));
  CHECK(rules_of("c1").size() == 4);
  CHECK(rules_of("c2").size() == 2);
  MustSucceed(Fw("CHECK", c1, "c1"));
  // GC with only c2 valid: c1's rules go.
  Json gc = NetConf("1.1.0", "neta", "firewall", keys);
  gc["cni.dev/valid-attachments"] = Json::array({{{"containerID", "c2"}, {"ifname", "eth0"}}});
  MustSucceed(CallPlugin("firewall", "GC", gc.dump(), "", "", {.ifname = ""}), "GC");
  CHECK(rules_of("c1").empty());
  CHECK(rules_of("c2").size() == 2);
  CHECK(Fw("CHECK", c1, "c1").exit_code != 0);
  MustSucceed(Fw("DEL", c1, "c1"));
  MustSucceed(Fw("DEL", c2, "c2"));
  MustSucceed(Fw("DEL", c2, "c2"));
  CHECK(rules_of("c2").empty());
  CHECK(fx.Leftovers().empty());
}

TEST_CASE("firewall: iptables GC removes recorded rules of unlisted attachments", "[netns][firewall]") {
  NetnsFixture fx;
  Json keys = {{"backend", "iptables"}};
  MustSucceed(Fw("ADD", FirewallConf(keys, PrevResult({"10.61.0.9/24"})), "c0"));
  MustSucceed(Fw("ADD", FirewallConf(keys, PrevResult({"10.61.0.2/24"})), "c1"));
  MustSucceed(Fw("ADD", FirewallConf(keys, PrevResult({"10.61.0.3/24"})), "c2"));
  Json gc = NetConf("1.1.0", "neta", "firewall", keys);
  gc["cni.dev/valid-attachments"] = Json::array({{{"containerID", "c0"}, {"ifname", "eth0"}},
                                                 {{"containerID", "c2"}, {"ifname", "eth0"}}});
  MustSucceed(CallPlugin("firewall", "GC", gc.dump(), "", "", {.ifname = ""}), "GC");
  CHECK(Mentioning(IptRules(fx), "10.61.0.2/").empty());
  CHECK(Mentioning(IptRules(fx), "10.61.0.3/").size() == 2);
  CHECK(Mentioning(IptRules(fx), "10.61.0.9/").size() == 2);
}

TEST_CASE("firewall: bad input gets the right code and changes nothing", "[netns][firewall]") {
  NetnsFixture fx;
  Json prev = PrevResult({"10.61.0.2/24"});
  struct Case {
    Json keys;
    int code;
    const char* says;
  };
  const std::vector<Case> cases = {
      {{{"backend", "bogus"}}, 7, "backend"},
      {{{"backend", 3}}, 6, "backend"},
      {{{"ingressPolicy", "closed"}}, 7, "ingressPolicy"},
      {{{"iptablesAdminChainName", "bad name"}}, 7, "iptablesAdminChainName"},
      {{{"firewalldZone", "a/b"}}, 7, "firewalldZone"},
  };
  for (const Case& c : cases) {
    RunResult r = Fw("ADD", FirewallConf(c.keys, prev), "c1");
    INFO(c.keys.dump() << " -> " << Describe(r));
    CHECK(ErrorCode(r) == c.code);
    CHECK(absl::StrContains(ErrorMessage(r), c.says));
  }
  // Chained only.
  RunResult orphan = Fw("ADD", FirewallConf({{"backend", "iptables"}}, nullptr), "c1");
  CHECK(ErrorCode(orphan) == 7);
  CHECK(absl::StrContains(ErrorMessage(orphan), "missing prevResult"));
  // An ingress policy needs the bridge.
  Json no_ifaces = prev;
  no_ifaces.erase("interfaces");
  for (Json& ip : no_ifaces["ips"]) ip.erase("interface");
  RunResult nobridge = Fw("ADD", FirewallConf({{"ingressPolicy", "same-bridge"}, {"backend", "iptables"}}, no_ifaces), "c1");
  CHECK(ErrorCode(nobridge) == 7);
  CHECK(absl::StrContains(ErrorMessage(nobridge), "make sure to chain \"firewall\" plugin with \"bridge\""));
  // Below 0.4.0: upstream's range starts there.
  CHECK(ErrorCode(Fw("ADD", FirewallConf({}, prev, "0.3.1"), "c1")) == 1);
  // Nothing was made.
  CHECK(IptRules(fx).empty());
  CHECK(fx.Exec("", {"nft", "list", "ruleset"}).out.empty());
  // DEL reads leniently: a configuration ADD refuses can still be torn down.
  MustSucceed(Fw("DEL", FirewallConf({{"backend", "bogus"}, {"ingressPolicy", "closed"}}, prev), "c1"), "lenient DEL");
}

TEST_CASE("firewall: a failed ADD takes its rules back", "[netns][firewall]") {
  NetnsFixture fx;
  MustExec(fx, "", {"ip", "link", "add", "cnia", "type", "bridge"});
  // The ingress policy fails after the address rules went in (they must go
  // again): a chain of the isolation stages jumps back to stage 1 already,
  // so stage 1's jump to stage 2 would close a loop, which the kernel
  // refuses.
  MustExecLines(fx, "", "iptables -N CNI-ISOLATION-STAGE-1\n"
                        "iptables -N CNI-ISOLATION-STAGE-2\n"
                        "iptables -A CNI-ISOLATION-STAGE-2 -j CNI-ISOLATION-STAGE-1\n"
                        "nft add table ip cni_firewall\n"
                        "nft add chain ip cni_firewall forward { type filter hook forward priority 0 ; }\n"
                        "nft add chain ip cni_firewall admin\n"
                        "nft add chain ip cni_firewall isolation_stage_1\n"
                        "nft add chain ip cni_firewall isolation_stage_2\n"
                        "nft add chain ip cni_firewall cni_forward\n"
                        "nft add rule ip cni_firewall forward jump isolation_stage_1\n"
                        "nft add rule ip cni_firewall forward jump cni_forward\n"
                        "nft add rule ip cni_firewall isolation_stage_2 jump isolation_stage_1\n");
  Json prev = PrevResult({"10.61.0.2/24"});
  for (const std::string backend : {"iptables", "nftables"}) {
    RunResult r = Fw("ADD", FirewallConf({{"backend", backend}, {"ingressPolicy", "same-bridge"}}, prev), "c1");
    INFO(backend << ": " << Describe(r));
    CHECK(r.exit_code != 0);
    CHECK(Mentioning(IptRules(fx), "10.61.0.2").empty());
    CHECK(!absl::StrContains(fx.Exec("", {"nft", "list", "table", "ip", "cni_firewall"}).out, "10.61.0.2"));
  }
  MustExecLines(fx, "", "nft delete table ip cni_firewall\n"
                        "iptables -F CNI-ISOLATION-STAGE-2\n"
                        "iptables -X CNI-ISOLATION-STAGE-2\n"
                        "iptables -X CNI-ISOLATION-STAGE-1\n");
  // A bridge name iptables refuses never gets that far (see the next test).
  RunResult longname = Fw("ADD", FirewallConf({{"backend", "iptables"}, {"ingressPolicy", "same-bridge"}},
                                              PrevResult({"10.61.0.2/24"}, "averyveryverylongbridgename")),
                          "c1");
  CHECK(ErrorCode(longname) == 7);
  CHECK(Mentioning(IptRules(fx), "10.61.0.2").empty());
  MustExec(fx, "", {"ip", "link", "del", "cnia"});
  INFO(absl::StrJoin(fx.Leftovers(), ", "));
  CHECK(fx.Leftovers().empty());
}

TEST_CASE("firewall: an ingress policy after ptp (no bridge first) is code 7 and changes nothing",
          "[netns][firewall]") {
  NetnsFixture fx;
  TempDir ipam;
  const std::string ctr = fx.AddNetns("ctr");
  std::string ptp = NetConf("1.0.0", "neta", "ptp", {{"ipam", HostLocalIpam(ipam, {"10.61.0.0/24"})}}).dump();
  RunResult ptp_add = CallPlugin("ptp", "ADD", ptp, ctr, "c1");
  MustSucceed(ptp_add, "ptp ADD");
  // iptables-save's rules and chains, without its dated comments.
  auto ipt_state = [&] {
    std::string out;
    for (const char* save : {"iptables-save", "ip6tables-save"}) {
      for (absl::string_view line : absl::StrSplit(fx.Exec("", {save}).out, '\n')) {
        if (!absl::StartsWith(line, "#")) absl::StrAppend(&out, line, "\n");
      }
    }
    return out;
  };
  const std::string before_ipt = ipt_state();
  const std::string before_nft = fx.Exec("", {"nft", "list", "ruleset"}).out;
  for (const std::string backend : {"iptables", "nftables"}) {
    for (const std::string policy : {"same-bridge", "isolated"}) {
      Json c = NetConf("1.0.0", "neta", "firewall", {{"backend", backend}, {"ingressPolicy", policy}});
      RunResult add = CallPlugin("firewall", "ADD", WithPrevResult(c.dump(), ptp_add.out), ctr, "c1");
      INFO(backend << " " << policy << ": " << Describe(add));
      CHECK(ErrorCode(add) == 7);
      CHECK(absl::StrContains(ErrorMessage(add), "make sure to chain \"firewall\" plugin with \"bridge\""));
      CHECK(absl::StrContains(ErrorMessage(add), "is a veth, not a bridge"));
      // Nothing changed on the host: no rule, no record.
      CHECK(ipt_state() == before_ipt);
      CHECK(fx.Exec("", {"nft", "list", "ruleset"}).out == before_nft);
      CHECK(!std::filesystem::exists("/run/cni/firewall"));
    }
  }
  MustSucceed(CallPlugin("ptp", "DEL", ptp, ctr, "c1"), "ptp DEL");
  fx.DelNetns(ctr);
  INFO(absl::StrJoin(fx.Leftovers(), ", "));
  CHECK(fx.Leftovers().empty());
}

TEST_CASE("firewall: every supported cniVersion", "[netns][firewall]") {
  NetnsFixture fx;
  for (const char* version : {"0.4.0", "1.0.0", "1.1.0"}) {
    INFO(version);
    Json prev = PrevResult({"10.61.0.2/24"});
    prev["cniVersion"] = version;
    if (std::string(version) == "0.4.0") {
      for (Json& ip : prev["ips"]) ip["version"] = "4";
    }
    std::string conf = FirewallConf({{"backend", "iptables"}}, prev, version);
    RunResult add = Fw("ADD", conf, "c1");
    MustSucceed(add, version);
    CHECK(Json::parse(add.out)["cniVersion"] == version);
    MustSucceed(Fw("CHECK", conf, "c1"));
    MustSucceed(Fw("DEL", conf, "c1"));
    CHECK(Mentioning(IptRules(fx), "10.61.0.2").empty());
  }
}

TEST_CASE("firewall: the auto backend is iptables on a host without D-Bus", "[netns][firewall]") {
  NetnsFixture fx;  // its private /run has no system bus socket
  std::string conf = FirewallConf({{"backend", ""}}, PrevResult({"10.61.0.2/24"}));
  MustSucceed(Fw("ADD", conf, "c1"));
  CHECK(Mentioning(IptRules(fx), "10.61.0.2/32") == kA2Rules);
  MustSucceed(CallPlugin("firewall", "STATUS", NetConf("1.1.0", "neta", "firewall", {{"backend", ""}}).dump(), "", "",
                         {.ifname = ""}));
  RunResult status = CallPlugin("firewall", "STATUS", NetConf("1.1.0", "neta", "firewall", {{"backend", "firewalld"}}).dump(),
                                "", "", {.ifname = ""});
  CHECK(ErrorCode(status) == 50);
  MustSucceed(Fw("DEL", conf, "c1"));
}

}  // namespace

namespace {

// GC of network `net` through our plugin with `valid` ({container, ifname}).
void Gc(const std::string& net, const std::string& backend,
        const std::vector<std::pair<std::string, std::string>>& valid) {
  Json gc = NetConf("1.1.0", net, "firewall", {{"backend", backend}});
  gc["cni.dev/valid-attachments"] = Json::array();
  for (const auto& [id, ifname] : valid) {
    gc["cni.dev/valid-attachments"].push_back({{"containerID", id}, {"ifname", ifname}});
  }
  MustSucceed(CallPlugin("firewall", "GC", gc.dump(), "", "", {.ifname = ""}), "GC of " + net);
}

// Every rule line of `backend`'s packet filter (iptables-save's view, or
// nft's) that mentions `what`.
std::vector<std::string> RulesMentioning(const NetnsFixture& fx, const std::string& backend, const std::string& what) {
  std::vector<std::string> out;
  std::string all = backend == "nftables" ? fx.Exec("", {"nft", "list", "ruleset"}).out
                                          : fx.Exec("", {"iptables-save"}).out + fx.Exec("", {"ip6tables-save"}).out;
  for (absl::string_view line : absl::StrSplit(all, '\n')) {
    if (absl::StrContains(line, what)) out.emplace_back(absl::StripAsciiWhitespace(line));
  }
  return out;
}

// The files under /run/cni/firewall whose name holds `what`, with their
// contents.
std::map<std::string, std::string> FilesNamed(const std::string& what) {
  std::map<std::string, std::string> out;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator("/run/cni/firewall", ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_directory() || !absl::StrContains(it->path().filename().string(), what)) continue;
    std::ifstream in(it->path());
    out[it->path().string()] = std::string(std::istreambuf_iterator<char>(in), {});
  }
  return out;
}

}  // namespace

TEST_CASE("firewall: GC of one network leaves another network's rules and records alone", "[netns][firewall]") {
  for (const std::string backend : {"iptables", "nftables"}) {
    DYNAMIC_SECTION(backend) {
      NetnsFixture fx;
      Json keys = {{"backend", backend}};
      auto add = [&](const std::string& net, const std::string& id, const std::string& ifname, const std::string& ip) {
        std::string conf = NetConf("1.0.0", net, "firewall", keys, PrevResult({ip})).dump();
        MustSucceed(CallPlugin("firewall", "ADD", conf, "/var/run/netns/none", id, OnInterface(ifname)), "ADD " + id);
      };
      // Network A: a1, a2, and pod p's eth0; network B: b1, b2, and the
      // same pod's eth1 (one pod on two networks).
      add("neta", "a1", "eth0", "10.61.0.2/24");
      add("neta", "a2", "eth0", "10.61.0.3/24");
      add("neta", "p", "eth0", "10.61.0.4/24");
      add("netb", "b1", "eth0", "10.62.0.2/24");
      add("netb", "b2", "eth0", "10.62.0.3/24");
      add("netb", "p", "eth1", "10.62.0.4/24");
      // A record B's next ADD is writing right now (its temporary file).
      std::map<std::string, std::string> b1_files = FilesNamed("-b1-eth0");
      REQUIRE(!b1_files.empty());
      const std::string in_flight = absl::StrReplaceAll(b1_files.begin()->first, {{"-b1-eth0", "-b3-eth0"}}) + "~";
      { std::ofstream(in_flight) << "{}"; }
      // A rule whose network cannot be told: upstream's (iptables: no owner
      // at all; nftables: a comment of the bare container ID).
      if (backend == "iptables") {
        MustSucceed(Fw("ADD", FirewallConf(keys, PrevResult({"10.61.0.9/24"})), "up1", kUpstreamDir), "upstream ADD");
      } else {
        MustExec(fx, "", {"nft", "add", "rule", "ip", "cni_firewall", "cni_forward", "ip", "saddr", "10.61.0.9",
                          "accept", "comment", "\"up1\""});
      }
      const std::vector<std::string> b_rules = RulesMentioning(fx, backend, "10.62.0.");
      REQUIRE(b_rules.size() == 6);  // two per address
      // B's records (and intents), by name and content.
      auto b_files_now = [] {
        std::map<std::string, std::string> all;
        for (const char* of : {"-b1-eth0", "-b2-eth0", "-p-eth1"}) all.merge(FilesNamed(of));
        return all;
      };
      const std::map<std::string, std::string> b_files = b_files_now();
      REQUIRE(b_files.size() >= 3);
      const std::vector<std::string> unowned = RulesMentioning(fx, backend, "10.61.0.9");
      REQUIRE(!unowned.empty());

      // A partial valid list: a1 and p's eth0 go, a2 stays; B is untouched.
      Gc("neta", backend, {{"a2", "eth0"}, {"p", "eth1"}});
      CHECK(RulesMentioning(fx, backend, "10.61.0.2/").empty());
      CHECK(RulesMentioning(fx, backend, "10.61.0.2 ").empty());
      CHECK(RulesMentioning(fx, backend, "10.61.0.4").empty());
      CHECK(RulesMentioning(fx, backend, "10.61.0.3").size() == 2);
      CHECK(RulesMentioning(fx, backend, "10.62.0.") == b_rules);
      CHECK(b_files_now() == b_files);
      CHECK(std::filesystem::exists(in_flight));
      CHECK(RulesMentioning(fx, backend, "10.61.0.9") == unowned);
      CHECK(FilesNamed("-a1-").empty());
      CHECK(FilesNamed("-p-eth0").empty());

      // An empty one: a2 goes too; B, and the rule of no known network, stay.
      Gc("neta", backend, {});
      CHECK(RulesMentioning(fx, backend, "10.61.0.3").empty());
      CHECK(FilesNamed("-a2-").empty());
      CHECK(RulesMentioning(fx, backend, "10.62.0.") == b_rules);
      CHECK(b_files_now() == b_files);
      CHECK(std::filesystem::exists(in_flight));
      CHECK(RulesMentioning(fx, backend, "10.61.0.9") == unowned);

      // B's own GC with everything valid changes nothing either; then B's DELs.
      Gc("netb", backend, {{"b1", "eth0"}, {"b2", "eth0"}, {"p", "eth1"}});
      CHECK(RulesMentioning(fx, backend, "10.62.0.") == b_rules);
      std::filesystem::remove(in_flight);
      for (const auto& [id, ifname, ip] : std::vector<std::tuple<std::string, std::string, std::string>>{
               {"b1", "eth0", "10.62.0.2/24"}, {"b2", "eth0", "10.62.0.3/24"}, {"p", "eth1", "10.62.0.4/24"}}) {
        std::string conf = NetConf("1.0.0", "netb", "firewall", keys, PrevResult({ip})).dump();
        MustSucceed(CallPlugin("firewall", "DEL", conf, "/var/run/netns/none", id, OnInterface(ifname)), "DEL " + id);
      }
      CHECK(RulesMentioning(fx, backend, "10.62.0.").empty());
    }
  }
}

// The vlan plugin through the CNI protocol. Cases tagged [vm] need 802.1Q
// links (and dummy masters), which this machine's kernel lacks: they run in
// the VM tier's guest. The untagged cases fail before any link is made, or
// probe the kernel, and run everywhere.
#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cni/base/ip.h"
#include "cni/base/json.h"
#include "cni/protocol/types.h"
#include "cni/protocol/version.h"
#include "support/cni_call.h"
#include "support/netns_fixture.h"
#include "support/netns_tools.h"
#include "support/run.h"

namespace {

using cni::Json;
using namespace cni::test;  // NOLINT: test brevity

cni::net::IpAddress Ip(const char* text) { return *cni::net::IpAddress::Parse(text); }

// A vlan network: VLAN `id` on `master`, with `ipam` (left out when null).
std::string VlConf(const std::string& version, const std::string& master, int id, const Json& ipam,
                   const Json& extra = Json::object()) {
  Json conf = NetConf(version, "vlnet", "vlan", {{"master", master}, {"vlanId", id}});
  if (!ipam.is_null()) conf["ipam"] = ipam;
  for (const auto& [k, v] : extra.items()) conf[k] = v;
  return conf.dump();
}

RunResult Call(const std::string& command, const std::string& conf, const std::string& netns,
               const std::string& id, const CallOptions& options = {}) {
  return CallPlugin("vlan", command, conf, netns, id, options);
}

// A veth pair `name` / `name`+"b", both up; the "b" end is a port of bridge br0.
void BridgedVeth(const NetnsFixture& fx, const std::string& name) {
  MustExec(fx, "", {"ip", "link", "add", name, "type", "veth", "peer", "name", name + "b"});
  MustExec(fx, "", {"ip", "link", "set", name + "b", "master", "br0", "up"});
  MustExec(fx, "", {"ip", "link", "set", name, "up"});
}

// The VLAN ID and kind of eth0 in `netns`, as the kernel reports them.
int VlanId(const NetnsFixture& fx, const std::string& netns) {
  Json l = LinkJson(fx, netns, "eth0");
  CHECK(l["linkinfo"].value("info_kind", "") == "vlan");
  CHECK(l["linkinfo"]["info_data"].value("protocol", "") == "802.1Q");
  return l["linkinfo"]["info_data"].value("id", -1);
}

const std::vector<std::string> kOnlyLo = {"lo"};

}  // namespace

// Two masters (veths) and a peer namespace on one bridge: the frames on the
// bridge carry real 802.1Q tags, so VLAN 100 links reach each other and the
// peer's VLAN 100 link, and a VLAN 200 link on the same subnet reaches none.
TEST_CASE("vlan: links with the same VLAN ID reach each other and a peer across a bridge, "
          "every version",
          "[vm][vlan]") {
  const std::string version =
      GENERATE(as<std::string>{}, "0.1.0", "0.2.0", "0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0");
  INFO("cniVersion " << version);
  NetnsFixture fx;
  MustExec(fx, "", {"ip", "link", "add", "br0", "type", "bridge"});
  MustExec(fx, "", {"ip", "link", "set", "br0", "up"});
  BridgedVeth(fx, "mstA");
  BridgedVeth(fx, "mstB");
  BridgedVeth(fx, "pp");
  std::string peer = fx.AddNetns("peer");
  MustExec(fx, "", {"ip", "link", "set", "pp", "netns", "peer"});
  MustExec(fx, peer, {"ip", "link", "set", "pp", "up"});
  MustExec(fx, peer, {"ip", "link", "add", "link", "pp", "name", "pp.100", "type", "vlan", "id", "100"});
  MustExec(fx, peer, {"ip", "addr", "add", "10.46.0.1/24", "dev", "pp.100"});
  MustExec(fx, peer, {"ip", "link", "set", "pp.100", "up"});

  std::string c1 = fx.AddNetns("c1");
  std::string c2 = fx.AddNetns("c2");
  std::string c3 = fx.AddNetns("c3");
  std::string conf1 = VlConf(version, "mstA", 100, StaticIpam("10.46.0.5/24"));
  std::string conf2 = VlConf(version, "mstB", 100, StaticIpam("10.46.0.6/24"));
  std::string conf3 = VlConf(version, "mstA", 200, StaticIpam("10.46.0.7/24"));
  RunResult add1 = Call("ADD", conf1, c1, "ctr1");
  cni::Result r1 = MustResult(add1);
  MustResult(Call("ADD", conf2, c2, "ctr2"));
  MustResult(Call("ADD", conf3, c3, "ctr3"));
  if (cni::VersionAtLeast(version, "0.3.0")) {
    REQUIRE(r1.interfaces.size() == 1);
    CHECK(r1.interfaces[0].name == "eth0");
    CHECK(r1.interfaces[0].sandbox == c1);
    CHECK(r1.ips[0].interface == 0);
    CHECK(LinkJson(fx, c1, "eth0").value("address", "") == r1.interfaces[0].mac);
  }
  CHECK(VlanId(fx, c1) == 100);
  CHECK(VlanId(fx, c3) == 200);
  CHECK(LinkJson(fx, c1, "eth0").value("link_index", 0) == LinkJson(fx, "", "mstA").value("ifindex", -1));
  CHECK(Ping(c1, Ip("10.46.0.6")));
  CHECK(Ping(c2, Ip("10.46.0.5")));
  CHECK(Ping(c1, Ip("10.46.0.1")));
  CHECK(Ping(c2, Ip("10.46.0.1")));
  CHECK_FALSE(Ping(c3, Ip("10.46.0.1"), 500));
  CHECK_FALSE(Ping(c3, Ip("10.46.0.5"), 500));

  // One VLAN ID per master: a second VLAN 100 on mstA is refused, cleanly.
  std::string c4 = fx.AddNetns("c4");
  RunResult dup = Call("ADD", VlConf(version, "mstA", 100, StaticIpam("10.46.0.8/24")), c4, "ctr4");
  CHECK(dup.exit_code != 0);
  CHECK(absl::StrContains(ErrorMessage(dup), "it already has a link that this one would duplicate"));
  CHECK(fx.Links(c4) == kOnlyLo);

  if (cni::VersionAtLeast(version, "0.4.0")) {
    Json check = Json::parse(WithPrevResult(conf1, add1.out));
    MustSucceed(Call("CHECK", check.dump(), c1, "ctr1"));
    check["vlanId"] = 101;
    RunResult bad = Call("CHECK", check.dump(), c1, "ctr1");
    CHECK(bad.exit_code != 0);
    CHECK(absl::StrContains(ErrorMessage(bad), "has VLAN ID 100, the config wants 101"));
  }
  CHECK(fx.Links() == std::vector<std::string>{"br0", "lo", "mstA", "mstAb", "mstB", "mstBb", "ppb"});
  for (auto [conf, ns, id] : {std::tuple{conf1, c1, "ctr1"}, {conf2, c2, "ctr2"}, {conf3, c3, "ctr3"}}) {
    MustSucceed(Call("DEL", conf, ns, id));
    MustSucceed(Call("DEL", conf, ns, id));  // idempotent
    CHECK(fx.Links(ns) == kOnlyLo);
  }
  TearDown(fx, {c1, c2, c3, c4, peer}, {"mstA", "mstB", "ppb", "br0"});
}

TEST_CASE("vlan: MTU, VLAN 0, layer 2 only, IPAM failure rolls the link back", "[vm][vlan]") {
  NetnsFixture fx;
  MustExec(fx, "", {"ip", "link", "add", "mst0", "mtu", "1400", "type", "dummy"});
  MustExec(fx, "", {"ip", "link", "set", "mst0", "up"});
  TempDir data;
  std::string c1 = fx.AddNetns("c1");
  Json ipam = HostLocalIpam(data, {"10.46.0.0/24"}, nullptr);

  SECTION("an MTU below the master's is applied and CHECKed, the address released on DEL") {
    std::string conf = VlConf("1.1.0", "mst0", 7, ipam, {{"mtu", 1300}});
    RunResult add = Call("ADD", conf, c1, "ctr1");
    MustResult(add);
    CHECK(LinkJson(fx, c1, "eth0").value("mtu", 0) == 1300);
    CHECK(VlanId(fx, c1) == 7);
    CHECK(Reservations(data).size() == 1);
    MustSucceed(Call("CHECK", WithPrevResult(conf, add.out), c1, "ctr1"));
    MustExec(fx, c1, {"ip", "link", "set", "eth0", "mtu", "1200"});
    CHECK(absl::StrContains(ErrorMessage(Call("CHECK", WithPrevResult(conf, add.out), c1, "ctr1")),
                            "has MTU 1200, the config wants 1300"));
    MustSucceed(Call("DEL", conf, c1, "ctr1"));
    CHECK(Reservations(data).empty());
  }
  SECTION("VLAN ID 0 and ipam {}: a layer-2-only link, up") {
    std::string conf = VlConf("1.0.0", "mst0", 0, Json::object());
    cni::Result r = MustResult(Call("ADD", conf, c1, "ctr1"));
    CHECK(r.ips.empty());
    CHECK(VlanId(fx, c1) == 0);
    CHECK(LinkJson(fx, c1, "eth0").value("mtu", 0) == 1400);
    CHECK(LinkJson(fx, c1, "eth0").value("flags", Json::array()).dump().find("\"UP\"") != std::string::npos);
    MustSucceed(Call("DEL", conf, c1, "ctr1"));
  }
  SECTION("IPAM failing after the link exists leaves nothing behind") {
    Json bad = {{"type", "host-local"}, {"dataDir", data.str()},
                {"ranges", Json::array({Json::array({{{"subnet", "10.46.0.0/24"},
                                                      {"rangeStart", "10.47.0.9"}}})})}};
    RunResult add = Call("ADD", VlConf("1.0.0", "mst0", 7, bad), c1, "ctr1");
    CHECK(add.exit_code != 0);
  }
  CHECK(Reservations(data).empty());
  CHECK(fx.Links(c1) == kOnlyLo);
  TearDown(fx, {c1}, {"mst0"});
}

TEST_CASE("vlan: the master in the container (linkInContainer), DEL after the namespace is gone",
          "[vm][vlan]") {
  NetnsFixture fx;
  TempDir data;
  std::string c1 = fx.AddNetns("c1");
  MustExec(fx, c1, {"ip", "link", "add", "mst0", "type", "dummy"});
  MustExec(fx, c1, {"ip", "link", "set", "mst0", "up"});
  std::string conf = VlConf("1.1.0", "mst0", 30, HostLocalIpam(data, {"10.46.0.0/24"}, nullptr),
                            {{"linkInContainer", true}});
  RunResult add = Call("ADD", conf, c1, "ctr1");
  MustResult(add);
  CHECK(LinkJson(fx, c1, "eth0").value("link", "") == "mst0");
  CHECK(VlanId(fx, c1) == 30);
  MustSucceed(Call("CHECK", WithPrevResult(conf, add.out), c1, "ctr1"));
  // Without linkInContainer the master is looked for in the host.
  RunResult host = Call("ADD", VlConf("1.1.0", "mst0", 31, Json::object()), c1, "ctr2",
                        {.ifname = "eth1"});
  CHECK(ErrorCode(host) == 7);
  CHECK(absl::StrContains(ErrorMessage(host), "master \"mst0\" not found in the host namespace"));
  fx.DelNetns(c1);
  MustSucceed(Call("DEL", conf, c1, "ctr1"));
  CHECK(Reservations(data).empty());
  TearDown(fx, {});
}

TEST_CASE("vlan: same result and kernel state as upstream's vlan", "[vm][vlan][differential]") {
  NetnsFixture fx;
  MustExec(fx, "", {"ip", "link", "add", "mst0", "type", "dummy"});
  MustExec(fx, "", {"ip", "link", "set", "mst0", "up"});
  const Json extra = GENERATE(Json({{"vlanId", 42}, {"mtu", 1400}}), Json({{"vlanId", 0}}),
                              Json({{"vlanId", 4094}}));
  INFO(extra.dump());
  Json routes = Json::array({{{"dst", "0.0.0.0/0"}, {"gw", "10.46.0.1"}}});
  std::string conf = VlConf("1.0.0", "mst0", 0, StaticIpam("10.46.0.5/24", "", routes), extra);
  CheckSameAsUpstream(fx, "vlan", conf);
  TearDown(fx, {}, {"mst0"});
}

// ---- Cases that need no 802.1Q support: they run on every kernel. ----

TEST_CASE("vlan: bad master, VLAN ID or MTU is refused before anything is made", "[netns][vlan]") {
  NetnsFixture fx;
  TempDir data;
  std::string c1 = fx.AddNetns("c1");
  MustExec(fx, "", {"ip", "link", "add", "mst0", "mtu", "1400", "type", "veth", "peer", "name", "mst0p"});
  Json ipam = HostLocalIpam(data, {"10.46.0.0/24"}, nullptr);
  struct Case {
    std::string conf, message;
    int code;
  };
  Json no_master = Json::parse(VlConf("1.0.0", "", 5, ipam));
  no_master.erase("master");
  for (const Case& c : std::vector<Case>{
           {VlConf("1.0.0", "nope0", 5, ipam), "master \"nope0\" not found in the host namespace", 7},
           {no_master.dump(), "\"master\" field is required", 7},
           {VlConf("1.0.0", "mst0", 4095, ipam), "\"vlanId\" must be between 0 and 4094, not 4095", 7},
           {VlConf("1.0.0", "mst0", -1, ipam), "\"vlanId\" must be between 0 and 4094, not -1", 7},
           {VlConf("1.0.0", "mst0", 5, ipam, {{"vlanId", "5"}}), "vlanId", 6},
           {VlConf("1.0.0", "mst0", 5, ipam, {{"mtu", 1500}}), "invalid MTU 1500, must be [0, master MTU(1400)]", 7},
           {VlConf("1.0.0", "mst0", 5, ipam, {{"mtu", -1}}), "invalid MTU -1", 7},
       }) {
    INFO(c.conf);
    RunResult add = Call("ADD", c.conf, c1, "ctr1");
    CHECK(ErrorCode(add) == c.code);
    CHECK(absl::StrContains(ErrorMessage(add), c.message));
  }
  CHECK(std::filesystem::is_empty(data.path()));
  CHECK(fx.Links(c1) == kOnlyLo);
  TearDown(fx, {c1}, {"mst0"});
}

TEST_CASE("vlan: DEL is idempotent without a link or a namespace, GC and STATUS delegate",
          "[netns][vlan]") {
  NetnsFixture fx;
  TempDir data;
  std::string c1 = fx.AddNetns("c1");
  // DEL needs neither the master nor the link.
  std::string conf = VlConf("1.1.0", "gone0", 5, HostLocalIpam(data, {"10.46.0.0/24"}, nullptr));
  MustSucceed(Call("DEL", conf, c1, "ctr1"));
  MustSucceed(Call("DEL", conf, "/run/netns/nonexistent", "ctr1"));
  MustSucceed(Call("STATUS", conf, "", ""));
  Json gc = Json::parse(conf);
  gc["cni.dev/valid-attachments"] = Json::array();
  MustSucceed(Call("GC", gc.dump(), "", "", {.ifname = ""}));
  CHECK(ErrorCode(Call("CHECK", conf, c1, "ctr1")) == 7);  // no prevResult
  TearDown(fx, {c1});
}

TEST_CASE("vlan: on a kernel without 802.1Q, ADD fails and leaves nothing", "[netns][vlan]") {
  NetnsFixture fx;
  MustExec(fx, "", {"ip", "link", "add", "mst0", "type", "veth", "peer", "name", "mst0p"});
  if (fx.Exec("", {"ip", "link", "add", "link", "mst0", "name", "probe0", "type", "vlan", "id", "9"})
          .exit_code == 0) {
    WARN("this kernel has 802.1Q: the [vm] cases cover it");
    TearDown(fx, {}, {"probe0", "mst0"});
    return;
  }
  TempDir data;
  std::string c1 = fx.AddNetns("c1");
  RunResult add = Call("ADD", VlConf("1.0.0", "mst0", 9, HostLocalIpam(data, {"10.46.0.0/24"}, nullptr)),
                       c1, "ctr1");
  CHECK(add.exit_code != 0);
  CHECK(absl::StrContains(ErrorMessage(add), "creating vlan"));
  CHECK(std::filesystem::is_empty(data.path()));
  CHECK(fx.Links(c1) == kOnlyLo);
  TearDown(fx, {c1}, {"mst0"});
}

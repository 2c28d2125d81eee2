// The ipvlan plugin through the CNI protocol. Cases tagged [vm] need the
// ipvlan link type (and dummy masters), which this machine's kernel lacks:
// they run in the VM tier's guest. The untagged cases fail before any link
// is made, or probe the kernel, and run everywhere.
#include <filesystem>
#include <string>
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

// An ipvlan network on master "mst0" with `ipam` (left out when null).
std::string IvConf(const std::string& version, const Json& ipam, const Json& extra = Json::object()) {
  Json conf = NetConf(version, "ivnet", "ipvlan", {{"master", "mst0"}});
  if (!ipam.is_null()) conf["ipam"] = ipam;
  for (const auto& [k, v] : extra.items()) conf[k] = v;
  return conf.dump();
}

RunResult Call(const std::string& command, const std::string& conf, const std::string& netns,
               const std::string& id, const CallOptions& options = {}) {
  return CallPlugin("ipvlan", command, conf, netns, id, options);
}

// A dummy master "mst0", up, in `netns` ("" = the private host namespace).
void DummyMaster(const NetnsFixture& fx, const std::string& netns = "", int mtu = 1500) {
  MustExec(fx, netns, {"ip", "link", "add", "mst0", "mtu", std::to_string(mtu), "type", "dummy"});
  MustExec(fx, netns, {"ip", "link", "set", "mst0", "up"});
}

std::string IvMode(const NetnsFixture& fx, const std::string& netns) {
  Json l = LinkJson(fx, netns, "eth0");
  CHECK(l["linkinfo"].value("info_kind", "") == "ipvlan");
  return l["linkinfo"]["info_data"].value("mode", "");
}

const std::vector<std::string> kOnlyLo = {"lo"};

}  // namespace

TEST_CASE("ipvlan: two containers reach each other in l2, l3 and l3s, every version",
          "[vm][ipvlan]") {
  // Every version and every mode, each mode at a version with CHECK (the
  // guest's emulated CPU makes the full product too slow).
  const auto [version, mode] = GENERATE(table<std::string, std::string>(
      {{"0.1.0", "l2"}, {"0.2.0", "l3"}, {"0.3.0", "l3s"}, {"0.3.1", "l2"}, {"0.4.0", "l3"},
       {"1.0.0", "l3s"}, {"1.1.0", "l2"}}));
  INFO("cniVersion " << version << ", mode " << mode);
  NetnsFixture fx;
  DummyMaster(fx);
  std::string c1 = fx.AddNetns("c1");
  std::string c2 = fx.AddNetns("c2");
  std::string conf1 = IvConf(version, StaticIpam("10.45.0.5/24"), {{"mode", mode}});
  std::string conf2 = IvConf(version, StaticIpam("10.45.0.6/24"), {{"mode", mode}});
  RunResult add1 = Call("ADD", conf1, c1, "ctr1");
  cni::Result r1 = MustResult(add1);
  MustResult(Call("ADD", conf2, c2, "ctr2"));
  if (cni::VersionAtLeast(version, "0.3.0")) {
    REQUIRE(r1.interfaces.size() == 1);
    CHECK(r1.interfaces[0].name == "eth0");
    CHECK(r1.interfaces[0].sandbox == c1);
    CHECK(r1.ips[0].interface == 0);
    // ipvlan links share the master's MAC.
    CHECK(r1.interfaces[0].mac == LinkJson(fx, "", "mst0").value("address", "?"));
  }
  CHECK(IvMode(fx, c1) == mode);
  CHECK(LinkJson(fx, c1, "eth0").value("link_index", 0) == LinkJson(fx, "", "mst0").value("ifindex", -1));
  CHECK(Ping(c1, Ip("10.45.0.6")));
  CHECK(Ping(c2, Ip("10.45.0.5")));
  CHECK(fx.Links() == std::vector<std::string>{"lo", "mst0"});  // nothing in the host
  if (cni::VersionAtLeast(version, "0.4.0")) {
    Json check = Json::parse(WithPrevResult(conf1, add1.out));
    MustSucceed(Call("CHECK", check.dump(), c1, "ctr1"));
    check["mode"] = mode == "l2" ? "l3" : "l2";
    RunResult bad = Call("CHECK", check.dump(), c1, "ctr1");
    CHECK(bad.exit_code != 0);
    CHECK(absl::StrContains(ErrorMessage(bad), absl::StrCat("has mode ", mode, ", the config wants")));
  }
  MustSucceed(Call("DEL", conf1, c1, "ctr1"));
  MustSucceed(Call("DEL", conf1, c1, "ctr1"));  // idempotent
  MustSucceed(Call("DEL", conf2, c2, "ctr2"));
  CHECK(fx.Links(c1) == kOnlyLo);
  CHECK(fx.Links(c2) == kOnlyLo);
  TearDown(fx, {c1, c2}, {"mst0"});
}

TEST_CASE("ipvlan: MTU, layer 2 only, IPAM failure rolls the link back", "[vm][ipvlan]") {
  NetnsFixture fx;
  DummyMaster(fx, "", 1400);
  TempDir data;
  std::string c1 = fx.AddNetns("c1");

  SECTION("an MTU below the master's is applied, the address released on DEL") {
    std::string conf = IvConf("1.1.0", HostLocalIpam(data, {"10.45.0.0/24"}, nullptr), {{"mtu", 1300}});
    cni::Result r = MustResult(Call("ADD", conf, c1, "ctr1"));
    CHECK(LinkJson(fx, c1, "eth0").value("mtu", 0) == 1300);
    CHECK(Reservations(data).size() == 1);
    MustSucceed(Call("DEL", conf, c1, "ctr1"));
    CHECK(Reservations(data).empty());
  }
  SECTION("ipam {} gives a layer-2-only link, up") {
    std::string conf = IvConf("1.0.0", Json::object());
    cni::Result r = MustResult(Call("ADD", conf, c1, "ctr1"));
    CHECK(r.ips.empty());
    Json addrs = Json::parse(MustExec(fx, c1, {"ip", "-4", "-j", "addr", "show", "dev", "eth0"}));
    CHECK((addrs.empty() || addrs[0].value("addr_info", Json::array()).empty()));
    CHECK(LinkJson(fx, c1, "eth0").value("flags", Json::array()).dump().find("\"UP\"") != std::string::npos);
    MustSucceed(Call("DEL", conf, c1, "ctr1"));
  }
  SECTION("IPAM failing after the link exists leaves nothing behind") {
    // host-local refuses a range it cannot parse only when it runs: the link
    // has been made by then.
    Json ipam = {{"type", "host-local"}, {"dataDir", data.str()},
                 {"ranges", Json::array({Json::array({{{"subnet", "10.45.0.0/24"},
                                                       {"rangeStart", "10.46.0.9"}}})})}};
    RunResult add = Call("ADD", IvConf("1.0.0", ipam), c1, "ctr1");
    CHECK(add.exit_code != 0);
    CHECK(Reservations(data).empty());
  }
  SECTION("a second ADD with CNI_IFNAME taken fails and keeps the first link") {
    std::string conf = IvConf("1.0.0", StaticIpam("10.45.0.5/24"));
    MustResult(Call("ADD", conf, c1, "ctr1"));
    RunResult again = Call("ADD", conf, c1, "ctr2");
    CHECK(again.exit_code != 0);
    CHECK(absl::StrContains(ErrorMessage(again), "container interface \"eth0\" already exists"));
    CHECK(fx.Links(c1) == std::vector<std::string>{"eth0", "lo"});
    MustSucceed(Call("DEL", conf, c1, "ctr1"));
  }
  CHECK(fx.Links(c1) == kOnlyLo);
  TearDown(fx, {c1}, {"mst0"});
}

TEST_CASE("ipvlan: ndisc_notify is set with arp_notify", "[vm][ipvlan]") {
  NetnsFixture fx;
  DummyMaster(fx);
  std::string c1 = fx.AddNetns("c1");
  std::string conf = IvConf("1.0.0", StaticIpam("10.45.0.5/24"));
  MustResult(Call("ADD", conf, c1, "ctr1"));
  CHECK(MustExec(fx, c1, {"cat", "/proc/sys/net/ipv4/conf/eth0/arp_notify"}) == "1\n");
  CHECK(MustExec(fx, c1, {"cat", "/proc/sys/net/ipv6/conf/eth0/ndisc_notify"}) == "1\n");
  MustSucceed(Call("DEL", conf, c1, "ctr1"));
  TearDown(fx, {c1}, {"mst0"});
}

TEST_CASE("ipvlan: the master in the container (linkInContainer)", "[vm][ipvlan]") {
  NetnsFixture fx;
  std::string c1 = fx.AddNetns("c1");
  DummyMaster(fx, c1);
  std::string conf = IvConf("1.0.0", StaticIpam("10.45.0.5/24"), {{"linkInContainer", true}, {"mode", "l3"}});
  RunResult add = Call("ADD", conf, c1, "ctr1");
  MustResult(add);
  CHECK(LinkJson(fx, c1, "eth0").value("link", "") == "mst0");
  CHECK(IvMode(fx, c1) == "l3");
  MustSucceed(Call("CHECK", WithPrevResult(conf, add.out), c1, "ctr1"));
  MustSucceed(Call("DEL", conf, c1, "ctr1"));
  CHECK(fx.Links(c1) == std::vector<std::string>{"lo", "mst0"});
  TearDown(fx, {c1});
}

TEST_CASE("ipvlan: the default master is the default route's interface", "[vm][ipvlan]") {
  NetnsFixture fx;
  DummyMaster(fx);
  MustExec(fx, "", {"ip", "addr", "add", "192.168.78.2/24", "dev", "mst0"});
  MustExec(fx, "", {"ip", "route", "add", "default", "via", "192.168.78.1", "dev", "mst0"});
  std::string c1 = fx.AddNetns("c1");
  Json conf = Json::parse(IvConf("1.0.0", StaticIpam("10.45.0.5/24")));
  conf.erase("master");
  MustResult(Call("ADD", conf.dump(), c1, "ctr1"));
  CHECK(LinkJson(fx, c1, "eth0").value("link_index", 0) == LinkJson(fx, "", "mst0").value("ifindex", -1));
  MustSucceed(Call("DEL", conf.dump(), c1, "ctr1"));
  TearDown(fx, {c1}, {"mst0"});
}

TEST_CASE("ipvlan: chained, the master and addresses come from prevResult", "[vm][ipvlan]") {
  NetnsFixture fx;
  DummyMaster(fx);
  std::string c1 = fx.AddNetns("c1");
  std::string c2 = fx.AddNetns("c2");
  auto prev = [](const char* addr) {
    return Json{{"cniVersion", "1.0.0"},
                {"interfaces", Json::array({{{"name", "mst0"}}})},
                {"ips", Json::array({{{"address", addr}, {"interface", 0}}})},
                {"routes", Json::array({{{"dst", "10.99.0.0/16"}}})}};
  };
  Json conf1 = NetConf("1.0.0", "ivnet", "ipvlan", {}, prev("10.45.0.5/24"));
  Json conf2 = NetConf("1.0.0", "ivnet", "ipvlan", {}, prev("10.45.0.6/24"));
  cni::Result r = MustResult(Call("ADD", conf1.dump(), c1, "ctr1"));
  MustResult(Call("ADD", conf2.dump(), c2, "ctr2"));
  REQUIRE(r.interfaces.size() == 1);
  CHECK(r.interfaces[0].name == "eth0");
  REQUIRE(r.ips.size() == 1);
  CHECK(r.ips[0].interface == 0);
  CHECK(r.ips[0].address.ToString() == "10.45.0.5/24");
  CHECK(absl::StrContains(MustExec(fx, c1, {"ip", "route", "show"}), "10.99.0.0/16 dev eth0"));
  CHECK(Ping(c1, Ip("10.45.0.6")));
  MustSucceed(Call("DEL", conf1.dump(), c1, "ctr1"));
  MustSucceed(Call("DEL", conf2.dump(), c2, "ctr2"));
  CHECK(fx.Links(c1) == kOnlyLo);
  TearDown(fx, {c1, c2}, {"mst0"});
}

TEST_CASE("ipvlan: DEL releases the address when the namespace is gone", "[vm][ipvlan]") {
  NetnsFixture fx;
  DummyMaster(fx);
  TempDir data;
  std::string c1 = fx.AddNetns("c1");
  std::string conf = IvConf("1.1.0", HostLocalIpam(data, {"10.45.0.0/24"}, nullptr));
  MustResult(Call("ADD", conf, c1, "ctr1"));
  MustSucceed(Call("STATUS", conf, "", ""));
  fx.DelNetns(c1);
  MustSucceed(Call("DEL", conf, c1, "ctr1"));
  MustSucceed(Call("DEL", conf, "", "ctr1"));
  CHECK(Reservations(data).empty());
  TearDown(fx, {}, {"mst0"});
}

TEST_CASE("ipvlan: same result and kernel state as upstream's ipvlan", "[vm][ipvlan][differential]") {
  NetnsFixture fx;
  DummyMaster(fx);
  const Json extra = GENERATE(Json({{"mode", "l3"}, {"mtu", 1400}}), Json({{"mode", "l3s"}}),
                              Json::object());
  INFO(extra.dump());
  Json routes = Json::array({{{"dst", "0.0.0.0/0"}, {"gw", "10.45.0.1"}}});
  std::string conf = IvConf("1.0.0", StaticIpam("10.45.0.5/24", "", routes), extra);
  CheckSameAsUpstream(fx, "ipvlan", conf);
  TearDown(fx, {}, {"mst0"});
}

// ---- Cases that need no ipvlan support: they run on every kernel. ----

TEST_CASE("ipvlan: a missing master or a chained prevResult without one interface is refused",
          "[netns][ipvlan]") {
  NetnsFixture fx;
  TempDir data;
  std::string c1 = fx.AddNetns("c1");
  Json ipam = HostLocalIpam(data, {"10.45.0.0/24"}, nullptr);
  SECTION("missing master") {
    RunResult add = Call("ADD", IvConf("1.0.0", ipam), c1, "ctr1");
    CHECK(ErrorCode(add) == 7);
    CHECK(absl::StrContains(ErrorMessage(add), "master \"mst0\" not found in the host namespace"));
  }
  SECTION("no master, no default route") {
    Json conf = Json::parse(IvConf("1.0.0", ipam));
    conf.erase("master");
    RunResult add = Call("ADD", conf.dump(), c1, "ctr1");
    CHECK(ErrorCode(add) == 7);
    CHECK(absl::StrContains(ErrorMessage(add), "no default route in the host namespace"));
  }
  SECTION("chained, prevResult with two interfaces") {
    Json prev = {{"cniVersion", "1.0.0"},
                 {"interfaces", Json::array({{{"name", "a"}}, {{"name", "b"}}})}};
    RunResult add = Call("ADD", NetConf("1.0.0", "ivnet", "ipvlan", {}, prev).dump(), c1, "ctr1");
    CHECK(ErrorCode(add) == 7);
    CHECK(absl::StrContains(ErrorMessage(add), "prevResult lacks a single named interface"));
  }
  SECTION("an MTU above the master's") {
    MustExec(fx, "", {"ip", "link", "add", "mst0", "mtu", "1400", "type", "veth", "peer", "name", "mst0p"});
    RunResult add = Call("ADD", IvConf("1.0.0", ipam, {{"mtu", 1500}}), c1, "ctr1");
    CHECK(ErrorCode(add) == 7);
    CHECK(absl::StrContains(ErrorMessage(add), "invalid MTU 1500, must be [0, master MTU(1400)]"));
    fx.Exec("", {"ip", "link", "del", "mst0"});
  }
  CHECK(std::filesystem::is_empty(data.path()));
  CHECK(fx.Links(c1) == kOnlyLo);
  TearDown(fx, {c1});
}

TEST_CASE("ipvlan: DEL is idempotent without a link or a namespace, GC and STATUS delegate",
          "[netns][ipvlan]") {
  NetnsFixture fx;
  TempDir data;
  std::string c1 = fx.AddNetns("c1");
  std::string conf = IvConf("1.1.0", HostLocalIpam(data, {"10.45.0.0/24"}, nullptr));
  MustSucceed(Call("DEL", conf, c1, "ctr1"));
  MustSucceed(Call("DEL", conf, "/run/netns/nonexistent", "ctr1"));
  MustSucceed(Call("DEL", IvConf("1.1.0", Json::object()), c1, "ctr1"));
  MustSucceed(Call("STATUS", conf, "", ""));
  Json gc = Json::parse(conf);
  gc["cni.dev/valid-attachments"] = Json::array();
  MustSucceed(Call("GC", gc.dump(), "", "", {.ifname = ""}));
  RunResult no_prev = Call("CHECK", conf, c1, "ctr1");
  CHECK(ErrorCode(no_prev) == 7);
  TearDown(fx, {c1});
}

TEST_CASE("ipvlan: on a kernel without ipvlan, ADD fails and leaves nothing", "[netns][ipvlan]") {
  NetnsFixture fx;
  MustExec(fx, "", {"ip", "link", "add", "mst0", "type", "veth", "peer", "name", "mst0p"});
  if (fx.Exec("", {"ip", "link", "add", "probe0", "link", "mst0", "type", "ipvlan"}).exit_code == 0) {
    WARN("this kernel has ipvlan: the [vm] cases cover it");
    TearDown(fx, {}, {"probe0", "mst0"});
    return;
  }
  TempDir data;
  std::string c1 = fx.AddNetns("c1");
  RunResult add = Call("ADD", IvConf("1.0.0", HostLocalIpam(data, {"10.45.0.0/24"}, nullptr)), c1, "ctr1");
  CHECK(add.exit_code != 0);
  CHECK(absl::StrContains(ErrorMessage(add), "creating ipvlan"));
  CHECK(std::filesystem::is_empty(data.path()));
  CHECK(fx.Links(c1) == kOnlyLo);
  TearDown(fx, {c1}, {"mst0"});
}

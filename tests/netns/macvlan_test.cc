// The macvlan plugin through the CNI protocol. The master is one end of a
// veth pair in the test's private host namespace (the kernel here has no
// dummy links), so nothing reaches a real interface.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
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

cni::net::IpAddress A(const char* text) { return *cni::net::IpAddress::Parse(text); }

std::string MvConf(const std::string& version, const Json& ipam, const Json& extra = Json::object()) {
  Json conf = {{"cniVersion", version}, {"name", "mvnet"}, {"type", "macvlan"}, {"master", "mst0"}};
  conf["ipam"] = ipam;
  for (const auto& [k, v] : extra.items()) conf[k] = v;
  return conf.dump();
}

// host-local storing in `dir`, on 10.44.0.0/24, without routes.
Json HostLocal(const TempDir& dir) { return HostLocalIpam(dir, {"10.44.0.0/24"}, nullptr); }

// The macvlan plugin through the CNI protocol.
RunResult Call(const std::string& command, const std::string& conf, const std::string& netns,
               const std::string& id, const CallOptions& options = {}) {
  return CallPlugin("macvlan", command, conf, netns, id, options);
}

// The master: "mst0" (peer "mst0p"), both up, in `netns` ("" = host).
void MakeMaster(const NetnsFixture& fx, const std::string& netns = "", int mtu = 1500) {
  MustExec(fx, netns, {"ip", "link", "add", "mst0", "mtu", std::to_string(mtu), "type", "veth", "peer",
                       "name", "mst0p"});
  MustExec(fx, netns, {"ip", "link", "set", "mst0", "up"});
  MustExec(fx, netns, {"ip", "link", "set", "mst0p", "up"});
}

const std::vector<std::string> kOnlyLo = {"lo"};

}  // namespace

TEST_CASE("macvlan: two containers in bridge mode reach each other, every version",
          "[netns][macvlan]") {
  const std::string version =
      GENERATE(as<std::string>{}, "0.1.0", "0.2.0", "0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0");
  INFO("cniVersion " << version);
  NetnsFixture fx;
  MakeMaster(fx);
  std::string c1 = fx.AddNetns("c1");
  std::string c2 = fx.AddNetns("c2");
  std::string conf1 = MvConf(version, StaticIpam("10.44.0.5/24"));
  std::string conf2 = MvConf(version, StaticIpam("10.44.0.6/24"));
  RunResult add1 = Call("ADD", conf1, c1, "ctr1");
  cni::Result r1 = MustResult(add1);
  MustResult(Call("ADD", conf2, c2, "ctr2"));
  if (cni::VersionAtLeast(version, "0.3.0")) {
    REQUIRE(r1.interfaces.size() == 1);
    CHECK(r1.interfaces[0].name == "eth0");
    CHECK(r1.interfaces[0].sandbox == c1);
    CHECK(r1.ips[0].interface == 0);
    CHECK(LinkJson(fx, c1, "eth0").value("address", "") == r1.interfaces[0].mac);
  }
  Json eth0 = LinkJson(fx, c1, "eth0");
  CHECK(eth0["linkinfo"].value("info_kind", "") == "macvlan");
  CHECK(eth0["linkinfo"]["info_data"].value("mode", "") == "bridge");
  CHECK(cni::test::Ping(c1, A("10.44.0.6")));
  CHECK(cni::test::Ping(c2, A("10.44.0.5")));
  CHECK(fx.Links() == std::vector<std::string>{"lo", "mst0", "mst0p"});  // nothing in the host
  if (cni::VersionAtLeast(version, "0.4.0")) {
    Json check = Json::parse(WithPrevResult(conf1, add1.out));
    MustSucceed(Call("CHECK", check.dump(), c1, "ctr1"));
    check["mode"] = "vepa";
    RunResult bad = Call("CHECK", check.dump(), c1, "ctr1");
    CHECK(bad.exit_code != 0);
    CHECK(absl::StrContains(ErrorMessage(bad), "has mode bridge, the config wants vepa"));
  }
  MustSucceed(Call("DEL", conf1, c1, "ctr1"));
  MustSucceed(Call("DEL", conf1, c1, "ctr1"));
  MustSucceed(Call("DEL", conf2, c2, "ctr2"));
  CHECK(fx.Links(c1) == kOnlyLo);
  TearDown(fx, {c1, c2}, {"mst0"});
}

TEST_CASE("macvlan: each mode is set as asked", "[netns][macvlan]") {
  NetnsFixture fx;
  MakeMaster(fx);
  std::string c1 = fx.AddNetns("c1");
  for (const char* mode : {"bridge", "private", "vepa", "passthru"}) {
    INFO(mode);
    std::string conf = MvConf("1.0.0", StaticIpam("10.44.0.5/24"), {{"mode", mode}});
    MustResult(Call("ADD", conf, c1, "ctr1"));
    CHECK(LinkJson(fx, c1, "eth0")["linkinfo"]["info_data"].value("mode", "") == mode);
    MustSucceed(Call("DEL", conf, c1, "ctr1"));
    CHECK(fx.Links(c1) == kOnlyLo);
  }
  TearDown(fx, {c1}, {"mst0"});
}

TEST_CASE("macvlan: MTU, MAC, layer 2 only", "[netns][macvlan]") {
  NetnsFixture fx;
  MakeMaster(fx, "", 1400);
  TempDir data;
  std::string c1 = fx.AddNetns("c1");

  SECTION("an MTU above the master's is refused, nothing left behind") {
    RunResult add = Call("ADD", MvConf("1.0.0", HostLocal(data), {{"mtu", 1500}}), c1, "ctr1");
    CHECK(add.exit_code != 0);
    CHECK(ErrorCode(add) == 7);
    CHECK(absl::StrContains(ErrorMessage(add), "invalid MTU 1500, must be [0, master MTU(1400)]"));
    CHECK(std::filesystem::is_empty(data.path()));
    CHECK(fx.Links(c1) == kOnlyLo);
  }
  SECTION("an MTU below it and a MAC are applied") {
    std::string conf = MvConf("1.1.0", HostLocal(data), {{"mtu", 1300}, {"mac", "02:aa:bb:cc:dd:ee"}});
    cni::Result r = MustResult(Call("ADD", conf, c1, "ctr1"));
    Json eth0 = LinkJson(fx, c1, "eth0");
    CHECK(eth0.value("mtu", 0) == 1300);
    CHECK(eth0.value("address", "") == "02:aa:bb:cc:dd:ee");
    CHECK(r.interfaces[0].mac == "02:aa:bb:cc:dd:ee");
    MustSucceed(Call("DEL", conf, c1, "ctr1"));
    CHECK_FALSE(std::filesystem::exists(data.path() / "mvnet" / "10.44.0.2"));
  }
  SECTION("ipam {} gives a layer-2-only link") {
    std::string conf = MvConf("1.0.0", Json::object());
    cni::Result r = MustResult(Call("ADD", conf, c1, "ctr1"));
    CHECK(r.ips.empty());
    Json eth0 = Json::parse(MustExec(fx, c1, {"ip", "-4", "-j", "addr", "show", "dev", "eth0"}));
    CHECK((eth0.empty() || eth0[0].value("addr_info", Json::array()).empty()));
    std::vector<std::string> flags = LinkJson(fx, c1, "eth0").value("flags", std::vector<std::string>{});
    CHECK(std::find(flags.begin(), flags.end(), "UP") != flags.end());
    MustSucceed(Call("DEL", conf, c1, "ctr1"));
  }
  CHECK(fx.Links(c1) == kOnlyLo);
  TearDown(fx, {c1}, {"mst0"});
}

TEST_CASE("macvlan: bcqueuelen sets the broadcast queue length", "[netns][macvlan]") {
  NetnsFixture fx;
  MakeMaster(fx);
  std::string c1 = fx.AddNetns("c1");
  std::string conf = MvConf("1.0.0", StaticIpam("10.44.0.5/24"), {{"bcqueuelen", 4321}});
  MustResult(Call("ADD", conf, c1, "ctr1"));
  Json data = LinkJson(fx, c1, "eth0")["linkinfo"]["info_data"];
  INFO(data.dump());
  CHECK(data.value("bcqueuelen", 0) == 4321);
  CHECK(data.value("usedbcqueuelen", 0) == 4321);  // the master's largest request
  MustSucceed(Call("DEL", conf, c1, "ctr1"));
  // Out of upstream's uint32: code 7, nothing made.
  for (const Json& bad : {Json(-1), Json(4294967296LL)}) {
    RunResult add = Call("ADD", MvConf("1.0.0", StaticIpam("10.44.0.5/24"), {{"bcqueuelen", bad}}), c1, "ctr1");
    CHECK(ErrorCode(add) == 7);
  }
  CHECK(ErrorCode(Call("ADD", MvConf("1.0.0", StaticIpam("10.44.0.5/24"), {{"bcqueuelen", "1"}}), c1, "ctr1")) == 6);
  CHECK(fx.Links(c1) == kOnlyLo);
  TearDown(fx, {c1}, {"mst0"});
}

TEST_CASE("macvlan: ndisc_notify is set with arp_notify", "[netns][macvlan]") {
  NetnsFixture fx;
  MakeMaster(fx);
  std::string c1 = fx.AddNetns("c1");
  std::string conf = MvConf("1.0.0", StaticIpam("10.44.0.5/24"));
  MustResult(Call("ADD", conf, c1, "ctr1"));
  CHECK(MustExec(fx, c1, {"cat", "/proc/sys/net/ipv4/conf/eth0/arp_notify"}) == "1\n");
  CHECK(MustExec(fx, c1, {"cat", "/proc/sys/net/ipv6/conf/eth0/ndisc_notify"}) == "1\n");
  MustSucceed(Call("DEL", conf, c1, "ctr1"));
  TearDown(fx, {c1}, {"mst0"});
}

TEST_CASE("macvlan: a layer-2-only result at 0.1.0/0.2.0 fails with upstream's exact message",
          "[netns][macvlan]") {
  NetnsFixture fx;
  MakeMaster(fx);
  std::string c1 = fx.AddNetns("c1");
  for (const char* version : {"0.1.0", "0.2.0"}) {
    INFO(version);
    RunResult add = Call("ADD", MvConf(version, Json::object()), c1, "ctr1");
    CHECK(ErrorCode(add) == 1);
    // Upstream's own macvlan tests match this text whole.
    CHECK(ErrorMessage(add) == "cannot convert: no valid IP addresses");
    CHECK(fx.Links(c1) == kOnlyLo);  // the link is rolled back
  }
  TearDown(fx, {c1}, {"mst0"});
}

TEST_CASE("macvlan: the master in the container (linkInContainer)", "[netns][macvlan]") {
  NetnsFixture fx;
  std::string c1 = fx.AddNetns("c1");
  MakeMaster(fx, c1);
  std::string conf = MvConf("1.0.0", StaticIpam("10.44.0.5/24"), {{"linkInContainer", true}});
  MustResult(Call("ADD", conf, c1, "ctr1"));
  Json eth0 = LinkJson(fx, c1, "eth0");
  CHECK(eth0.value("link", "") == "mst0");
  // Without linkInContainer the master is looked for in the host, where there is none.
  RunResult add = Call("ADD", MvConf("1.0.0", StaticIpam("10.44.0.6/24")), c1, "ctr2");
  CHECK(ErrorCode(add) == 7);
  CHECK(absl::StrContains(ErrorMessage(add), "master \"mst0\" not found in the host namespace"));
  MustSucceed(Call("DEL", conf, c1, "ctr1"));
  CHECK(fx.Links(c1) == std::vector<std::string>{"lo", "mst0", "mst0p"});
  TearDown(fx, {c1});
}

TEST_CASE("macvlan: the default master is the default route's interface", "[netns][macvlan]") {
  NetnsFixture fx;
  MakeMaster(fx);
  MustExec(fx, "", {"ip", "addr", "add", "192.168.77.2/24", "dev", "mst0"});
  MustExec(fx, "", {"ip", "route", "add", "default", "via", "192.168.77.1", "dev", "mst0"});
  std::string c1 = fx.AddNetns("c1");
  Json conf = Json::parse(MvConf("1.0.0", Json::object()));
  conf.erase("master");
  MustResult(Call("ADD", conf.dump(), c1, "ctr1"));
  // The lower link lives in another namespace: ip names it by index.
  CHECK(LinkJson(fx, c1, "eth0").value("link_index", 0) == LinkJson(fx, "", "mst0").value("ifindex", -1));
  MustSucceed(Call("DEL", conf.dump(), c1, "ctr1"));
  TearDown(fx, {c1}, {"mst0"});
}

TEST_CASE("macvlan: a missing master is refused, nothing left behind", "[netns][macvlan]") {
  NetnsFixture fx;
  TempDir data;
  std::string c1 = fx.AddNetns("c1");
  RunResult add = Call("ADD", MvConf("1.0.0", HostLocal(data)), c1, "ctr1");
  CHECK(add.exit_code != 0);
  CHECK(ErrorCode(add) == 7);
  CHECK(absl::StrContains(ErrorMessage(add), "master \"mst0\" not found"));
  CHECK(std::filesystem::is_empty(data.path()));
  CHECK(fx.Links(c1) == kOnlyLo);
  TearDown(fx, {c1});
}

TEST_CASE("macvlan: DEL releases the address when the namespace is gone", "[netns][macvlan]") {
  NetnsFixture fx;
  MakeMaster(fx);
  TempDir data;
  std::string c1 = fx.AddNetns("c1");
  std::string conf = MvConf("1.1.0", HostLocal(data));
  MustResult(Call("ADD", conf, c1, "ctr1"));
  MustSucceed(Call("STATUS", conf, "", ""));
  fx.DelNetns(c1);
  MustSucceed(Call("DEL", conf, c1, "ctr1"));
  MustSucceed(Call("DEL", conf, "", "ctr1"));
  CHECK(Reservations(data).empty());
  TearDown(fx, {}, {"mst0"});
}

TEST_CASE("macvlan: same result and kernel state as upstream's macvlan",
          "[netns][macvlan][differential]") {
  NetnsFixture fx;
  MakeMaster(fx);
  const Json extra = GENERATE(Json({{"mode", "private"}, {"mtu", 1400}}), Json({{"mode", "vepa"}}),
                              Json::object());
  INFO(extra.dump());
  Json routes = Json::array({{{"dst", "0.0.0.0/0"}, {"gw", "10.44.0.1"}}});
  std::string conf = MvConf("1.0.0", StaticIpam("10.44.0.5/24", "", routes), extra);
  CheckSameAsUpstream(fx, "macvlan", conf);
  TearDown(fx, {}, {"mst0"});
}

// Upstream's usual set-up: a dummy link as the master. The kernels this
// suite usually runs on have no dummy links, so this runs in the VM tier
// (tests/vm) only.
TEST_CASE("macvlan: a dummy master", "[vm][macvlan]") {
  NetnsFixture fx;
  MustExec(fx, "", {"ip", "link", "add", "mst0", "type", "dummy"});
  MustExec(fx, "", {"ip", "link", "set", "mst0", "up"});
  CHECK(LinkJson(fx, "", "mst0")["linkinfo"].value("info_kind", "") == "dummy");
  std::string c1 = fx.AddNetns("c1");
  std::string c2 = fx.AddNetns("c2");
  std::string conf1 = MvConf("1.0.0", StaticIpam("10.44.0.5/24"));
  std::string conf2 = MvConf("1.0.0", StaticIpam("10.44.0.6/24"));
  cni::Result r1 = MustResult(Call("ADD", conf1, c1, "ctr1"));
  MustResult(Call("ADD", conf2, c2, "ctr2"));
  Json eth0 = LinkJson(fx, c1, "eth0");
  CHECK(eth0["linkinfo"].value("info_kind", "") == "macvlan");
  CHECK(eth0["linkinfo"]["info_data"].value("mode", "") == "bridge");
  CHECK(eth0.value("link_index", 0) == LinkJson(fx, "", "mst0").value("ifindex", -1));
  CHECK(eth0.value("address", "") == r1.interfaces[0].mac);
  CHECK(cni::test::Ping(c1, A("10.44.0.6")));
  CHECK(cni::test::Ping(c2, A("10.44.0.5")));
  CHECK(fx.Links() == std::vector<std::string>{"lo", "mst0"});
  MustSucceed(Call("DEL", conf1, c1, "ctr1"));
  MustSucceed(Call("DEL", conf2, c2, "ctr2"));
  CHECK(fx.Links(c1) == kOnlyLo);
  CHECK(fx.Links(c2) == kOnlyLo);
  TearDown(fx, {c1, c2}, {"mst0"});
}

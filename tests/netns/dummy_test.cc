// The dummy plugin through the CNI protocol. This machine's kernel has no
// dummy link type: the tests that need one are tagged [vm] and run only in
// the VM tier (a kernel with every link type); the rest run here.
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
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

const std::vector<std::string> kOnlyLo = {"lo"};

std::string DummyConf(const std::string& version, const Json& ipam, const Json& extra = Json::object()) {
  Json conf = {{"cniVersion", version}, {"name", "dmnet"}, {"type", "dummy"}};
  if (!ipam.is_null()) conf["ipam"] = ipam;
  for (const auto& [k, v] : extra.items()) conf[k] = v;
  return conf.dump();
}

RunResult Call(const std::string& command, const std::string& conf, const std::string& netns,
               const std::string& id, const CallOptions& options = {}) {
  return CallPlugin("dummy", command, conf, netns, id, options);
}

Json HostLocal(const TempDir& dir) { return HostLocalIpam(dir, {"10.59.0.0/24"}, nullptr); }

}  // namespace

TEST_CASE("dummy: a dummy link with the IPAM address, every version", "[netns][dummy][vm]") {
  const std::string version =
      GENERATE(as<std::string>{}, "0.1.0", "0.2.0", "0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0");
  INFO("cniVersion " << version);
  NetnsFixture fx;
  TempDir data;
  std::string c1 = fx.AddNetns("c1");
  Json routes = Json::array({{{"dst", "10.90.0.0/16"}}});
  std::string conf = DummyConf(version, HostLocalIpam(data, {"10.59.0.0/24"}, routes));
  RunResult add = Call("ADD", conf, c1, "ctr1");
  cni::Result r = MustResult(add);
  REQUIRE(r.ips.size() == 1);
  CHECK(r.ips[0].address.ToString() == "10.59.0.2/24");
  if (cni::VersionAtLeast(version, "0.3.0")) {
    REQUIRE(r.interfaces.size() == 1);
    CHECK(r.interfaces[0].name == "eth0");
    CHECK(r.interfaces[0].sandbox == c1);
    CHECK(LinkJson(fx, c1, "eth0").value("address", "") == r.interfaces[0].mac);
  }
  Json eth0 = LinkJson(fx, c1, "eth0");
  CHECK(eth0["linkinfo"].value("info_kind", "") == "dummy");
  CHECK(absl::StrContains(MustExec(fx, c1, {"ip", "-4", "-o", "addr", "show", "dev", "eth0"}), "10.59.0.2/24"));
  CHECK(absl::StrContains(MustExec(fx, c1, {"ip", "route", "show"}), "10.90.0.0/16 via 10.59.0.1 dev eth0"));
  // Traffic to the container's own address goes through its lo, which a
  // runtime brings up with the loopback plugin: down, the ping fails on any kernel.
  MustExec(fx, c1, {"ip", "link", "set", "lo", "up"});
  CHECK(Ping(c1, *cni::net::IpAddress::Parse("10.59.0.2")));
  if (cni::VersionAtLeast(version, "0.4.0")) {
    MustSucceed(Call("CHECK", WithPrevResult(conf, add.out), c1, "ctr1"));
    MustExec(fx, c1, {"ip", "link", "set", "eth0", "down"});
    RunResult bad = Call("CHECK", WithPrevResult(conf, add.out), c1, "ctr1");
    CHECK(absl::StrContains(ErrorMessage(bad), "container interface \"eth0\" is down"));
  }
  MustSucceed(Call("DEL", conf, c1, "ctr1"));
  CHECK(fx.Links(c1) == kOnlyLo);
  CHECK(Reservations(data).empty());
  MustSucceed(Call("DEL", conf, c1, "ctr1"));  // idempotent
  TearDown(fx, {c1});
}

TEST_CASE("dummy: a failed IPAM step removes the link", "[netns][dummy][vm]") {
  NetnsFixture fx;
  TempDir data;
  std::string c1 = fx.AddNetns("c1");
  Json ipam = HostLocal(data);
  ipam["ranges"][0][0]["rangeStart"] = "10.59.0.5";
  ipam["ranges"][0][0]["rangeEnd"] = "10.59.0.5";
  std::string conf = DummyConf("1.0.0", ipam);
  MustResult(Call("ADD", conf, c1, "ctr1"));
  RunResult add = Call("ADD", conf, c1, "ctr2", {.ifname = "eth1"});
  CHECK(add.exit_code != 0);
  CHECK(fx.Links(c1) == std::vector<std::string>{"eth0", "lo"});
  Json ipam2 = HostLocalIpam(data, {"10.60.0.0/24"}, Json::array({{{"dst", "10.99.0.0/16"}, {"gw", "10.200.0.1"}}}));
  RunResult add2 = Call("ADD", DummyConf("1.0.0", ipam2), c1, "ctr3", {.ifname = "eth2"});
  CHECK(add2.exit_code != 0);
  CHECK(fx.Links(c1) == std::vector<std::string>{"eth0", "lo"});
  CHECK(Reservations(data) == std::vector<std::string>{"10.59.0.5"});
  MustSucceed(Call("DEL", conf, c1, "ctr1"));
  CHECK(Reservations(data).empty());
  TearDown(fx, {c1});
}

TEST_CASE("dummy: same result and kernel state as upstream's dummy", "[netns][dummy][vm][differential]") {
  if (!std::filesystem::exists(std::string(kUpstreamDir) + "/dummy")) {
    WARN("no upstream dummy (Debian's 1.1.1 has none): differential skipped");
    return;
  }
  NetnsFixture fx;
  std::string conf = DummyConf("1.0.0", StaticIpam("10.59.0.7/24", "10.59.0.1",
                                                   Json::array({{{"dst", "10.90.0.0/16"}}})));
  auto snap = [&](const std::string& dir, const std::string& ns) {
    cni::Result r = MustResult(Call("ADD", conf, ns, "diff", {.dir = dir}));
    for (cni::Interface& i : r.interfaces) {
      i.mac.clear();
      i.sandbox = "SANDBOX";
    }
    std::string state = MustExec(fx, ns, {"ip", "-4", "-o", "addr", "show", "dev", "eth0"}) +
                        MustExec(fx, ns, {"ip", "route", "show"});
    MustSucceed(Call("DEL", conf, ns, "diff", {.dir = dir}));
    CHECK(fx.Links(ns) == kOnlyLo);
    return std::make_pair(r, state);
  };
  std::string up_ns = fx.AddNetns("up");
  std::string our_ns = fx.AddNetns("ours");
  auto up = snap(kUpstreamDir, up_ns);
  auto ours = snap("", our_ns);
  CHECK(ours.first == up.first);
  CHECK(ours.second == up.second);
  TearDown(fx, {up_ns, our_ns});
}

TEST_CASE("dummy: bad input gets its code, nothing is made", "[netns][dummy]") {
  NetnsFixture fx;
  TempDir data;
  std::string c1 = fx.AddNetns("c1");
  RunResult noipam = Call("ADD", DummyConf("1.0.0", nullptr), c1, "ctr1");
  CHECK(ErrorCode(noipam) == 7);
  CHECK(absl::StrContains(ErrorMessage(noipam), "dummy interface requires an IPAM configuration"));
  RunResult emptyipam = Call("ADD", DummyConf("1.0.0", Json::object()), c1, "ctr1");
  CHECK(ErrorCode(emptyipam) == 7);
  RunResult baddns = Call("ADD", DummyConf("1.0.0", HostLocal(data), {{"dns", "8.8.8.8"}}), c1, "ctr1");
  CHECK(ErrorCode(baddns) == 6);
  RunResult nons = Call("ADD", DummyConf("1.0.0", HostLocal(data)), "/run/netns/none", "ctr1");
  CHECK(ErrorCode(nons) == 3);
  // CNI_IFNAME taken: refused before a link or an address is made.
  RunResult taken = Call("ADD", DummyConf("1.0.0", HostLocal(data)), c1, "ctr1", {.ifname = "lo"});
  CHECK(absl::StrContains(ErrorMessage(taken), "container interface \"lo\" already exists"));
  RunResult nocheck = Call("CHECK", DummyConf("1.0.0", HostLocal(data)), c1, "ctr1");
  CHECK(ErrorCode(nocheck) == 7);
  CHECK(absl::StrContains(ErrorMessage(nocheck), "required prevResult missing"));
  CHECK(fx.Links(c1) == kOnlyLo);
  CHECK(Reservations(data).empty());
  TearDown(fx, {c1});
}

TEST_CASE("dummy: on a kernel without dummy links ADD fails and takes no address", "[netns][dummy]") {
  NetnsFixture fx;
  if (fx.Exec("", {"ip", "link", "add", "probe0", "type", "dummy"}).exit_code == 0) {
    fx.Exec("", {"ip", "link", "del", "probe0"});
    WARN("this kernel has dummy links: covered by the [vm] tests instead");
    return;
  }
  TempDir data;
  std::string c1 = fx.AddNetns("c1");
  RunResult add = Call("ADD", DummyConf("1.0.0", HostLocal(data)), c1, "ctr1");
  CHECK(add.exit_code != 0);
  CHECK(absl::StrContains(ErrorMessage(add), "creating dummy \"eth0\""));
  CHECK(fx.Links(c1) == kOnlyLo);
  CHECK(Reservations(data).empty());
  TearDown(fx, {c1});
}

TEST_CASE("dummy: DEL, GC and STATUS reach IPAM with or without a namespace", "[netns][dummy]") {
  NetnsFixture fx;
  TempDir data;
  std::string conf = DummyConf("1.1.0", HostLocal(data));
  std::string c1 = fx.AddNetns("c1");
  // Reservations as an ADD would have left them (made by the IPAM plugin itself).
  MustResult(CallPlugin("host-local", "ADD", conf, c1, "ctr1"));
  MustResult(CallPlugin("host-local", "ADD", conf, c1, "ctr2"));
  REQUIRE(Reservations(data).size() == 2);
  MustSucceed(Call("STATUS", conf, "", ""));
  fx.DelNetns(c1);
  MustSucceed(Call("DEL", conf, c1, "ctr1"));  // the namespace is gone
  CHECK(Reservations(data).size() == 1);
  MustSucceed(Call("DEL", conf, "", "ctr1"));   // no namespace at all, again
  Json gc = Json::parse(conf);
  gc["cni.dev/valid-attachments"] = Json::array();
  MustSucceed(Call("GC", gc.dump(), "", "", {.ifname = ""}));
  CHECK(Reservations(data).empty());
  TearDown(fx, {});
}

// One container attached to two networks whose IPAM both route the default
// destination (a runtime's "multi-network" container): both ADDs succeed,
// the container has a default route through each interface (IPv4: two
// routes; IPv6: one route with a path through each), CHECK passes for both,
// and DEL of one network leaves the other's default route. Before, the second
// ADD was refused with "File exists".
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "cni/base/json.h"
#include "support/cni_call.h"
#include "support/netns_fixture.h"
#include "support/netns_tools.h"
#include "support/run.h"

namespace {

using cni::Json;
using namespace cni::test;  // NOLINT: test brevity

// One network of the pair: its name, plugin keys, and addressing.
struct Network {
  std::string name;
  std::string ifname;
  std::string v4, gw4;  // "10.x.y.5/24", "10.x.y.1"
  std::string v6, gw6;  // empty: IPv4 only
};

// static IPAM with the network's addresses and default routes for each family.
Json DefaultRouteIpam(const Network& n) {
  Json addresses = Json::array({{{"address", n.v4}, {"gateway", n.gw4}}});
  Json routes = Json::array({{{"dst", "0.0.0.0/0"}}});
  if (!n.v6.empty()) {
    addresses.push_back({{"address", n.v6}, {"gateway", n.gw6}});
    routes.push_back({{"dst", "::/0"}});
  }
  return {{"type", "static"}, {"addresses", addresses}, {"routes", routes}};
}

std::string Conf(const std::string& type, const Network& n, const Json& keys) {
  Json conf = NetConf("1.0.0", n.name, type, keys);
  conf["ipam"] = DefaultRouteIpam(n);
  return conf.dump();
}

std::string Routes(const NetnsFixture& fx, const std::string& ns, const std::string& family) {
  return MustExec(fx, ns, {"ip", family, "route", "show", "default"});
}

// Attaches the container to `a` then `b` with `type` (keys per network from
// `keys_a`/`keys_b`), checks both default routes, CHECKs both, deletes `b`
// and checks that `a`'s default route is still there.
void RunTwoNetworks(NetnsFixture& fx, const std::string& ctr, const std::string& type,
                    const Network& a, const Json& keys_a, const Network& b, const Json& keys_b) {
  std::string conf_a = Conf(type, a, keys_a);
  std::string conf_b = Conf(type, b, keys_b);
  CallOptions on_a, on_b;
  on_a.ifname = a.ifname;
  on_b.ifname = b.ifname;

  RunResult add_a = CallPlugin(type, "ADD", conf_a, ctr, "ctr1", on_a);
  MustSucceed(add_a, "ADD of the first network");
  RunResult add_b = CallPlugin(type, "ADD", conf_b, ctr, "ctr1", on_b);
  MustSucceed(add_b, "ADD of the second network");

  std::string v4 = Routes(fx, ctr, "-4");
  INFO("IPv4 default routes:\n" << v4);
  CHECK(absl::StrContains(v4, "via " + a.gw4 + " dev " + a.ifname));
  CHECK(absl::StrContains(v4, "via " + b.gw4 + " dev " + b.ifname));
  if (!a.v6.empty()) {
    std::string v6 = Routes(fx, ctr, "-6");
    INFO("IPv6 default routes:\n" << v6);
    CHECK(absl::StrContains(v6, "via " + a.gw6 + " dev " + a.ifname));
    CHECK(absl::StrContains(v6, "via " + b.gw6 + " dev " + b.ifname));
  }
  MustSucceed(CallPlugin(type, "CHECK", WithPrevResult(conf_a, add_a.out), ctr, "ctr1", on_a),
              "CHECK of the first network");
  MustSucceed(CallPlugin(type, "CHECK", WithPrevResult(conf_b, add_b.out), ctr, "ctr1", on_b),
              "CHECK of the second network");

  MustSucceed(CallPlugin(type, "DEL", conf_b, ctr, "ctr1", on_b), "DEL of the second network");
  v4 = Routes(fx, ctr, "-4");
  CHECK(absl::StrContains(v4, "via " + a.gw4 + " dev " + a.ifname));
  CHECK_FALSE(absl::StrContains(v4, b.ifname));
  if (!a.v6.empty()) {
    std::string v6 = Routes(fx, ctr, "-6");
    CHECK(absl::StrContains(v6, "via " + a.gw6 + " dev " + a.ifname));
    CHECK_FALSE(absl::StrContains(v6, b.ifname));
  }
  MustSucceed(CallPlugin(type, "CHECK", WithPrevResult(conf_a, add_a.out), ctr, "ctr1", on_a),
              "CHECK of the first network after DEL of the second");
  MustSucceed(CallPlugin(type, "DEL", conf_a, ctr, "ctr1", on_a), "DEL of the first network");
  CHECK(fx.Links(ctr) == std::vector<std::string>{"lo"});
}

}  // namespace

TEST_CASE("two networks with default routes: bridge, dual stack", "[netns][bridge]") {
  NetnsFixture fx;
  std::string ctr = fx.AddNetns("c1");
  Network a{"netA", "eth0", "10.55.1.5/24", "10.55.1.1", "fd55:1::5/64", "fd55:1::1"};
  Network b{"netB", "eth1", "10.55.2.5/24", "10.55.2.1", "fd55:2::5/64", "fd55:2::1"};
  RunTwoNetworks(fx, ctr, "bridge", a, {{"bridge", "br0"}, {"isGateway", true}}, b,
                 {{"bridge", "br1"}, {"isGateway", true}});
  TearDown(fx, {ctr}, {"br0", "br1"});
}

TEST_CASE("two networks with default routes: bridge with isDefaultGateway", "[netns][bridge]") {
  NetnsFixture fx;
  std::string ctr = fx.AddNetns("c1");
  // The bridge adds the default route itself; the IPAM gives none.
  auto conf = [](const std::string& name, const std::string& br, const std::string& addr) {
    Json c = NetConf("1.0.0", name, "bridge", {{"bridge", br}, {"isDefaultGateway", true}});
    c["ipam"] = StaticIpam(addr, "", nullptr);
    return c.dump();
  };
  CallOptions eth1;
  eth1.ifname = "eth1";
  MustResult(CallPlugin("bridge", "ADD", conf("netA", "br0", "10.55.1.5/24"), ctr, "ctr1"));
  MustResult(CallPlugin("bridge", "ADD", conf("netB", "br1", "10.55.2.5/24"), ctr, "ctr1", eth1));
  std::string v4 = Routes(fx, ctr, "-4");
  INFO(v4);
  CHECK(absl::StrContains(v4, "via 10.55.1.1 dev eth0"));
  CHECK(absl::StrContains(v4, "via 10.55.2.1 dev eth1"));
  MustSucceed(CallPlugin("bridge", "DEL", conf("netA", "br0", "10.55.1.5/24"), ctr, "ctr1"));
  CHECK(Routes(fx, ctr, "-4") == "default via 10.55.2.1 dev eth1 \n");
  MustSucceed(CallPlugin("bridge", "DEL", conf("netB", "br1", "10.55.2.5/24"), ctr, "ctr1", eth1));
  TearDown(fx, {ctr}, {"br0", "br1"});
}

TEST_CASE("two networks with default routes: ptp", "[netns][ptp]") {
  NetnsFixture fx;
  std::string ctr = fx.AddNetns("c1");
  Network a{"netA", "eth0", "10.66.1.5/24", "10.66.1.1", "", ""};
  Network b{"netB", "eth1", "10.66.2.5/24", "10.66.2.1", "", ""};
  RunTwoNetworks(fx, ctr, "ptp", a, Json::object(), b, Json::object());
  TearDown(fx, {ctr});
}

TEST_CASE("two networks with default routes: macvlan, dual stack", "[netns][macvlan]") {
  NetnsFixture fx;
  MustExec(fx, "", {"ip", "link", "add", "mst0", "type", "veth", "peer", "name", "mst0p"});
  MustExec(fx, "", {"ip", "link", "set", "mst0", "up"});
  MustExec(fx, "", {"ip", "link", "set", "mst0p", "up"});
  std::string ctr = fx.AddNetns("c1");
  Network a{"netA", "eth0", "10.44.1.5/24", "10.44.1.1", "fd44:1::5/64", "fd44:1::1"};
  Network b{"netB", "eth1", "10.44.2.5/24", "10.44.2.1", "fd44:2::5/64", "fd44:2::1"};
  RunTwoNetworks(fx, ctr, "macvlan", a, {{"master", "mst0"}}, b, {{"master", "mst0"}});
  TearDown(fx, {ctr}, {"mst0"});
}

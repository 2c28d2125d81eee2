// bridge configuration parsing and the pure ADD helpers. No root.
#include <string>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "bridge.h"
#include "cni/base/error.h"
#include "cni/protocol/types.h"
#include "config.h"

namespace {

using cni::bridge::Config;

absl::StatusOr<Config> Parse(const std::string& extra, const std::string& cni_args = "",
                             const std::string& ipam = R"({"type":"static"})") {
  std::string text = R"({"cniVersion":"1.0.0","name":"n","type":"bridge")";
  if (!ipam.empty()) text += R"(,"ipam":)" + ipam;
  if (!extra.empty()) text += "," + extra;
  text += "}";
  absl::StatusOr<cni::NetConf> conf = cni::NetConf::Parse(text);
  REQUIRE(conf.ok());
  cni::CmdArgs args;
  args.command = "ADD";
  args.args = cni_args;
  args.conf = *std::move(conf);
  return Config::Parse(args);
}

int Code(const absl::StatusOr<Config>& c) { return cni::CodeOf(c.status()); }

bool Says(const absl::StatusOr<Config>& c, absl::string_view text) {
  return absl::StrContains(c.status().message(), text);
}

}  // namespace

TEST_CASE("bridge config: defaults", "[bridge]") {
  absl::StatusOr<Config> c = Parse("");
  REQUIRE(c.ok());
  CHECK(c->bridge == "cni0");
  CHECK_FALSE(c->is_gateway);
  CHECK_FALSE(c->preserve_default_vlan);  // upstream's default since 1.8.0
  CHECK(c->vlan == 0);
  CHECK(c->trunk.empty());
  CHECK_FALSE(c->vlan_filtering());
  CHECK_FALSE(c->mac);
  CHECK(c->ipam_type == "static");
  CHECK(cni::bridge::RequireSupported(*c).ok());
}

TEST_CASE("bridge config: isDefaultGateway implies isGateway, keys are case-insensitive", "[bridge]") {
  absl::StatusOr<Config> c = Parse(R"("ISDEFAULTGATEWAY":true,"Bridge":"br7")");
  REQUIRE(c.ok());
  CHECK(c->is_gateway);
  CHECK(c->bridge == "br7");
}

TEST_CASE("bridge config: invalid values are code 7 before anything happens", "[bridge]") {
  struct Case {
    std::string extra, ipam, says;
  } cases[] = {
      {R"("bridge":"a-very-long-bridge-name")", R"({"type":"static"})", "bridge name"},
      {R"("vlan":4095)", R"({"type":"static"})", "invalid VLAN ID 4095"},
      {R"("vlan":-1)", R"({"type":"static"})", "invalid VLAN ID -1"},
      {R"("hairpinMode":true,"promiscMode":true)", R"({"type":"static"})", "hairpin mode and promiscuous"},
      {R"("disableContainerInterface":true)", R"({"type":"static"})", "disableContainerInterface"},
      {R"("vlanTrunk":[{"minID":10}])", R"({"type":"static"})", "maxID is missing"},
      {R"("vlanTrunk":[{"minID":10,"maxID":5}])", R"({"type":"static"})", "minID is greater"},
      {R"("vlanTrunk":[{"id":0}])", R"({"type":"static"})", "incorrect trunk id"},
      {R"("mtu":20)", R"({"type":"static"})", "mtu 20"},
      {R"("ipMasqBackend":"pf")", R"({"type":"static"})", "ipMasqBackend"},
      {R"("runtimeConfig":{"mac":"zz:00"})", R"({"type":"static"})", "MAC"},
  };
  for (const Case& k : cases) {
    INFO(k.extra);
    absl::StatusOr<Config> c = Parse(k.extra, "", k.ipam);
    REQUIRE_FALSE(c.ok());
    CHECK(Code(c) == 7);
    CHECK(Says(c, k.says));
  }
}

TEST_CASE("bridge config: wrong types are code 6", "[bridge]") {
  CHECK(Code(Parse(R"("isGateway":"yes")")) == 6);
  CHECK(Code(Parse(R"("vlan":"5")")) == 6);
  CHECK(Code(Parse(R"("vlanTrunk":{"id":5})")) == 6);
}

TEST_CASE("bridge config: trunk ranges merge, sorted and unique", "[bridge]") {
  absl::StatusOr<Config> c = Parse(R"("vlanTrunk":[{"id":7},{"minID":3,"maxID":5},{"id":4}])");
  REQUIRE(c.ok());
  CHECK(c->trunk == std::vector<int>{3, 4, 5, 7});
  CHECK(c->vlan_filtering());
}

TEST_CASE("bridge config: MAC sources, later wins", "[bridge]") {
  const std::string a = "MAC=02:00:00:00:00:0a";
  CHECK(Parse("", a)->mac->ToString() == "02:00:00:00:00:0a");
  CHECK(Parse(R"("args":{"cni":{"mac":"02:00:00:00:00:0b"}})", a)->mac->ToString() ==
        "02:00:00:00:00:0b");
  CHECK(Parse(R"("args":{"cni":{"mac":"02:00:00:00:00:0b"}},"runtimeConfig":{"mac":"02:00:00:00:00:0c"})",
              a)
            ->mac->ToString() == "02:00:00:00:00:0c");
  // Unknown CNI_ARGS keys are refused unless IgnoreUnknown, as upstream does.
  CHECK(Code(Parse("", "FOO=1")) == 4);
  CHECK(Parse("", "FOO=1;IgnoreUnknown=1").ok());
}

TEST_CASE("bridge config: a multicast or all-zero container MAC is refused before ADD changes anything",
          "[bridge]") {
  // The kernel would refuse it only when making the veth, after the bridge.
  for (const std::string& extra :
       {std::string(R"("runtimeConfig":{"mac":"01:00:5E:00:00:01"})"),
        std::string(R"("args":{"cni":{"mac":"ff:ff:ff:ff:ff:ff"}})")}) {
    INFO(extra);
    absl::StatusOr<Config> c = Parse(extra);
    REQUIRE(c.ok());  // DEL must still be able to tear down
    absl::Status st = cni::bridge::RequireSupported(*c);
    CHECK(cni::CodeOf(st) == 7);
    CHECK(absl::StrContains(st.message(), "is a multicast address"));
  }
  absl::StatusOr<Config> c = Parse("", "MAC=01:00:5e:00:00:01");
  REQUIRE(c.ok());
  CHECK(cni::bridge::RequireSupported(*c).message() ==
        "bridge: container MAC \"01:00:5e:00:00:01\" is a multicast address");
  c = Parse(R"("runtimeConfig":{"mac":"00:00:00:00:00:00"})");
  REQUIRE(c.ok());
  CHECK(cni::bridge::RequireSupported(*c).message() ==
        "bridge: container MAC \"00:00:00:00:00:00\" is the all-zero address");
  c = Parse(R"("runtimeConfig":{"mac":"02:00:00:00:00:01"})");
  REQUIRE(c.ok());
  CHECK(cni::bridge::RequireSupported(*c).ok());
}

TEST_CASE("bridge config: ipMasq and macspoofchk are supported (cni/fw)", "[bridge]") {
  // The rules themselves: netns/ipmasq_test.cc and netns/macspoofchk_test.cc.
  absl::StatusOr<Config> c = Parse(R"("ipMasq":true)");
  REQUIRE(c.ok());
  CHECK(cni::bridge::RequireSupported(*c).ok());
  c = Parse(R"("macspoofchk":true)");
  REQUIRE(c.ok());
  CHECK(c->macspoofchk);
  CHECK(cni::bridge::RequireSupported(*c).ok());
}

TEST_CASE("bridge: gateways and the default route", "[bridge]") {
  Config config;
  config.is_gateway = true;
  config.is_default_gateway = true;
  cni::Result r;
  cni::IpConfig v4;
  v4.address = *cni::net::IpPrefix::Parse("10.1.2.7/24");
  cni::IpConfig v6;
  v6.address = *cni::net::IpPrefix::Parse("fd00:1::7/64");
  v6.gateway = *cni::net::IpAddress::Parse("fd00:1::fe");
  r.ips = {v4, v6};
  std::vector<cni::net::IpPrefix> gws = cni::bridge::ApplyGateways(config, r);
  REQUIRE(gws.size() == 2);
  CHECK(gws[0].ToString() == "10.1.2.1/24");
  CHECK(gws[1].ToString() == "fd00:1::fe/64");
  CHECK(r.ips[0].interface == 2);
  CHECK(r.ips[0].gateway->ToString() == "10.1.2.1");
  REQUIRE(r.routes.size() == 2);
  CHECK(r.routes[0].dst.ToString() == "0.0.0.0/0");
  CHECK(r.routes[0].gw->ToString() == "10.1.2.1");
  CHECK(r.routes[1].dst.ToString() == "::/0");

  // An IPAM default route with a gateway is kept, not doubled.
  cni::Result r2;
  r2.ips = {v4};
  cni::Route def;
  def.dst = *cni::net::IpPrefix::Parse("0.0.0.0/0");
  def.gw = *cni::net::IpAddress::Parse("10.1.2.254");
  r2.routes = {def};
  cni::bridge::ApplyGateways(config, r2);
  CHECK(r2.routes.size() == 1);

  // Without isGateway nothing is invented.
  Config plain;
  cni::Result r3;
  r3.ips = {v4};
  CHECK(cni::bridge::ApplyGateways(plain, r3).empty());
  CHECK_FALSE(r3.ips[0].gateway);
  CHECK(r3.routes.empty());
}

TEST_CASE("bridge: VLAN plan", "[bridge]") {
  // An access port: its VLAN, and VLAN 1 removed unless preserveDefaultVlan.
  Config c;
  c.vlan = 100;
  cni::bridge::VlanPlan p = cni::bridge::PlanVlans(c);
  CHECK(p.remove_default);
  CHECK(p.untagged_pvid == std::vector<int>{100});
  CHECK(p.tagged.empty());
  c.preserve_default_vlan = true;
  CHECK_FALSE(cni::bridge::PlanVlans(c).remove_default);
  // A trunk without "vlan": native VLAN 1 (pvid, untagged), also when VLAN 1
  // was removed first.
  Config t;
  t.trunk = {5, 6};
  p = cni::bridge::PlanVlans(t);
  CHECK(p.remove_default);
  CHECK(p.untagged_pvid == std::vector<int>{1});
  CHECK(p.tagged == std::vector<int>{5, 6});
  // A trunk with "vlan": that is its native VLAN.
  t.vlan = 20;
  p = cni::bridge::PlanVlans(t);
  CHECK(p.untagged_pvid == std::vector<int>{20});
  CHECK(p.tagged == std::vector<int>{5, 6});
  // No VLAN keys: nothing to do, VLAN 1 untouched.
  p = cni::bridge::PlanVlans(Config{});
  CHECK_FALSE(p.remove_default);
  CHECK(p.untagged_pvid.empty());
  CHECK(p.tagged.empty());
}

TEST_CASE("bridge config: vlan and vlanTrunk together make a trunk with a native VLAN", "[bridge]") {
  absl::StatusOr<Config> c = Parse(R"("vlan":20,"vlanTrunk":[{"id":30},{"minID":40,"maxID":41}])");
  REQUIRE(c.ok());
  CHECK(c->vlan == 20);
  CHECK(c->trunk == std::vector<int>{30, 40, 41});
  CHECK(c->vlan_filtering());
  absl::StatusOr<Config> kept = Parse(R"("vlanTrunk":[{"id":30}],"preserveDefaultVlan":true)");
  REQUIRE(kept.ok());
  CHECK(kept->preserve_default_vlan);
}

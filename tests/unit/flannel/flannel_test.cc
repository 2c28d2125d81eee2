// flannel's subnet file, configuration and the delegate configuration it
// saves. The expected bytes are what upstream's plugin writes for the same
// input: derived by hand from flannel-io/cni-plugin v1.9.1-flannel1
// (flannel.go, flannel_linux.go: the delegate is a Go map, so json.Marshal
// sorts its keys; ipam.routes go through types.Route; numbers are float64).
#include <string>

#include <catch2/catch.hpp>

#include "cni/base/error.h"
#include "cni/protocol/types.h"
#include "config.h"
#include "flannel.h"
#include "subnet_env.h"

namespace {

using cni::flannel::SubnetEnv;

constexpr const char* kV4Env =
    "FLANNEL_NETWORK=10.42.0.0/16\n"
    "FLANNEL_SUBNET=10.42.0.1/24\n"
    "FLANNEL_MTU=1450\n"
    "FLANNEL_IPMASQ=true\n";

constexpr const char* kDualEnv =
    "FLANNEL_NETWORK=10.42.0.0/16\n"
    "FLANNEL_SUBNET=10.42.0.1/24\n"
    "FLANNEL_IPV6_NETWORK=2001:cafe:42::/56\n"
    "FLANNEL_IPV6_SUBNET=2001:cafe:42::1/64\n"
    "FLANNEL_MTU=1450\n"
    "FLANNEL_IPMASQ=false\n";

// The flannel entry of k3s' 10-flannel.conflist (pkg/agent/flannel/setup_linux.go)
// as libcni hands it to the plugin: name and cniVersion injected.
constexpr const char* kK3sConf =
    R"({"cniVersion":"1.0.0","name":"cbr0","type":"flannel",)"
    R"("delegate":{"hairpinMode":true,"forceAddress":true,"isDefaultGateway":true}})";

SubnetEnv Env(const std::string& text) {
  auto env = cni::flannel::ParseSubnetEnv(text, "subnet.env");
  INFO((env.ok() ? "" : env.status().ToString()));
  REQUIRE(env.ok());
  return *env;
}

absl::StatusOr<cni::flannel::Config> Parse(const std::string& json) {
  auto conf = cni::NetConf::Parse(json);
  REQUIRE(conf.ok());
  cni::CmdArgs args;
  args.conf = *conf;
  args.stdin_data = json;
  return cni::flannel::Config::Parse(args);
}

// What flannel saves and hands to the delegate for `conf` and `env`.
std::string Saved(const std::string& conf, const std::string& env) {
  auto c = Parse(conf);
  REQUIRE(c.ok());
  auto d = cni::flannel::BuildDelegate(*c, Env(env));
  INFO((d.ok() ? "" : d.status().ToString()));
  REQUIRE(d.ok());
  return cni::flannel::MarshalDelegate(*d);
}

int ParseCode(const std::string& env) {
  return cni::CodeOf(cni::flannel::ParseSubnetEnv(env, "subnet.env").status());
}

}  // namespace

TEST_CASE("flannel: the subnet file is read as upstream reads it", "[flannel]") {
  SubnetEnv v4 = Env(kV4Env);
  REQUIRE(v4.networks.size() == 1);
  CHECK(v4.networks[0].ToString() == "10.42.0.0/16");
  CHECK(v4.subnet->ToString() == "10.42.0.0/24");  // host bits cleared
  CHECK_FALSE(v4.ip6_subnet);
  CHECK(*v4.mtu == 1450);
  CHECK(*v4.ipmasq);

  SubnetEnv dual = Env(kDualEnv);
  CHECK(dual.ip6_networks.at(0).ToString() == "2001:cafe:42::/56");
  CHECK(dual.ip6_subnet->ToString() == "2001:cafe:42::/64");
  CHECK_FALSE(*dual.ipmasq);

  // Comma-separated networks, the same one twice kept once; CRLF line ends,
  // unknown keys and blank lines ignored; a later line wins.
  SubnetEnv many = Env(
      "# written by hand\r\nFLANNEL_NETWORK=10.42.0.0/16,10.43.0.0/16,10.42.0.0/16\r\n\r\nOTHER\r\n"
      "FLANNEL_SUBNET=10.42.7.1/24\r\nFLANNEL_MTU=1400\r\nFLANNEL_MTU=1450\r\nFLANNEL_IPMASQ=false\r\n");
  REQUIRE(many.networks.size() == 2);
  CHECK(many.networks[1].ToString() == "10.43.0.0/16");
  CHECK(*many.mtu == 1450);

  // IPv6 only: no FLANNEL_NETWORK / FLANNEL_SUBNET at all.
  SubnetEnv v6 = Env("FLANNEL_IPV6_NETWORK=fd42::/48\nFLANNEL_IPV6_SUBNET=fd42:0:0:3::1/64\nFLANNEL_MTU=1430\n"
                     "FLANNEL_IPMASQ=true\n");
  CHECK(v6.networks.empty());
  CHECK(v6.ip6_subnet->ToString() == "fd42:0:0:3::/64");
}

TEST_CASE("flannel: a malformed or incomplete subnet file is code 7 naming what is wrong", "[flannel]") {
  auto st = cni::flannel::ParseSubnetEnv("FLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n", "/run/x.env");
  CHECK(cni::CodeOf(st.status()) == 7);
  CHECK(st.status().message() ==
        "subnet file /run/x.env: missing FLANNEL_NETWORK, FLANNEL_IPV6_NETWORK, FLANNEL_SUBNET, "
        "FLANNEL_IPV6_SUBNET");
  CHECK(ParseCode("FLANNEL_NETWORK=10.42.0.0/16\nFLANNEL_SUBNET=10.42.0.1/24\n") == 7);  // no MTU, IPMASQ
  std::string rest = "FLANNEL_NETWORK=10.42.0.0/16\nFLANNEL_SUBNET=10.42.0.1/24\n";
  for (const char* bad : {"FLANNEL_MTU=-1", "FLANNEL_MTU=1450 ", "FLANNEL_MTU=abc", "FLANNEL_MTU=4294967296",
                          "FLANNEL_MTU=", "FLANNEL_MTU"}) {
    INFO(bad);
    CHECK(ParseCode(rest + bad + "\nFLANNEL_IPMASQ=true\n") == 7);
  }
  CHECK(ParseCode(rest + "FLANNEL_MTU=1450\nFLANNEL_IPMASQ=yes\n") == 7);
  std::string tail = "FLANNEL_MTU=1\nFLANNEL_IPMASQ=true\n";
  CHECK(ParseCode("FLANNEL_NETWORK=10.42.0.0/33\nFLANNEL_SUBNET=10.42.0.1/24\n" + tail) == 7);
  CHECK(ParseCode("FLANNEL_NETWORK=10.42.0.0/16,\nFLANNEL_SUBNET=10.42.0.1/24\n" + tail) == 7);
  CHECK(ParseCode("FLANNEL_NETWORK=10.42.0.0/16\nFLANNEL_SUBNET=nonsense\n" + tail) == 7);
  CHECK(ParseCode(rest + "FLANNEL_MTU=4294967295\nFLANNEL_IPMASQ=false\n") == 0);
}

TEST_CASE("flannel: the saved delegate configuration is byte for byte upstream's", "[flannel]") {
  // k3s, IPv4, flanneld masquerades (FLANNEL_IPMASQ=true): ipMasq false.
  CHECK(Saved(kK3sConf, kV4Env) ==
        R"({"cniVersion":"1.0.0","forceAddress":true,"hairpinMode":true,"ipMasq":false,)"
        R"("ipam":{"ranges":[[{"subnet":"10.42.0.0/24"}]],"routes":[{"dst":"10.42.0.0/16"}],)"
        R"("type":"host-local"},"isDefaultGateway":true,"isGateway":true,"mtu":1450,"name":"cbr0","type":"bridge"})");
  // Dual stack, flanneld does not masquerade: ipMasq true; v4 range set and
  // route first.
  CHECK(Saved(kK3sConf, kDualEnv) ==
        R"({"cniVersion":"1.0.0","forceAddress":true,"hairpinMode":true,"ipMasq":true,)"
        R"("ipam":{"ranges":[[{"subnet":"10.42.0.0/24"}],[{"subnet":"2001:cafe:42::/64"}]],)"
        R"("routes":[{"dst":"10.42.0.0/16"},{"dst":"2001:cafe:42::/56"}],"type":"host-local"},)"
        R"("isDefaultGateway":true,"isGateway":true,"mtu":1450,"name":"cbr0","type":"bridge"})");
  // The bare configuration of upstream's README, no cniVersion: none is added.
  CHECK(Saved(R"({"name":"mynet","type":"flannel"})", kV4Env) ==
        R"({"ipMasq":false,"ipam":{"ranges":[[{"subnet":"10.42.0.0/24"}]],"routes":[{"dst":"10.42.0.0/16"}],)"
        R"("type":"host-local"},"isGateway":true,"mtu":1450,"name":"mynet","type":"bridge"})");
}

TEST_CASE("flannel: delegate keys win, ipam is a base, runtimeConfig is passed on", "[flannel]") {
  // The delegate's own ipMasq, mtu and isGateway stay; another type gets no
  // isGateway; the ipam base keeps its keys and type, its routes are decoded
  // as CNI routes (unknown keys dropped, host bits kept) and come first.
  CHECK(Saved(R"({"cniVersion":"0.3.1","name":"n","type":"flannel","delegate":{"ipMasq":true,"mtu":1400,)"
              R"("isGateway":false,"bridge":"mynet0"},"ipam":{"type":"static","dataDir":"/x",)"
              R"("routes":[{"dst":"0.0.0.0/0"},{"dst":"192.168.1.5/24","gw":"10.42.0.254","foo":1}]}})",
              kV4Env) ==
        R"({"bridge":"mynet0","cniVersion":"0.3.1","ipMasq":true,"ipam":{"dataDir":"/x",)"
        R"("ranges":[[{"subnet":"10.42.0.0/24"}]],"routes":[{"dst":"0.0.0.0/0"},)"
        R"({"dst":"192.168.1.5/24","gw":"10.42.0.254"},{"dst":"10.42.0.0/16"}],"type":"static"},)"
        R"("isGateway":false,"mtu":1400,"name":"n","type":"bridge"})");
  CHECK(Saved(R"({"cniVersion":"1.0.0","name":"n","type":"flannel","delegate":{"type":"ipvlan","master":"eth0"},)"
              R"("runtimeConfig":{"bandwidth":{"ingressRate":1000}}})",
              kV4Env) ==
        R"({"cniVersion":"1.0.0","ipMasq":false,"ipam":{"ranges":[[{"subnet":"10.42.0.0/24"}]],)"
        R"("routes":[{"dst":"10.42.0.0/16"}],"type":"host-local"},"master":"eth0","mtu":1450,"name":"n",)"
        R"("runtimeConfig":{"bandwidth":{"ingressRate":1000}},"type":"ipvlan"})");
  // Go's encoding: HTML characters escaped, whole float64s without fraction.
  CHECK(Saved(R"({"name":"n","type":"flannel","delegate":{"bridge":"a<b&c>","x":2.0,"y":0.5}})", kV4Env) ==
        R"({"bridge":"a\u003cb\u0026c\u003e","ipMasq":false,"ipam":{"ranges":[[{"subnet":"10.42.0.0/24"}]],)"
        R"("routes":[{"dst":"10.42.0.0/16"}],"type":"host-local"},"isGateway":true,"mtu":1450,"name":"n",)"
        R"("type":"bridge","x":2,"y":0.5})");
}

TEST_CASE("flannel: bad configurations are refused with their codes", "[flannel]") {
  auto setup_error = [](const std::string& conf) {
    auto c = Parse(conf);
    REQUIRE(c.ok());
    return cni::CodeOf(c->setup_error);
  };
  CHECK(setup_error(R"({"name":"n","type":"flannel","delegate":{"type":1}})") == 7);
  CHECK(setup_error(R"({"name":"n","type":"flannel","delegate":{"name":"x"}})") == 7);
  CHECK(setup_error(R"({"name":"n","type":"flannel","delegate":{"ipam":{}}})") == 7);
  CHECK(setup_error(R"({"name":"n","type":"flannel","delegate":{"type":"bridge"}})") == 0);
  // Wrong types: code 6 for ADD, CHECK, GC and STATUS (setup_error); only a
  // wrong dataDir fails the parse itself, which DEL needs too.
  CHECK(setup_error(R"({"name":"n","type":"flannel","delegate":[]})") == 6);
  // (an "ipam" that is not an object is refused earlier, by NetConf::Parse)
  CHECK(cni::CodeOf(cni::NetConf::Parse(R"({"name":"n","type":"flannel","ipam":"x"})").status()) == 6);
  CHECK(setup_error(R"({"name":"n","type":"flannel","subnetFile":5})") == 6);
  CHECK(cni::CodeOf(Parse(R"({"name":"n","type":"flannel","dataDir":true})").status()) == 6);
  auto c = Parse(R"({"name":"n","type":"flannel","SubnetFile":"/s.env","dataDir":""})");
  REQUIRE(c.ok());
  CHECK(c->subnet_file == "/s.env");  // keys match case-insensitively, as Go's decoder
  CHECK(c->data_dir == "/var/lib/cni/flannel");
  CHECK(c->SavedPath("abc") == "/var/lib/cni/flannel/abc");
  // ipam.routes that do not decode: code 6, nothing built.
  auto bad = Parse(R"({"name":"n","type":"flannel","ipam":{"routes":[{"dst":"nonsense"}]}})");
  REQUIRE(bad.ok());
  CHECK(cni::CodeOf(cni::flannel::BuildDelegate(*bad, Env(kV4Env)).status()) == 6);
}

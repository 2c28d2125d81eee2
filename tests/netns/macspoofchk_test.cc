// bridge macspoofchk: nftables bridge-family rules let the container's own
// MAC through and drop frames with any other source MAC. Runs in the
// fixture's private namespace.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "cni/base/ip.h"
#include "cni/base/json.h"
#include "support/cni_call.h"
#include "support/netns_fixture.h"
#include "support/run.h"

namespace {

using cni::Json;
using namespace cni::test;  // NOLINT: test brevity

cni::net::IpAddress A(const char* s) { return *cni::net::IpAddress::Parse(s); }

}  // namespace

TEST_CASE("macspoofchk: a forged source MAC is dropped and the real one passes", "[netns][macspoofchk]") {
  NetnsFixture fx;
  TempDir dir;
  Json conf = {{"cniVersion", "1.0.0"}, {"name", "spoofnet"}, {"type", "bridge"}, {"bridge", "cni0"},
               {"macspoofchk", true},
               {"ipam", StaticIpam("10.66.0.2/24", "", nullptr)}};
  Json conf_b = conf;
  conf_b["ipam"]["addresses"][0]["address"] = "10.66.0.3/24";
  std::string a = fx.AddNetns("a");
  std::string b = fx.AddNetns("b");
  RunResult add_a = CallPlugin("bridge", "ADD", conf.dump(), a, "ctr-a");
  MustSucceed(add_a, "ADD a");
  MustSucceed(CallPlugin("bridge", "ADD", conf_b.dump(), b, "ctr-b"), "ADD b");
  std::string real_mac = Json::parse(add_a.out)["interfaces"][2]["mac"];

  std::string rules = fx.Exec("", {"nft", "list", "table", "bridge", "nat"}).out;
  CHECK(absl::StrContains(rules, "cni-br-iface-ctr-a-eth0"));
  CHECK(absl::StrContains(rules, "macspoofchk-ctr-a-eth0"));

  CHECK(cni::test::Ping(a, A("10.66.0.3")));
  MustSucceed(fx.Exec(a, {"ip", "link", "set", "eth0", "address", "02:00:00:00:de:ad"}), "forge");
  MustSucceed(fx.Exec(b, {"ip", "neigh", "flush", "all"}), "flush");
  CHECK_FALSE(cni::test::Ping(a, A("10.66.0.3"), 1500));
  MustSucceed(fx.Exec(a, {"ip", "link", "set", "eth0", "address", real_mac}), "restore");
  CHECK(cni::test::Ping(a, A("10.66.0.3")));

  MustSucceed(CallPlugin("bridge", "DEL", conf.dump(), a, "ctr-a"), "DEL a");
  rules = fx.Exec("", {"nft", "list", "table", "bridge", "nat"}).out;
  CHECK_FALSE(absl::StrContains(rules, "ctr-a"));
  CHECK(absl::StrContains(rules, "cni-br-iface-ctr-b-eth0"));
  MustSucceed(CallPlugin("bridge", "DEL", conf.dump(), a, "ctr-a"), "DEL a again");
  MustSucceed(CallPlugin("bridge", "DEL", conf_b.dump(), b, "ctr-b"), "DEL b");
  CHECK_FALSE(absl::StrContains(fx.Exec("", {"nft", "list", "ruleset"}).out, "cni-br-iface"));
}

// bridge macspoofchk: nftables bridge-family rules let the container's own
// MAC through and drop frames with any other source MAC. Runs in the
// fixture's private namespace.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "cni/json.h"
#include "cni/net/ip.h"
#include "support/netns_fixture.h"
#include "support/run.h"

namespace {

using cni::Json;
using cni::test::NetnsFixture;
using cni::test::PluginCall;
using cni::test::RunPlugin;
using cni::test::RunResult;
using cni::test::TempDir;

void Must(const RunResult& r, const char* what) {
  INFO(what << ": exit " << r.exit_code << "\nout: " << r.out << "\nerr: " << r.err);
  REQUIRE(r.exit_code == 0);
}

RunResult Bridge(const std::string& command, const std::string& conf, const std::string& netns,
                 const std::string& id) {
  PluginCall call;
  call.command = command;
  call.container_id = id;
  call.netns = netns;
  call.ifname = "eth0";
  call.config = conf;
  return RunPlugin("bridge", call);
}

cni::net::IpAddress A(const char* s) { return *cni::net::IpAddress::Parse(s); }

}  // namespace

TEST_CASE("macspoofchk: a forged source MAC is dropped and the real one passes", "[netns][macspoofchk]") {
  NetnsFixture fx;
  TempDir dir;
  Json conf = {{"cniVersion", "1.0.0"}, {"name", "spoofnet"}, {"type", "bridge"}, {"bridge", "cni0"},
               {"macspoofchk", true},
               {"ipam", {{"type", "static"}, {"addresses", Json::array({{{"address", "10.66.0.2/24"}}})}}}};
  Json conf_b = conf;
  conf_b["ipam"]["addresses"][0]["address"] = "10.66.0.3/24";
  std::string a = fx.AddNetns("a");
  std::string b = fx.AddNetns("b");
  RunResult add_a = Bridge("ADD", conf.dump(), a, "ctr-a");
  Must(add_a, "ADD a");
  Must(Bridge("ADD", conf_b.dump(), b, "ctr-b"), "ADD b");
  std::string real_mac = Json::parse(add_a.out)["interfaces"][2]["mac"];

  std::string rules = fx.Exec("", {"nft", "list", "table", "bridge", "nat"}).out;
  CHECK(absl::StrContains(rules, "cni-br-iface-ctr-a-eth0"));
  CHECK(absl::StrContains(rules, "macspoofchk-ctr-a-eth0"));

  CHECK(cni::test::Ping(a, A("10.66.0.3")));
  Must(fx.Exec(a, {"ip", "link", "set", "eth0", "address", "02:00:00:00:de:ad"}), "forge");
  Must(fx.Exec(b, {"ip", "neigh", "flush", "all"}), "flush");
  CHECK_FALSE(cni::test::Ping(a, A("10.66.0.3"), 1500));
  Must(fx.Exec(a, {"ip", "link", "set", "eth0", "address", real_mac}), "restore");
  CHECK(cni::test::Ping(a, A("10.66.0.3")));

  Must(Bridge("DEL", conf.dump(), a, "ctr-a"), "DEL a");
  rules = fx.Exec("", {"nft", "list", "table", "bridge", "nat"}).out;
  CHECK_FALSE(absl::StrContains(rules, "ctr-a"));
  CHECK(absl::StrContains(rules, "cni-br-iface-ctr-b-eth0"));
  Must(Bridge("DEL", conf.dump(), a, "ctr-a"), "DEL a again");
  Must(Bridge("DEL", conf_b.dump(), b, "ctr-b"), "DEL b");
  CHECK_FALSE(absl::StrContains(fx.Exec("", {"nft", "list", "ruleset"}).out, "cni-br-iface"));
}

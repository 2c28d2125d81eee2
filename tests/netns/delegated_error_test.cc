// When the IPAM plugin fails, the interface plugin fails with the IPAM
// plugin's error document exactly as the IPAM plugin printed it (code, msg,
// details, bytes), as upstream's plugins do; which delegate failed goes to
// stderr only. Differential: upstream's bridge/ptp/macvlan and ours, both
// delegating to upstream's host-local, print the same bytes.
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

// A configuration for `type` whose host-local IPAM is refused by host-local
// itself (a /31 is too small to allocate from).
std::string FailingIpamConf(const std::string& type, const TempDir& dir) {
  Json keys = Json::object();
  if (type == "bridge") keys = {{"bridge", "br0"}};
  if (type == "macvlan") keys = {{"master", "mst0"}};
  Json conf = NetConf("1.0.0", "failnet", type, keys);
  conf["ipam"] = HostLocalIpam(dir, {"10.77.0.0/31"}, nullptr);
  return conf.dump();
}

// Runs `type` from `plugin_dir` with its IPAM plugins from `ipam_dir`.
RunResult AddWith(const std::string& type, const std::string& plugin_dir, const std::string& ipam_dir,
                  const std::string& conf, const std::string& netns) {
  PluginCall call;
  call.command = "ADD";
  call.container_id = "ctr1";
  call.netns = netns;
  call.ifname = "eth0";
  call.path = ipam_dir;
  call.config = conf;
  return RunPlugin(type, call, plugin_dir);
}

// host-local itself, given the same configuration.
RunResult IpamAlone(const std::string& ipam_dir, const std::string& conf, const std::string& netns) {
  return AddWith("host-local", ipam_dir, ipam_dir, conf, netns);
}

}  // namespace

TEST_CASE("delegated IPAM errors reach the runtime as the IPAM plugin printed them",
          "[netns][bridge][ptp][macvlan]") {
  const std::string type = GENERATE(as<std::string>{}, "bridge", "ptp", "macvlan");
  INFO("plugin " << type);
  NetnsFixture fx;
  MustExec(fx, "", {"ip", "link", "add", "mst0", "type", "veth", "peer", "name", "mst0p"});
  std::string ctr = fx.AddNetns("c1");
  TempDir store;
  std::string conf = FailingIpamConf(type, store);

  SECTION("ours with our host-local: host-local's document, byte for byte") {
    RunResult ipam = IpamAlone(PluginDir(), conf, ctr);
    REQUIRE(ipam.exit_code != 0);
    REQUIRE(ErrorCode(ipam) == 7);
    RunResult ours = AddWith(type, PluginDir(), PluginDir(), conf, ctr);
    CHECK(ours.exit_code == 1);
    CHECK(ours.out == ipam.out);
    CHECK_FALSE(absl::StrContains(ours.out, "delegating"));
    CHECK(absl::StrContains(ours.err, "delegating ADD to \"host-local\""));  // context: stderr only
    CHECK(fx.Links(ctr) == std::vector<std::string>{"lo"});  // and the ADD was rolled back
  }
  SECTION("differential: ours and upstream's, both on upstream's host-local, print the same") {
    RunResult ipam = IpamAlone(kUpstreamDir, conf, ctr);
    REQUIRE(ipam.exit_code != 0);
    // Upstream leaves its container interface behind on this failure: each
    // side gets its own namespace.
    std::string up_ctr = fx.AddNetns("upstream");
    RunResult upstream = AddWith(type, kUpstreamDir, kUpstreamDir, conf, up_ctr);
    fx.DelNetns(up_ctr);
    RunResult ours = AddWith(type, PluginDir(), kUpstreamDir, conf, ctr);
    INFO("upstream: " << Describe(upstream) << "\nours: " << Describe(ours));
    CHECK(upstream.out == ipam.out);  // upstream passes it through unchanged...
    CHECK(ours.out == upstream.out);  // ...and so do we
    CHECK(ours.exit_code == upstream.exit_code);
  }
  TearDown(fx, {ctr}, {"br0", "mst0"});
}

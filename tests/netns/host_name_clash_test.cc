// A host interface with the container interface's name must not break ADD
// (upstream's dummy failed with "file exists" until 1.9, because it made the
// link in the host and then moved it). Every plugin that makes a link is run
// with a host link already called CNI_IFNAME ("eth0"; for vrf, also the VRF's
// name), and must make its own link in the container, leave the host's
// alone, and DEL cleanly. The link kinds this kernel lacks (dummy, ipvlan,
// vlan, vrf) run in the VM tier.
#include <functional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "cni/base/json.h"
#include "support/cni_call.h"
#include "support/netns_fixture.h"
#include "support/netns_tools.h"
#include "support/run.h"

namespace {

using cni::Json;
using namespace cni::test;  // NOLINT: test brevity

// One plugin's run: its type, its keys, what the host (or container) needs
// first, the kind of link it makes in the container, and the host links it
// keeps that the test must remove.
struct Plugin {
  std::string type;
  Json keys;
  std::function<void(const NetnsFixture&, const std::string& container)> setup;
  std::string container_link;  // the link the plugin makes or brings
  std::string kind;            // its IFLA_INFO_KIND
  std::vector<std::string> kept_host_links;
};

// A veth pair `name`/`name`p in `netns` ("" = host), both up.
void Veth(const NetnsFixture& fx, const std::string& netns, const std::string& name) {
  MustExec(fx, netns, {"ip", "link", "add", name, "type", "veth", "peer", "name", name + "p"});
  MustExec(fx, netns, {"ip", "link", "set", name, "up"});
  MustExec(fx, netns, {"ip", "link", "set", name + "p", "up"});
}

void DummyMaster(const NetnsFixture& fx, const std::string& /*container*/) {
  MustExec(fx, "", {"ip", "link", "add", "mst0", "type", "dummy"});
  MustExec(fx, "", {"ip", "link", "set", "mst0", "up"});
}

// The ADD, CHECK and DEL of `p` in a fresh container, with the host's own
// "eth0" (a veth pair eth0/eth0p) and `extra_host` links in place.
void RunWithClash(const Plugin& p, const std::vector<std::string>& extra_host = {}) {
  INFO(p.type);
  NetnsFixture fx;
  Veth(fx, "", "eth0");
  for (const std::string& name : extra_host) Veth(fx, "", name);
  std::string c1 = fx.AddNetns("c1");
  if (p.setup) p.setup(fx, c1);
  const Json host_eth0 = LinkJson(fx, "", "eth0");

  Json conf = NetConf("1.1.0", "clashnet", p.type, p.keys);
  RunResult add = CallPlugin(p.type, "ADD", conf.dump(), c1, "ctr1");
  MustResult(add);
  CHECK(LinkJson(fx, c1, p.container_link)["linkinfo"].value("info_kind", "") == p.kind);
  // The host's links of those names are the same links, untouched.
  Json after = LinkJson(fx, "", "eth0");
  CHECK(after.value("ifindex", 0) == host_eth0.value("ifindex", -1));
  CHECK(after.value("address", "") == host_eth0.value("address", "-"));
  CHECK(after["linkinfo"].value("info_kind", "") == "veth");
  for (const std::string& name : extra_host) {
    CHECK(LinkJson(fx, "", name)["linkinfo"].value("info_kind", "") == "veth");
  }
  MustSucceed(CallPlugin(p.type, "CHECK", WithPrevResult(conf.dump(), add.out), c1, "ctr1"));
  MustSucceed(CallPlugin(p.type, "DEL", conf.dump(), c1, "ctr1"));
  CHECK(LinkJson(fx, "", "eth0").value("ifindex", 0) == host_eth0.value("ifindex", -1));
  std::vector<std::string> host_links = {"eth0"};
  for (const std::string& name : extra_host) host_links.push_back(name);
  for (const std::string& name : p.kept_host_links) host_links.push_back(name);
  TearDown(fx, {c1}, host_links);
}

}  // namespace

TEST_CASE("a host interface named like CNI_IFNAME does not break ADD: bridge, ptp, macvlan, tap, "
          "host-device",
          "[netns][bridge][ptp][macvlan][tap][host-device]") {
  RunWithClash({.type = "bridge",
                .keys = {{"bridge", "br0"}, {"ipam", StaticIpam("10.61.0.2/24")}},
                .container_link = "eth0",
                .kind = "veth",
                .kept_host_links = {"br0"}});
  RunWithClash({.type = "ptp",
                .keys = {{"ipam", StaticIpam("10.61.0.2/24", "10.61.0.1")}},
                .container_link = "eth0",
                .kind = "veth"});
  RunWithClash({.type = "macvlan",
                .keys = {{"master", "mst0"}, {"ipam", StaticIpam("10.61.0.2/24")}},
                .setup = [](const NetnsFixture& fx, const std::string&) { Veth(fx, "", "mst0"); },
                .container_link = "eth0",
                .kind = "macvlan",
                .kept_host_links = {"mst0"}});
  RunWithClash({.type = "tap",
                .keys = {{"ipam", StaticIpam("10.61.0.2/24")}},
                .container_link = "eth0",
                .kind = "tun"});
  // host-device brings hd0 in and names it eth0 there; the host keeps its own eth0.
  RunWithClash({.type = "host-device",
                .keys = {{"device", "hd0"}, {"ipam", StaticIpam("10.61.0.2/24")}},
                .setup = [](const NetnsFixture& fx, const std::string&) { Veth(fx, "", "hd0"); },
                .container_link = "eth0",
                .kind = "veth",
                .kept_host_links = {"hd0"}});
}

TEST_CASE("a host interface named like CNI_IFNAME does not break ADD: dummy, ipvlan, vlan, vrf",
          "[vm][dummy][ipvlan][vlan][vrf]") {
  RunWithClash({.type = "dummy",
                .keys = {{"ipam", StaticIpam("10.61.0.2/24")}},
                .container_link = "eth0",
                .kind = "dummy"});
  RunWithClash({.type = "ipvlan",
                .keys = {{"master", "mst0"}, {"ipam", StaticIpam("10.61.0.2/24")}},
                .setup = DummyMaster,
                .container_link = "eth0",
                .kind = "ipvlan",
                .kept_host_links = {"mst0"}});
  RunWithClash({.type = "vlan",
                .keys = {{"master", "mst0"}, {"vlanId", 10}, {"ipam", StaticIpam("10.61.0.2/24")}},
                .setup = DummyMaster,
                .container_link = "eth0",
                .kind = "vlan",
                .kept_host_links = {"mst0"}});
  // vrf makes the VRF "vrf0" in the container around the prevResult's eth0;
  // the host has links called eth0 and vrf0 too.
  Json prev = {{"cniVersion", "1.1.0"},
               {"interfaces", Json::array({{{"name", "eth0"}}})},
               {"ips", Json::array({{{"address", "10.61.0.2/24"}, {"interface", 0}}})}};
  RunWithClash({.type = "vrf",
                .keys = {{"vrfname", "vrf0"}, {"prevResult", prev}},
                .setup = [](const NetnsFixture& fx, const std::string& c1) { Veth(fx, c1, "eth0"); },
                .container_link = "vrf0",
                .kind = "vrf"},
               {"vrf0"});
}

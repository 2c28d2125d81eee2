// ipMasq of ptp and bridge, both backends: a container reaches a server in a
// namespace playing "outside" that has no route back to the container subnet,
// and the server sees the host's address. All firewall work happens in the
// fixture's private namespace.
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cni/json.h"
#include "support/cni_call.h"
#include "support/netns_fixture.h"
#include "support/netns_tools.h"
#include "support/run.h"

namespace {

using cni::Json;
using namespace cni::test;  // NOLINT: test brevity

// What the server answered (it prints its environment: SOCAT_PEERADDR is
// the client address it saw), retried while it starts.
std::string Ask(const std::string& netns, const std::string& addr) {
  std::string out;
  for (int i = 0; i < 12 && out.empty(); ++i) {
    out = SocatExchange(netns, addr);
    if (out.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  return out;
}

std::string Conf(const std::string& type, const std::string& backend, const TempDir& dir,
                 const std::string& version = "1.0.0") {
  Json c = {{"cniVersion", version}, {"name", "masqnet"}, {"type", type}, {"ipMasq", true},
            {"ipam", HostLocalIpam(dir, {"10.77.0.0/24"}, Json::array({{{"dst", "0.0.0.0/0"}}}))}};
  if (type == "bridge") {
    c["bridge"] = "cni0";
    c["isGateway"] = true;
  }
  if (!backend.empty()) c["ipMasqBackend"] = backend;
  return c.dump();
}

std::string Firewall(const NetnsFixture& fx) {
  return fx.Exec("", {"iptables-save", "-t", "nat"}).out + fx.Exec("", {"nft", "list", "ruleset"}).out;
}

// The "outside": 203.0.113.2 behind the host's 203.0.113.1, no route back.
std::string MakeOutside(NetnsFixture& fx) {
  std::string out = fx.AddNetns("outside");
  MustSucceed(fx.Exec("", {"ip", "link", "add", "uplink", "type", "veth", "peer", "name", "eth0", "netns", "outside"}),
              "veth");
  MustSucceed(fx.Exec("", {"ip", "addr", "add", "203.0.113.1/24", "dev", "uplink"}), "addr");
  MustSucceed(fx.Exec("", {"ip", "link", "set", "uplink", "up"}), "up");
  MustSucceed(fx.Exec(out, {"ip", "addr", "add", "203.0.113.2/24", "dev", "eth0"}), "addr");
  MustSucceed(fx.Exec(out, {"ip", "link", "set", "eth0", "up"}), "up");
  return out;
}

}  // namespace

TEST_CASE("ipmasq: the outside sees the host's address and DEL removes the rules", "[netns][ipmasq]") {
  NetnsFixture fx;
  std::string type = GENERATE(as<std::string>{}, "ptp", "bridge");
  std::string backend = GENERATE(as<std::string>{}, "iptables", "nftables");
  INFO(type << " with " << backend);
  TempDir dir;
  std::string outside = MakeOutside(fx);
  BackgroundProcess server(outside, {"/usr/bin/socat", "TCP-LISTEN:7000,reuseaddr,fork", "EXEC:/usr/bin/env"});
  std::string ctr = fx.AddNetns("ctr");
  std::string conf = Conf(type, backend, dir);
  MustSucceed(CallPlugin(type, "ADD", conf, ctr, "ctr-m"), "ADD");

  std::string seen = Ask(ctr, "TCP:203.0.113.2:7000,connect-timeout=2");
  CHECK(absl::StrContains(seen, "SOCAT_PEERADDR=203.0.113.1"));
  CHECK_FALSE(absl::StrContains(seen, "10.77.0."));
  std::string fw = Firewall(fx);
  if (backend == "iptables") {
    CHECK(absl::StrContains(fw, "id: \\\"ctr-m\\\""));
  } else {
    CHECK(absl::StrContains(fw, "table inet cni_plugins_masquerade"));
    CHECK(absl::StrContains(fw, "id: ctr-m"));
  }

  MustSucceed(CallPlugin(type, "DEL", conf, ctr, "ctr-m"), "DEL");
  CHECK_FALSE(absl::StrContains(Firewall(fx), "ctr-m"));
  MustSucceed(CallPlugin(type, "DEL", conf, ctr, "ctr-m"), "DEL again");
}

TEST_CASE("ipmasq: nftables GC removes only unlisted attachments", "[netns][ipmasq]") {
  NetnsFixture fx;
  TempDir dir;
  std::string a = fx.AddNetns("a");
  std::string b = fx.AddNetns("b");
  std::string conf = Conf("ptp", "nftables", dir, "1.1.0");
  MustSucceed(CallPlugin("ptp", "ADD", conf, a, "ctr-a"), "ADD a");
  MustSucceed(CallPlugin("ptp", "ADD", conf, b, "ctr-b"), "ADD b");
  Json gc = Json::parse(conf);
  gc["cni.dev/valid-attachments"] = Json::array({{{"containerID", "ctr-b"}, {"ifname", "eth0"}}});
  MustSucceed(CallPlugin("ptp", "GC", gc.dump(), "", ""), "GC");
  std::string fw = Firewall(fx);
  CHECK_FALSE(absl::StrContains(fw, "id: ctr-a"));
  CHECK(absl::StrContains(fw, "id: ctr-b"));
  MustSucceed(CallPlugin("ptp", "DEL", conf, b, "ctr-b"), "DEL b");
  MustSucceed(CallPlugin("ptp", "DEL", conf, a, "ctr-a"), "DEL a");
}

TEST_CASE("ipmasq: upstream ptp adds and ours deletes and the reverse", "[netns][ipmasq][differential]") {
  NetnsFixture fx;
  bool upstream_adds = GENERATE(true, false);
  TempDir dir;
  std::string ctr = fx.AddNetns("ctr");
  // Upstream 1.1.1 knows only iptables (no ipMasqBackend key).
  std::string conf = Conf("ptp", "", dir);
  MustSucceed(CallPlugin("ptp", "ADD", conf, ctr, "ctr-u", {.dir = upstream_adds ? kUpstreamDir : ""}), "ADD");
  CHECK(absl::StrContains(Firewall(fx), "id: \\\"ctr-u\\\""));
  MustSucceed(CallPlugin("ptp", "DEL", conf, ctr, "ctr-u", {.dir = upstream_adds ? "" : kUpstreamDir}), "DEL");
  std::string fw = Firewall(fx);
  CHECK_FALSE(absl::StrContains(fw, "ctr-u"));
  CHECK_FALSE(absl::StrContains(fw, ":CNI-"));
}

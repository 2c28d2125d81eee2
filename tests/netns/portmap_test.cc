// portmap through the CNI protocol with real traffic, both backends. Layout
// inside the fixture's private host namespace:
//
//   outside ns (192.168.77.2, fd00:77::2) --veth-- host "hostnic" (192.168.77.1, fd00:77::1)
//   host cni0 (bridge plugin, 10.88.0.0/24, fd00:88::/64) -- containers A and B
//
// A runs socat servers; mappings are reached from outside (PREROUTING), from
// the host (OUTPUT), from 127.0.0.1 (route_localnet + SNAT) and from B
// (hairpin through the host address). Netfilter state is per namespace, so
// all iptables/nft work stays in the fixture's namespace.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cni/base/json.h"
#include "support/cni_call.h"
#include "support/netns_fixture.h"
#include "support/netns_tools.h"
#include "support/run.h"

namespace {

using cni::Json;
using namespace cni::test;  // NOLINT: test brevity

// Retries while servers start and IPv6 addresses settle.
bool Reaches(const std::string& netns, const std::string& addr, const std::string& want,
             const std::string& data = "") {
  for (int i = 0; i < 12; ++i) {
    if (absl::StrContains(SocatExchange(netns, addr, data), want)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  return false;
}

Json BridgeConf(const TempDir& dir) {
  return {{"cniVersion", "1.0.0"}, {"name", "pmnet"}, {"type", "bridge"}, {"bridge", "cni0"},
          {"isGateway", true},
          {"ipam", HostLocalIpam(dir, {"10.88.0.0/24", "fd00:88::/64"},
                                 Json::array({{{"dst", "0.0.0.0/0"}}, {{"dst", "::/0"}}}))}};
}

Json Mappings() {
  return Json::array({
      {{"hostPort", 8080}, {"containerPort", 80}, {"protocol", "tcp"}},
      {{"hostPort", 8081}, {"containerPort", 80}, {"protocol", "tcp"}, {"hostIP", "192.168.77.1"}},
      {{"hostPort", 8086}, {"containerPort", 80}, {"protocol", "tcp"}, {"hostIP", "fd00:77::1"}},
      {{"hostPort", 5353}, {"containerPort", 53}, {"protocol", "udp"}},
  });
}

std::string PortmapConf(const std::string& backend, const std::string& prev, const Json& maps = Mappings(),
                        const Json& extra = Json::object()) {
  Json c = {{"cniVersion", "1.0.0"}, {"name", "pmnet"}, {"type", "portmap"},
            {"runtimeConfig", {{"portMappings", maps}}}, {"prevResult", Json::parse(prev)}};
  if (!backend.empty()) c["backend"] = backend;
  for (const auto& [k, v] : extra.items()) c[k] = v;
  return c.dump();
}

// The private host namespace's firewall, both views, without the save
// tools' time-stamped comment lines.
std::string Firewall(const NetnsFixture& fx) {
  std::string all = fx.Exec("", {"iptables-save", "-t", "nat"}).out + fx.Exec("", {"ip6tables-save", "-t", "nat"}).out +
                    fx.Exec("", {"nft", "list", "ruleset"}).out;
  std::string out;
  for (absl::string_view line : absl::StrSplit(all, '\n')) {
    if (!absl::StartsWith(line, "#")) absl::StrAppend(&out, line, "\n");
  }
  return out;
}

// portmap's handle records (meta/portmap/rule_record.h), in the fixture's
// private /run.
constexpr const char* kNftRecords = "/run/cni/portmap/nftables";
constexpr const char* kIptRecords = "/run/cni/portmap/iptables";
// The record files (names without the directory).
std::vector<std::string> Records(const char* dir = kNftRecords) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

struct World {
  explicit World(NetnsFixture& f) : fx(f) {
    outside = fx.AddNetns("outside");
    MustSucceed(
        fx.Exec("", {"ip", "link", "add", "hostnic", "type", "veth", "peer", "name", "eth0", "netns", "outside"}),
        "veth");
    MustSucceed(fx.Exec("", {"ip", "addr", "add", "192.168.77.1/24", "dev", "hostnic"}), "addr");
    MustSucceed(fx.Exec("", {"ip", "addr", "add", "fd00:77::1/64", "dev", "hostnic", "nodad"}), "addr6");
    MustSucceed(fx.Exec("", {"ip", "link", "set", "hostnic", "up"}), "up");
    MustSucceed(fx.Exec(outside, {"ip", "addr", "add", "192.168.77.2/24", "dev", "eth0"}), "addr");
    MustSucceed(fx.Exec(outside, {"ip", "addr", "add", "fd00:77::2/64", "dev", "eth0", "nodad"}), "addr6");
    MustSucceed(fx.Exec(outside, {"ip", "link", "set", "eth0", "up"}), "up");
    MustSucceed(fx.Exec(outside, {"ip", "link", "set", "lo", "up"}), "lo");
    ctr_a = fx.AddNetns("ctra");
    ctr_b = fx.AddNetns("ctrb");
    RunResult a = CallPlugin("bridge", "ADD", BridgeConf(dir).dump(), ctr_a, "ctr-a");
    MustSucceed(a, "bridge ADD a");
    prev_a = a.out;
    RunResult b = CallPlugin("bridge", "ADD", BridgeConf(dir).dump(), ctr_b, "ctr-b");
    MustSucceed(b, "bridge ADD b");
    prev_b = b.out;
  }
  ~World() {
    (void)CallPlugin("bridge", "DEL", BridgeConf(dir).dump(), ctr_a, "ctr-a");
    (void)CallPlugin("bridge", "DEL", BridgeConf(dir).dump(), ctr_b, "ctr-b");
  }
  NetnsFixture& fx;
  TempDir dir;
  std::string outside, ctr_a, ctr_b, prev_a, prev_b;
};

}  // namespace

TEST_CASE("portmap: TCP UDP and IPv6 mappings carry traffic and DEL removes everything", "[netns][portmap]") {
  NetnsFixture fx;
  std::string backend = GENERATE(as<std::string>{}, "iptables", "nftables");
  INFO("backend " << backend);
  World w(fx);
  BackgroundProcess tcp(w.ctr_a,
                        {"/usr/bin/socat", "TCP6-LISTEN:80,reuseaddr,fork,ipv6only=0", "EXEC:/bin/echo ctr-a"});
  BackgroundProcess udp(w.ctr_a, {"/usr/bin/socat", "UDP-RECVFROM:53,fork", "EXEC:/bin/echo udp-a"});
  std::string conf = PortmapConf(backend, w.prev_a);

  RunResult add = CallPlugin("portmap", "ADD", conf, w.ctr_a, "ctr-a");
  MustSucceed(add, "portmap ADD");
  // prevResult passes through unchanged.
  CHECK(Json::parse(add.out) == Json::parse(w.prev_a));
  MustSucceed(CallPlugin("portmap", "CHECK", conf, w.ctr_a, "ctr-a"), "portmap CHECK");

  CHECK(Reaches(w.outside, "TCP:192.168.77.1:8080,connect-timeout=2", "ctr-a"));
  CHECK(Reaches(w.outside, "TCP:192.168.77.1:8081,connect-timeout=2", "ctr-a"));
  CHECK(Reaches("", "TCP:192.168.77.1:8080,connect-timeout=2", "ctr-a"));
  CHECK(Reaches("", "TCP:127.0.0.1:8080,connect-timeout=2", "ctr-a"));
  CHECK(fx.Exec("", {"cat", "/proc/sys/net/ipv4/conf/cni0/route_localnet"}).out == "1\n");
  CHECK(Reaches(w.ctr_b, "TCP:192.168.77.1:8080,connect-timeout=2", "ctr-a"));
  CHECK(Reaches(w.outside, "UDP:192.168.77.1:5353", "udp-a", "ping\n"));
  CHECK(Reaches(w.outside, "TCP:[fd00:77::1]:8080,connect-timeout=2", "ctr-a"));
  CHECK(Reaches(w.outside, "TCP:[fd00:77::1]:8086,connect-timeout=2", "ctr-a"));
  // hostIP 192.168.77.1 only: not on the IPv6 address, and 8086 not on IPv4.
  CHECK_FALSE(absl::StrContains(SocatExchange(w.outside, "TCP:[fd00:77::1]:8081,connect-timeout=1"), "ctr-a"));
  CHECK_FALSE(absl::StrContains(SocatExchange(w.outside, "TCP:192.168.77.1:8086,connect-timeout=1"), "ctr-a"));

  MustSucceed(CallPlugin("portmap", "DEL", conf, w.ctr_a, "ctr-a"), "portmap DEL");
  CHECK_FALSE(absl::StrContains(SocatExchange(w.outside, "TCP:192.168.77.1:8080,connect-timeout=1"), "ctr-a"));
  std::string fw = Firewall(fx);
  CHECK_FALSE(absl::StrContains(fw, "ctr-a"));
  CHECK_FALSE(absl::StrContains(fw, "CNI-DN-"));
  CHECK(Records(kNftRecords).empty());
  CHECK(Records(kIptRecords).empty());
  // CHECK after DEL names what is missing.
  CHECK(CallPlugin("portmap", "CHECK", conf, w.ctr_a, "ctr-a").exit_code != 0);
  // DEL again is fine.
  MustSucceed(CallPlugin("portmap", "DEL", conf, w.ctr_a, "ctr-a"), "portmap DEL again");
}

TEST_CASE("portmap: route_localnet turned off between ADDs is turned on again", "[netns][portmap]") {
  NetnsFixture fx;
  World w(fx);
  BackgroundProcess tcp(w.ctr_a, {"/usr/bin/socat", "TCP-LISTEN:80,reuseaddr,fork", "EXEC:/bin/echo ctr-a"});
  const std::string conf = PortmapConf("nftables", w.prev_a);
  auto route_localnet = [&] { return fx.Exec("", {"cat", "/proc/sys/net/ipv4/conf/cni0/route_localnet"}).out; };
  MustSucceed(CallPlugin("portmap", "ADD", conf, w.ctr_a, "ctr-a"), "portmap ADD");
  CHECK(route_localnet() == "1\n");
  MustSucceed(CallPlugin("portmap", "DEL", conf, w.ctr_a, "ctr-a"), "portmap DEL");
  // Somebody turns it off; the next ADD reads it off and writes it again.
  REQUIRE(fx.Exec("", {"sh", "-c", "echo 0 > /proc/sys/net/ipv4/conf/cni0/route_localnet"}).exit_code == 0);
  REQUIRE(route_localnet() == "0\n");
  MustSucceed(CallPlugin("portmap", "ADD", conf, w.ctr_a, "ctr-a"), "portmap ADD again");
  CHECK(route_localnet() == "1\n");
  CHECK(Reaches("", "TCP:127.0.0.1:8080,connect-timeout=2", "ctr-a"));
  MustSucceed(CallPlugin("portmap", "DEL", conf, w.ctr_a, "ctr-a"), "portmap DEL");
}

// With nftables, conditions are nft text: that batch goes through the nft program
// (every other one is written over netlink), so this is its traffic test.
TEST_CASE("portmap: conditionsV4 gate the mappings", "[netns][portmap]") {
  NetnsFixture fx;
  std::string backend = GENERATE(as<std::string>{}, "iptables", "nftables");
  INFO("backend " << backend);
  World w(fx);
  BackgroundProcess tcp(w.ctr_a, {"/usr/bin/socat", "TCP-LISTEN:80,reuseaddr,fork", "EXEC:/bin/echo ctr-a"});
  // Everyone but the outside namespace's address.
  Json conditions = backend == "nftables" ? Json::array({"ip", "saddr", "!=", "192.168.77.2"})
                                          : Json::array({"!", "-s", "192.168.77.2"});
  std::string conf = PortmapConf(backend, w.prev_a, Json::array({Mappings()[0]}), {{"conditionsV4", conditions}});
  MustSucceed(CallPlugin("portmap", "ADD", conf, w.ctr_a, "ctr-a"), "portmap ADD");
  CHECK(Reaches("", "TCP:192.168.77.1:8080,connect-timeout=2", "ctr-a"));
  CHECK_FALSE(absl::StrContains(SocatExchange(w.outside, "TCP:192.168.77.1:8080,connect-timeout=1"), "ctr-a"));
  MustSucceed(CallPlugin("portmap", "CHECK", conf, w.ctr_a, "ctr-a"), "portmap CHECK");
  MustSucceed(CallPlugin("portmap", "DEL", conf, w.ctr_a, "ctr-a"), "portmap DEL");
  CHECK_FALSE(absl::StrContains(Firewall(fx), "ctr-a"));
}

TEST_CASE("portmap: no mappings means no firewall work and prevResult unchanged", "[netns][portmap]") {
  NetnsFixture fx;
  std::string backend = GENERATE(as<std::string>{}, "iptables", "nftables");
  World w(fx);
  std::string before = Firewall(fx);
  std::string conf = PortmapConf(backend, w.prev_a, Json::array());
  RunResult add = CallPlugin("portmap", "ADD", conf, w.ctr_a, "ctr-a");
  MustSucceed(add, "ADD");
  CHECK(Json::parse(add.out) == Json::parse(w.prev_a));
  MustSucceed(CallPlugin("portmap", "DEL", conf, w.ctr_a, "ctr-a"), "DEL");
  CHECK(Firewall(fx) == before);
}

TEST_CASE("portmap: bad input is refused with nothing applied", "[netns][portmap]") {
  NetnsFixture fx;
  std::string backend = GENERATE(as<std::string>{}, "iptables", "nftables");
  World w(fx);
  std::string before = Firewall(fx);
  struct Bad {
    Json maps;
    Json extra;
    int code;
  };
  Json ok = {{"hostPort", 8080}, {"containerPort", 80}, {"protocol", "tcp"}};
  auto with = [&](const char* k, Json v) {
    Json m = ok;
    m[k] = v;
    return Json::array({m});
  };
  std::vector<Bad> cases = {
      {with("hostPort", 0), Json::object(), 7},
      {with("hostPort", 70000), Json::object(), 7},
      {with("containerPort", -1), Json::object(), 7},
      {with("protocol", "icmp"), Json::object(), 7},
      {with("hostIP", "not-an-ip"), Json::object(), 7},
      {Json::array({ok}), {{"conditionsV4", {"-s 1.2.3.4\n-j ACCEPT"}}}, 7},
      {Json::array({ok}), {{"conditionsV4", {"ip saddr 1.2.3.4 ; flush ruleset"}}}, 7},
      {Json::array({ok}), {{"conditionsV6", {"\"x"}}}, 7},
      {Json::array({ok}), {{"markMasqBit", 32}}, 7},
      {Json::array({ok}), {{"markMasqBit", 3}, {"externalSetMarkChain", "X"}}, 7},
      {Json::array({ok}), {{"backend", "pf"}}, 7},
      {with("hostPort", "80"), Json::object(), 6},
  };
  for (const Bad& b : cases) {
    std::string conf = PortmapConf(backend, w.prev_a, b.maps, b.extra);
    INFO(conf);
    RunResult r = CallPlugin("portmap", "ADD", conf, w.ctr_a, "ctr-a");
    CHECK(r.exit_code != 0);
    CHECK(Json::parse(r.out).value("code", 0) == b.code);
  }
  // No prevResult: chained only.
  Json np = Json::parse(PortmapConf(backend, w.prev_a));
  np.erase("prevResult");
  CHECK(CallPlugin("portmap", "ADD", np.dump(), w.ctr_a, "ctr-a").exit_code != 0);
  CHECK(Firewall(fx) == before);
}

TEST_CASE("portmap: CHECK passes for an IPv4-only container without IPv6 rules", "[netns][portmap]") {
  NetnsFixture fx;
  std::string backend = GENERATE(as<std::string>{}, "iptables", "nftables");
  TempDir dir;
  std::string ctr = fx.AddNetns("v4only");
  Json bconf = BridgeConf(dir);
  bconf["ipam"]["ranges"] = Json::array({Json::array({{{"subnet", "10.89.0.0/24"}}})});
  bconf["ipam"]["routes"] = Json::array();
  RunResult br = CallPlugin("bridge", "ADD", bconf.dump(), ctr, "v4");
  MustSucceed(br, "bridge ADD");
  Json maps = Json::array({{{"hostPort", 9090}, {"containerPort", 90}, {"protocol", "tcp"}}});
  std::string conf = PortmapConf(backend, br.out, maps);
  MustSucceed(CallPlugin("portmap", "ADD", conf, ctr, "v4"), "ADD");
  MustSucceed(CallPlugin("portmap", "CHECK", conf, ctr, "v4"), "CHECK");
  MustSucceed(CallPlugin("portmap", "DEL", conf, ctr, "v4"), "DEL");
  (void)CallPlugin("bridge", "DEL", bconf.dump(), ctr, "v4");
}

TEST_CASE("portmap: GC removes the rules of unlisted containers only", "[netns][portmap]") {
  NetnsFixture fx;
  std::string backend = GENERATE(as<std::string>{}, "iptables", "nftables");
  World w(fx);
  Json ma = Json::array({{{"hostPort", 8080}, {"containerPort", 80}, {"protocol", "tcp"}}});
  Json mb = Json::array({{{"hostPort", 8090}, {"containerPort", 80}, {"protocol", "tcp"}}});
  MustSucceed(CallPlugin("portmap", "ADD", PortmapConf(backend, w.prev_a, ma), w.ctr_a, "ctr-a"), "ADD a");
  MustSucceed(CallPlugin("portmap", "ADD", PortmapConf(backend, w.prev_b, mb), w.ctr_b, "ctr-b"), "ADD b");
  Json gc = {{"cniVersion", "1.1.0"}, {"name", "pmnet"}, {"type", "portmap"}, {"backend", backend},
             {"cni.dev/valid-attachments", Json::array({{{"containerID", "ctr-b"}, {"ifname", "eth0"}}})}};
  MustSucceed(CallPlugin("portmap", "GC", gc.dump(), "", ""), "GC");
  std::string fw = Firewall(fx);
  CHECK_FALSE(absl::StrContains(fw, "ctr-a"));
  CHECK(absl::StrContains(fw, "ctr-b"));
  MustSucceed(CallPlugin("portmap", "CHECK", PortmapConf(backend, w.prev_b, mb), w.ctr_b, "ctr-b"), "CHECK b");
  MustSucceed(CallPlugin("portmap", "DEL", PortmapConf(backend, w.prev_b, mb), w.ctr_b, "ctr-b"), "DEL b");
  CHECK_FALSE(absl::StrContains(Firewall(fx), "ctr-b"));
}

TEST_CASE("portmap: takes turns with upstream's portmap (iptables)", "[netns][portmap][differential]") {
  NetnsFixture fx;
  bool upstream_adds = GENERATE(true, false);
  World w(fx);
  BackgroundProcess tcp(w.ctr_a,
                        {"/usr/bin/socat", "TCP6-LISTEN:80,reuseaddr,fork,ipv6only=0", "EXEC:/bin/echo ctr-a"});
  // Upstream 1.1.1 has no nftables backend and no "backend" key.
  std::string conf = PortmapConf("", w.prev_a);
  MustSucceed(CallPlugin("portmap", "ADD", conf, w.ctr_a, "ctr-a", {.dir = upstream_adds ? kUpstreamDir : ""}), "ADD");
  CHECK(Reaches(w.outside, "TCP:192.168.77.1:8080,connect-timeout=2", "ctr-a"));
  // Our CHECK accepts upstream's rules. (Upstream 1.1.1's CHECK looks for
  // the IPv4 rules in ip6tables too, so it fails on any dual-stack
  // container, its own included: not asked here.)
  if (upstream_adds) MustSucceed(CallPlugin("portmap", "CHECK", conf, w.ctr_a, "ctr-a"), "CHECK");
  MustSucceed(CallPlugin("portmap", "DEL", conf, w.ctr_a, "ctr-a", {.dir = upstream_adds ? "" : kUpstreamDir}), "DEL");
  std::string fw = Firewall(fx);
  CHECK_FALSE(absl::StrContains(fw, "ctr-a"));
  CHECK_FALSE(absl::StrContains(fw, "CNI-DN-"));
  CHECK_FALSE(absl::StrContains(SocatExchange(w.outside, "TCP:192.168.77.1:8080,connect-timeout=1"), "ctr-a"));
}

TEST_CASE("portmap: 12 concurrent ADDs and DELs keep every container's rules", "[netns][portmap]") {
  NetnsFixture fx;
  std::string backend = GENERATE(as<std::string>{}, "iptables", "nftables");
  // portmap works from prevResult only: one namespace serves every "container".
  std::string ns = fx.AddNetns("shared");
  auto conf = [&](int i) {
    Json prev = {{"cniVersion", "1.0.0"},
                 {"interfaces", Json::array({{{"name", "eth0"}, {"sandbox", ns}}})},
                 {"ips", Json::array({{{"address", absl::StrCat("10.90.0.", i + 2, "/24")}, {"interface", 0}}})}};
    Json maps = Json::array({{{"hostPort", 9000 + i}, {"containerPort", 80}, {"protocol", "tcp"}}});
    return PortmapConf(backend, prev.dump(), maps);
  };
  constexpr int kN = 12;
  auto all = [&](const char* command) {
    std::vector<std::thread> threads;
    std::vector<RunResult> results(kN);
    for (int i = 0; i < kN; ++i) {
      threads.emplace_back([&, i] { results[i] = CallPlugin("portmap", command, conf(i), ns, absl::StrCat("c", i)); });
    }
    for (std::thread& t : threads) t.join();
    for (const RunResult& r : results) MustSucceed(r, command);
  };
  all("ADD");
  for (int i = 0; i < kN; ++i) MustSucceed(CallPlugin("portmap", "CHECK", conf(i), ns, absl::StrCat("c", i)), "CHECK");
  all("DEL");
  std::string fw = Firewall(fx);
  CHECK_FALSE(absl::StrContains(fw, "CNI-DN-"));
  CHECK_FALSE(absl::StrContains(fw, "comment \"c1"));
}

namespace {
// This namespace's conntrack table (the test thread is in the fixture's).
std::string Conntrack() {
  std::ifstream f("/proc/net/nf_conntrack");
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}
}  // namespace

TEST_CASE("portmap: a stale UDP conntrack entry is flushed so the mapping works at once", "[netns][portmap]") {
  NetnsFixture fx;
  std::string backend = GENERATE(as<std::string>{}, "iptables", "nftables");
  World w(fx);
  BackgroundProcess udp(w.ctr_a, {"/usr/bin/socat", "UDP-RECVFROM:53,fork", "EXEC:/bin/echo udp-a"});
  // Conntrack runs in a namespace once some rule needs it (on a node: the
  // other containers' mappings); a table of our own stands in for them.
  MustSucceed(fx.Exec("", {"nft", "add", "table", "ip", "warm"}), "nft");
  MustSucceed(fx.Exec("", {"nft", "add", "chain", "ip", "warm", "pre", "{ type filter hook prerouting priority 0 ; }"}),
              "nft");
  MustSucceed(fx.Exec("", {"nft", "add", "rule", "ip", "warm", "pre", "ct", "state", "new", "counter"}), "nft");
  // Before the mapping: a datagram from source port 4000 leaves an entry
  // without DNAT, which would keep swallowing this flow after ADD.
  std::string client = "UDP:192.168.77.1:5353,sourceport=4000,reuseaddr";
  (void)SocatExchange(w.outside, client, "early\n");
  CHECK(absl::StrContains(Conntrack(), "dport=5353"));
  Json maps = Json::array({{{"hostPort", 5353}, {"containerPort", 53}, {"protocol", "udp"}}});
  std::string conf = PortmapConf(backend, w.prev_a, maps);
  MustSucceed(CallPlugin("portmap", "ADD", conf, w.ctr_a, "ctr-a"), "ADD");
  // ADD flushed the stale entry...
  CHECK_FALSE(absl::StrContains(Conntrack(), "dport=5353"));
  // ...so the same flow now reaches the container. (Retried: under load the
  // container's socat may answer the first datagram late. Without the flush
  // no retry would help, since each one keeps the stale entry alive.)
  CHECK(Reaches(w.outside, client, "udp-a", "ping\n"));
  MustSucceed(CallPlugin("portmap", "DEL", conf, w.ctr_a, "ctr-a"), "DEL");
  // DEL flushes too: the DNATed entry does not outlive the mapping.
  CHECK_FALSE(absl::StrContains(Conntrack(), "dport=5353"));
}

TEST_CASE("portmap: DEL after the config switched backends removes the other backend's rules", "[netns][portmap]") {
  NetnsFixture fx;
  auto [add_backend, del_backend] =
      GENERATE(std::pair<std::string, std::string>{"iptables", "nftables"}, std::pair<std::string, std::string>{"nftables", "iptables"});
  World w(fx);
  Json ma = Json::array({{{"hostPort", 8080}, {"containerPort", 80}, {"protocol", "tcp"}}});
  MustSucceed(CallPlugin("portmap", "ADD", PortmapConf(add_backend, w.prev_a, ma), w.ctr_a, "ctr-a"), "ADD");
  CHECK(absl::StrContains(Firewall(fx), "ctr-a"));
  // With the nftables backend configured, DEL first asks whether the
  // container's iptables chain exists (cheap) before reading the nat table.
  MustSucceed(CallPlugin("portmap", "DEL", PortmapConf(del_backend, w.prev_a, ma), w.ctr_a, "ctr-a"), "DEL");
  std::string fw = Firewall(fx);
  CHECK_FALSE(absl::StrContains(fw, "ctr-a"));
  CHECK_FALSE(absl::StrContains(fw, "CNI-DN-"));
  MustSucceed(CallPlugin("portmap", "DEL", PortmapConf(del_backend, w.prev_a, ma), w.ctr_a, "ctr-a"), "DEL again");
}

// --- nftables handle records (meta/portmap/nft_record.h) --------------------
namespace {

// Appends the handles of the rules of an `nft -a` listing whose line holds
// `needle`.
void AppendHandles(const std::string& listing, const std::string& needle, std::vector<uint64_t>& handles) {
  for (absl::string_view line : absl::StrSplit(listing, '\n')) {
    if (!absl::StrContains(line, needle)) continue;
    size_t at = line.rfind("# handle ");
    uint64_t h = 0;
    if (at != absl::string_view::npos && absl::SimpleAtoi(line.substr(at + 9), &h)) handles.push_back(h);
  }
}

// The handles of container `id`'s rules, in both families' tables, as nft
// lists them ('... comment "<hashes>, net: pmnet, id: c1" # handle 7').
std::vector<uint64_t> HandlesOf(const NetnsFixture& fx, const std::string& id) {
  std::vector<uint64_t> handles;
  for (const char* family : {"ip", "ip6"}) {
    std::string listing = fx.Exec("", {"nft", "-a", "list", "table", family, "cni_hostport"}).out;
    AppendHandles(listing, absl::StrCat(", net: pmnet, id: ", id, "\""), handles);
  }
  std::sort(handles.begin(), handles.end());
  return handles;
}

// The handles `id`'s record holds (its file is "<netns cookie>-<network
// hash>-<id>").
std::vector<uint64_t> RecordedHandles(const std::string& id, const char* dir = kNftRecords) {
  for (const std::string& name : Records(dir)) {
    if (!absl::EndsWith(name, "-" + id)) continue;
    std::ifstream in(absl::StrCat(dir, "/", name));
    std::stringstream text;
    text << in.rdbuf();
    std::vector<uint64_t> handles;
    Json record = Json::parse(text.str());
    for (const Json& r : record["rules"]) handles.push_back(r["handle"].get<uint64_t>());
    std::sort(handles.begin(), handles.end());
    return handles;
  }
  return {};
}

// prevResult-only containers in one namespace (portmap never enters it).
struct Shared {
  explicit Shared(NetnsFixture& fx, std::string b = "nftables") : ns(fx.AddNetns("shared")), backend(std::move(b)) {}
  std::string Conf(int i, const Json& extra = Json::object()) const {
    Json prev = {{"cniVersion", "1.0.0"},
                 {"interfaces", Json::array({{{"name", "eth0"}, {"sandbox", ns}}})},
                 {"ips", Json::array({{{"address", absl::StrCat("10.90.0.", i + 2, "/24")}, {"interface", 0}},
                                      {{"address", absl::StrCat("fd00:90::", i + 2, "/64")}, {"interface", 0}}})}};
    Json maps = Json::array({{{"hostPort", 9000 + i}, {"containerPort", 80}, {"protocol", "tcp"}},
                             {{"hostPort", 9100 + i}, {"containerPort", 53}, {"protocol", "udp"}}});
    if (sctp) maps.push_back({{"hostPort", 9200 + i}, {"containerPort", 80}, {"protocol", "sctp"}});
    return PortmapConf(backend, prev.dump(), maps, extra);
  }
  void Must(const char* command, int i, const Json& extra = Json::object()) const {
    MustSucceed(CallPlugin("portmap", command, Conf(i, extra), ns, absl::StrCat("c", i)), command);
  }
  std::string ns;
  std::string backend;
  bool sctp = false;  // also an sctp mapping, host port 9200 + i
};

// The handles of the jumps from CNI-HOSTPORT-DNAT into container `id`'s
// chain, in both families, as nft lists iptables-nft's tables.
std::vector<uint64_t> JumpHandlesOf(const NetnsFixture& fx, const std::string& id,
                                    const std::vector<std::string>& families = {"ip", "ip6"}) {
  std::vector<uint64_t> handles;
  for (const std::string& family : families) {
    // The chain, from the comment iptables-save shows on the jump.
    std::string save = fx.Exec("", {family == "ip" ? "iptables-save" : "ip6tables-save", "-t", "nat"}).out;
    std::string chain;
    for (absl::string_view line : absl::StrSplit(save, '\n')) {
      size_t at = line.find(" -j CNI-DN-");
      if (absl::StrContains(line, absl::StrCat("id: \\\"", id, "\\\"")) && at != absl::string_view::npos) {
        chain = std::string(line.substr(at + 4));
      }
    }
    if (chain.empty()) continue;
    std::string listing = fx.Exec("", {"nft", "-a", "list", "chain", family, "nat", "CNI-HOSTPORT-DNAT"}).out;
    AppendHandles(listing, absl::StrCat("jump ", chain, " "), handles);
  }
  std::sort(handles.begin(), handles.end());
  return handles;
}

}  // namespace

TEST_CASE("portmap: nftables records the handles of each container's rules and DEL uses them", "[netns][portmap]") {
  NetnsFixture fx;
  Shared s(fx);
  s.Must("ADD", 1);
  s.Must("ADD", 2);
  std::vector<uint64_t> c1 = HandlesOf(fx, "c1");
  // Per family: two DNAT rules, the hairpin masquerade, and (IPv4) localhost.
  REQUIRE(c1.size() == 7);
  CHECK(RecordedHandles("c1") == c1);
  CHECK(RecordedHandles("c2") == HandlesOf(fx, "c2"));
  REQUIRE(Records().size() == 2);

  SECTION("DEL removes exactly the recorded rules, then the record") {
    s.Must("DEL", 1);
    CHECK(HandlesOf(fx, "c1").empty());
    CHECK(HandlesOf(fx, "c2").size() == 7);
    CHECK(Records().size() == 1);
    s.Must("DEL", 1);  // again: nothing left, still success
  }
  SECTION("a repeated ADD replaces the recorded rules instead of adding more") {
    s.Must("ADD", 1);
    std::vector<uint64_t> again = HandlesOf(fx, "c1");
    CHECK(again.size() == 7);
    CHECK(again != c1);
    CHECK(RecordedHandles("c1") == again);
  }
  SECTION("a recorded rule someone else deleted makes DEL list the table instead") {
    MustSucceed(fx.Exec("", {"nft", "delete", "rule", "ip", "cni_hostport", "hostports", "handle",
                             std::to_string(c1.front())}),
                "nft delete rule");
    s.Must("DEL", 1);
    CHECK(HandlesOf(fx, "c1").empty());
    CHECK(HandlesOf(fx, "c2").size() == 7);
    CHECK(Records().size() == 1);
  }
  SECTION("a table made again makes the record untrusted: other containers' rules reuse the handles") {
    // Both tables go (with c1's and c2's rules), then c3 gets the handles
    // c1's rules had: a DEL of c1 trusting its record would delete c3's.
    MustSucceed(fx.Exec("", {"nft", "delete", "table", "ip", "cni_hostport"}), "delete table ip");
    MustSucceed(fx.Exec("", {"nft", "delete", "table", "ip6", "cni_hostport"}), "delete table ip6");
    s.Must("ADD", 3);
    std::vector<uint64_t> c3 = HandlesOf(fx, "c3");
    REQUIRE(c3.size() == 7);
    std::vector<uint64_t> reused;
    std::set_intersection(c1.begin(), c1.end(), c3.begin(), c3.end(), std::back_inserter(reused));
    REQUIRE_FALSE(reused.empty());  // the danger is real
    s.Must("DEL", 1);
    CHECK(HandlesOf(fx, "c3") == c3);
    s.Must("ADD", 2);  // a repeated ADD with an untrusted record lists too
    CHECK(HandlesOf(fx, "c3") == c3);
    CHECK(HandlesOf(fx, "c2").size() == 7);
    s.Must("DEL", 2);
    s.Must("DEL", 3);
    CHECK(HandlesOf(fx, "c3").empty());
  }
  SECTION("GC forgets the records of the containers it removes") {
    Json gc = {{"cniVersion", "1.1.0"}, {"name", "pmnet"}, {"type", "portmap"}, {"backend", "nftables"},
               {"cni.dev/valid-attachments", Json::array({{{"containerID", "c2"}, {"ifname", "eth0"}}})}};
    MustSucceed(CallPlugin("portmap", "GC", gc.dump(), "", ""), "GC");
    CHECK(HandlesOf(fx, "c1").empty());
    REQUIRE(Records().size() == 1);
    CHECK(absl::EndsWith(Records().front(), "-c2"));
    s.Must("DEL", 2);
  }
  s.Must("DEL", 1);
  s.Must("DEL", 2);
  CHECK(HandlesOf(fx, "c1").empty());
  CHECK(HandlesOf(fx, "c2").empty());
  CHECK(Records().empty());
}

TEST_CASE("portmap: nftables ADD writes the shared hook chains only when they are not as it would write them",
          "[netns][portmap]") {
  NetnsFixture fx;
  Shared s(fx);
  // Both families' hook chains and hostports_all as `nft -a` lists them,
  // handles included.
  auto hooks = [&] {
    std::string out;
    for (const char* family : {"ip", "ip6"}) {
      for (const char* chain : {"prerouting", "output", "hostports_all"}) {
        out += MustExec(fx, "", {"nft", "-a", "list", "chain", family, "cni_hostport", chain});
      }
    }
    return out;
  };
  auto chain = [&](const char* family, const char* name) {
    return MustExec(fx, "", {"nft", "list", "chain", family, "cni_hostport", name});
  };
  s.Must("ADD", 1);
  const std::string first = hooks();
  // In place: left alone, the same rules with the same handles (writing them
  // again deletes rules, and the call then waits for the kernel to free them).
  s.Must("ADD", 2);
  CHECK(hooks() == first);
  // Damaged: written again.
  MustExec(fx, "", {"nft", "flush", "chain", "ip", "cni_hostport", "output"});
  s.Must("ADD", 3);
  CHECK(absl::StrContains(chain("ip", "output"), "fib daddr type local jump hostports_all"));
  CHECK(absl::StrContains(chain("ip", "hostports_all"), "jump hostip_hostports\n"));
  CHECK(absl::StrContains(chain("ip", "hostports_all"), "jump hostports\n"));
  // With conditions, written with them; the next ADD without conditions
  // writes the bare jumps again, as upstream's (last ADD wins).
  s.Must("ADD", 4, {{"conditionsV4", Json::array({"ip", "saddr", "!=", "192.0.2.9"})}});
  CHECK(absl::StrContains(chain("ip", "prerouting"), "ip saddr != 192.0.2.9 fib daddr type local jump hostports_all"));
  s.Must("ADD", 5);
  CHECK_FALSE(absl::StrContains(chain("ip", "prerouting"), "192.0.2.9"));
  CHECK(absl::StrContains(chain("ip", "prerouting"), "fib daddr type local jump hostports_all"));
  for (int i = 1; i <= 5; ++i) {
    CHECK(HandlesOf(fx, absl::StrCat("c", i)).size() == 7);
    s.Must("DEL", i);
    CHECK(HandlesOf(fx, absl::StrCat("c", i)).empty());
  }
}

TEST_CASE("portmap: with iptables-nft the jumps into each container's chain are recorded and DEL uses them",
          "[netns][portmap]") {
  NetnsFixture fx;
  if (!IptablesNft(fx)) return;
  Shared s(fx, "iptables");
  s.Must("ADD", 1);
  s.Must("ADD", 2);
  // Per family one jump per protocol (tcp, udp).
  std::vector<uint64_t> c1 = JumpHandlesOf(fx, "c1");
  REQUIRE(c1.size() == 4);
  CHECK(RecordedHandles("c1", kIptRecords) == c1);
  CHECK(RecordedHandles("c2", kIptRecords) == JumpHandlesOf(fx, "c2"));

  SECTION("DEL removes the container's chain and jumps, then the record") {
    s.Must("DEL", 1);
    CHECK(JumpHandlesOf(fx, "c1").empty());
    CHECK(JumpHandlesOf(fx, "c2").size() == 4);
    REQUIRE(Records(kIptRecords).size() == 1);
    CHECK(absl::EndsWith(Records(kIptRecords).front(), "-c2"));
  }
  SECTION("a recorded jump someone else deleted, or an extra one, makes DEL look for them") {
    MustSucceed(fx.Exec("", {"nft", "delete", "rule", "ip", "nat", "CNI-HOSTPORT-DNAT", "handle",
                             std::to_string(JumpHandlesOf(fx, "c1", {"ip"}).front())}),
                "nft delete rule");
    std::string save = fx.Exec("", {"ip6tables-save", "-t", "nat"}).out;
    size_t at = save.find("id: \\\"c1\\\"");
    REQUIRE(at != std::string::npos);
    size_t j = save.find(" -j CNI-DN-", at);
    std::string chain = save.substr(j + 4, save.find('\n', j) - j - 4);
    MustSucceed(fx.Exec("", {"ip6tables", "-t", "nat", "-A", "OUTPUT", "-j", chain}), "extra jump");
    s.Must("DEL", 1);
    CHECK(JumpHandlesOf(fx, "c1").empty());
    CHECK_FALSE(absl::StrContains(fx.Exec("", {"ip6tables-save", "-t", "nat"}).out, chain));
    CHECK(JumpHandlesOf(fx, "c2").size() == 4);
  }
  SECTION("GC forgets the records of the containers it removes") {
    Json gc = {{"cniVersion", "1.1.0"}, {"name", "pmnet"}, {"type", "portmap"}, {"backend", "iptables"},
               {"cni.dev/valid-attachments", Json::array({{{"containerID", "c2"}, {"ifname", "eth0"}}})}};
    MustSucceed(CallPlugin("portmap", "GC", gc.dump(), "", ""), "GC");
    CHECK(JumpHandlesOf(fx, "c1").empty());
    REQUIRE(Records(kIptRecords).size() == 1);
    CHECK(absl::EndsWith(Records(kIptRecords).front(), "-c2"));
  }
  s.Must("DEL", 1);
  s.Must("DEL", 2);
  CHECK(JumpHandlesOf(fx, "c2").empty());
  CHECK_FALSE(absl::StrContains(Firewall(fx), "CNI-DN-"));
  CHECK(Records(kIptRecords).empty());
}

TEST_CASE("portmap: the masquerade jump is found below other tools' rules and never added twice",
          "[netns][portmap]") {
  NetnsFixture fx;
  if (!IptablesNft(fx)) return;
  Shared s(fx, "iptables");
  auto masq_jumps = [&fx] {
    return LinesWith(fx.Exec("", {"iptables-save", "-t", "nat"}).out, "CNI portfwd requiring masquerade").size();
  };
  s.Must("ADD", 1);
  REQUIRE(masq_jumps() == 1);
  // ADD reads POSTROUTING's first rules for the jump: with it there, one
  // more ADD adds none.
  s.Must("ADD", 2);
  CHECK(masq_jumps() == 1);
  // Another tool puts 20 rules above it: ADD then reads the whole chain.
  for (int i = 1; i <= 20; ++i) {
    MustSucceed(fx.Exec("", {"iptables", "-t", "nat", "-I", "POSTROUTING", "1", "-s",
                             absl::StrCat("192.0.2.", i), "-j", "RETURN"}),
                "another tool's rule");
  }
  s.Must("ADD", 3);
  CHECK(masq_jumps() == 1);
  // And with the jump gone, ADD puts it back at the top.
  MustSucceed(fx.Exec("", {"iptables", "-t", "nat", "-D", "POSTROUTING", "-m", "comment", "--comment",
                           "CNI portfwd requiring masquerade", "-j", "CNI-HOSTPORT-MASQ"}),
              "jump deleted");
  s.Must("ADD", 4);
  CHECK(masq_jumps() == 1);
  CHECK(absl::StrContains(fx.Exec("", {"iptables", "-t", "nat", "-S", "POSTROUTING", "1"}).out,
                          "CNI-HOSTPORT-MASQ"));
  for (int i = 1; i <= 4; ++i) s.Must("DEL", i);
}

TEST_CASE("portmap: DEL and GC remove the temporary record files a killed ADD left", "[netns][portmap]") {
  NetnsFixture fx;
  std::string backend = GENERATE(as<std::string>{}, "nftables", "iptables");
  if (backend == "iptables" && !IptablesNft(fx)) return;  // records only with iptables-nft
  const char* dir = backend == "nftables" ? kNftRecords : kIptRecords;
  Shared s(fx, backend);
  s.Must("ADD", 1);
  s.Must("ADD", 2);
  // Record names are "<netns cookie>-<id>"; a killed Save leaves "<name>~".
  std::vector<std::string> records = Records(dir);
  REQUIRE(records.size() == 2);
  const std::string prefix = records.front().substr(0, records.front().size() - 2);  // without "c1"
  auto plant = [&](const std::string& id) { std::ofstream(absl::StrCat(dir, "/", prefix, id, "~")) << "{\"tab"; };
  auto exists = [&](const std::string& name) { return std::filesystem::exists(absl::StrCat(dir, "/", prefix, name)); };
  plant("c1");
  plant("c2");

  s.Must("DEL", 1);
  CHECK_FALSE(exists("c1~"));
  CHECK_FALSE(exists("c1"));
  CHECK(exists("c2~"));  // another container's: untouched
  CHECK(exists("c2"));

  // GC: c3 is not a valid attachment (its ADD was killed); c2 is, and its
  // temporary file may be an ADD writing it.
  plant("c3");
  Json gc = {{"cniVersion", "1.1.0"}, {"name", "pmnet"}, {"type", "portmap"}, {"backend", backend},
             {"cni.dev/valid-attachments", Json::array({{{"containerID", "c2"}, {"ifname", "eth0"}}})}};
  MustSucceed(CallPlugin("portmap", "GC", gc.dump(), "", ""), "GC");
  CHECK_FALSE(exists("c3~"));
  CHECK(exists("c2~"));
  CHECK(exists("c2"));

  s.Must("DEL", 2);
  CHECK(Records(dir).empty());
}

TEST_CASE("portmap: with iptables-nft the rules written over netlink are exactly what iptables-restore writes",
          "[netns][portmap]") {
  NetnsFixture fx;
  if (!IptablesNft(fx)) return;
  Shared s(fx, "iptables");
  // A first ADD makes the shared chains with iptables-restore; a fresh ADD
  // then writes the container's chain, its rules and the entries over
  // netlink; a repeated ADD finds the container's chain and rebuilds it all
  // with iptables-restore.
  s.Must("ADD", 2);
  s.Must("ADD", 1);
  auto save = [&] {
    return fx.Exec("", {"iptables-save", "-t", "nat"}).out + fx.Exec("", {"ip6tables-save", "-t", "nat"}).out;
  };
  std::string save_netlink = save();
  std::vector<std::string> entries = LinesWith(save_netlink, "id: \\\"c1\\\"");
  REQUIRE(entries.size() == 4);  // tcp and udp, both families
  std::string chain = entries.front().substr(entries.front().find(" -j CNI-DN-") + 4);
  std::vector<std::string> chain_rules = LinesWith(save_netlink, "-A " + chain + " ");
  // Per family and protocol: hairpin mark, DNAT; IPv4 also the localhost mark.
  REQUIRE(chain_rules.size() == 10);
  auto exprs = [&](const char* family) {
    std::string out;
    for (const std::string& c : {std::string("CNI-HOSTPORT-DNAT"), chain}) {
      out += MustExec(fx, "", {"nft", "--debug=netlink", "list", "chain", family, "nat", c});
    }
    return LinesWith(out, "[ ");
  };
  std::vector<std::string> exprs_netlink = exprs("ip"), exprs6_netlink = exprs("ip6");
  REQUIRE(exprs_netlink.size() > 40);  // c1's and c2's entries and c1's chain
  s.Must("ADD", 1);
  std::string save_restore = save();
  CHECK(LinesWith(save_restore, "id: \\\"c1\\\"") == entries);
  CHECK(LinesWith(save_restore, "-A " + chain + " ") == chain_rules);
  // The same expressions, in the same order.
  CHECK(exprs("ip") == exprs_netlink);
  CHECK(exprs("ip6") == exprs6_netlink);
  CHECK(absl::StrContains(save_restore, "-j DNAT --to-destination 10.90.0.3:80"));
  CHECK(absl::StrContains(save_restore, "-j DNAT --to-destination [fd00:90::3]:53"));
  s.Must("DEL", 2);
  CHECK(absl::StrContains(entries.front(), "-m comment --comment \"dnat name: \\\"pmnet\\\" id: \\\"c1\\\"\""));
  CHECK(absl::StrContains(save_netlink, "-m multiport --dports 9001 -j CNI-DN-"));
  s.Must("DEL", 1);
  CHECK_FALSE(absl::StrContains(Firewall(fx), "CNI-DN-"));
}

TEST_CASE("portmap: with iptables-nft an sctp mapping written over netlink reads back in iptables-save",
          "[netns][portmap]") {
  NetnsFixture fx;
  if (!IptablesNft(fx)) return;
  Shared s(fx, "iptables");
  s.sctp = true;
  s.Must("ADD", 1);  // the shared chains, with iptables-restore
  s.Must("ADD", 2);  // c2's chain and entries over netlink
  // iptables-nft reads back what was sent: iptables-save works (an sctp
  // port sent as a payload match made it fail for the whole table), and
  // CHECK, which reads the table that way, passes.
  RunResult save = fx.Exec("", {"iptables-save", "-t", "nat"});
  REQUIRE(save.exit_code == 0);
  CHECK(absl::StrContains(save.out, "-p sctp -m sctp --dport 9202 -j CNI-HOSTPORT-SETMARK"));
  CHECK(absl::StrContains(save.out, "-p sctp -m comment --comment \"dnat name: \\\"pmnet\\\" id: \\\"c2\\\"\" "
                                    "-m multiport --dports 9202 -j CNI-DN-"));
  s.Must("CHECK", 2);
  s.Must("DEL", 2);
  s.Must("DEL", 1);
  CHECK_FALSE(absl::StrContains(Firewall(fx), "CNI-DN-"));
}

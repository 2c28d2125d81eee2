// GC, ADD and DEL stay in their own network. Two networks share one node,
// each a full list of every plugin with GC that touches shared host state:
// bridge with ipMasq (rules, records) and host-local (reservations, in one
// shared dataDir), portmap (rules, records), bandwidth (ifb, qdiscs) and
// tuning (backups, in one shared dataDir), on either packet-filter backend.
//
//   outside ns (192.168.79.2) --veth-- host "hostnic" (192.168.79.1)
//   host brA (netA, 10.61.0.0/24) -- containers a1, a2
//   host brB (netB, 10.62.0.0/24) -- container b1 (a TCP server, hostPort 9090)
//
// GC of netA (as a runtime calls it, per network, with a cache that knows
// no attachment, so only the plugins' GC runs), first with a partial valid
// list, then with an empty one, must leave every object of netB as it was
// and TCP through netB's port mapping working, and take netA's stale state.
// Also: one pod on both networks, portmap on either backend in each; each
// mapping survives the other network's ADD, DEL and GC.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cni/base/json.h"
#include "cni/runtime/runtime.h"
#include "support/cni_call.h"
#include "support/netns_fixture.h"
#include "support/netns_tools.h"
#include "support/run.h"

namespace {

using cni::Json;
using cni::runtime::Runtime;
using cni::runtime::RuntimeConf;
using namespace cni::test;  // NOLINT: test brevity

// One network of the pair.
struct Network {
  std::string name, bridge, subnet;
};
const Network kNetA{"netA", "brA", "10.61.0.0/24"};
const Network kNetB{"netB", "brB", "10.62.0.0/24"};

// The state directories both networks share.
struct Dirs {
  TempDir ipam, tuning, cache_a, cache_b, gc_cache;
};

// bridge (ipMasq) + host-local, portmap, bandwidth, tuning at 1.1.0 (GC).
cni::runtime::NetworkConfigList List(const Network& n, const std::string& backend, const Dirs& d) {
  Json bridge = {{"type", "bridge"}, {"bridge", n.bridge}, {"isGateway", true}, {"ipMasq", true},
                 {"ipMasqBackend", backend},
                 {"ipam", HostLocalIpam(d.ipam, {n.subnet}, Json::array({{{"dst", "0.0.0.0/0"}}}))}};
  Json portmap = {{"type", "portmap"}, {"backend", backend}, {"capabilities", {{"portMappings", true}}}};
  Json bandwidth = {{"type", "bandwidth"},
                    {"ingressRate", 10'000'000}, {"ingressBurst", 80'000},
                    {"egressRate", 10'000'000}, {"egressBurst", 80'000}};
  Json tuning = {{"type", "tuning"}, {"dataDir", d.tuning.str()}, {"sysctl", {{"net.core.somaxconn", "600"}}}};
  Json list = {{"cniVersion", "1.1.0"}, {"name", n.name},
               {"plugins", Json::array({bridge, portmap, bandwidth, tuning})}};
  auto parsed = cni::runtime::ConfListFromBytes(list.dump());
  REQUIRE(parsed.ok());
  return *parsed;
}

Runtime MakeRuntime(const TempDir& cache) {
  cni::runtime::Options o;
  o.plugin_dirs = {PluginDir()};
  o.cache_dir = cache.str();
  return Runtime(o);
}

RuntimeConf Att(const std::string& id, const std::string& netns, int host_port, const std::string& ifname = "eth0") {
  RuntimeConf rt;
  rt.container_id = id;
  rt.netns = netns;
  rt.ifname = ifname;
  rt.capability_args = {
      {"portMappings", Json::array({{{"hostPort", host_port}, {"containerPort", 80}, {"protocol", "tcp"}}})}};
  return rt;
}

// Retries while the server starts, or while a loaded machine is slow to
// connect or to answer, for 30 s at the most.
bool Reaches(const std::string& netns, const std::string& addr, const std::string& want) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  do {
    if (absl::StrContains(SocatExchange(netns, addr), want)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  } while (std::chrono::steady_clock::now() < deadline);
  return false;
}

// Whether the node itself refuses a connection to `port` on 192.168.79.1:
// then no mapping DNATs it anywhere. A timeout (a loaded machine) proves
// nothing either way, so it is tried again, a few times at the most; an
// answer ends the check at once.
bool Refused(const std::string& netns, int port, const std::string& answer) {
  for (int i = 0; i < 4; ++i) {
    const RunResult r = RunProcess({"/usr/bin/nsenter", "--net=" + netns, "--", "/usr/bin/socat", "-T", "2", "-t", "2",
                                    "-", absl::StrCat("TCP:192.168.79.1:", port, ",connect-timeout=5")},
                                   {kTestPath}, "", 15000);
    if (absl::StrContains(r.out, answer)) return false;
    if (absl::StrContains(r.err, "Connection refused")) return true;
  }
  return false;
}

// An "outside" namespace on a veth to the host, 192.168.79.2 -> .1.
std::string AddOutside(NetnsFixture& fx) {
  std::string outside = fx.AddNetns("outside");
  MustExecLines(fx, "", "ip link add hostnic type veth peer name eth0 netns " + outside +
                            "\nip addr add 192.168.79.1/24 dev hostnic\nip link set hostnic up");
  MustExecLines(fx, outside, "ip addr add 192.168.79.2/24 dev eth0\nip link set eth0 up\nip link set lo up");
  return outside;
}

// The files under `dir`, each as "path: content", recursively.
void AppendFiles(const std::string& dir, std::vector<std::string>& out) {
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    std::ifstream in(it->path());
    std::stringstream text;
    text << in.rdbuf();
    out.push_back(absl::StrCat("file ", it->path().string(), ": ", text.str()));
  }
}

// Everything of the node a GC could touch, line by line: both firewalls
// (counters dropped: traffic moves them), qdiscs, ifb devices, and the
// files of the plugins' records, reservations and backups.
std::set<std::string> NodeState(const NetnsFixture& fx, const Dirs& d) {
  std::string text = fx.Exec("", {"nft", "list", "ruleset"}).out + fx.Exec("", {"iptables-save"}).out +
                     fx.Exec("", {"ip6tables-save"}).out + fx.Exec("", {"tc", "qdisc", "show"}).out +
                     fx.Exec("", {"ip", "-o", "-d", "link", "show", "type", "ifb"}).out;
  static const std::regex counters(R"(counter packets \d+ bytes \d+|\[\d+:\d+\])");
  std::vector<std::string> lines;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::StartsWith(line, "#")) lines.push_back(std::regex_replace(std::string(line), counters, "counter"));
  }
  AppendFiles("/run/cni", lines);
  AppendFiles(d.ipam.str(), lines);
  AppendFiles(d.tuning.str(), lines);
  return {lines.begin(), lines.end()};
}

// The lines of `before` missing from `now`.
std::vector<std::string> Missing(const std::set<std::string>& before, const std::set<std::string>& now) {
  std::vector<std::string> out;
  std::set_difference(before.begin(), before.end(), now.begin(), now.end(), std::back_inserter(out));
  return out;
}

// The lines of `now` that name one of `marks`.
std::vector<std::string> Naming(const std::set<std::string>& now, const std::vector<std::string>& marks) {
  std::vector<std::string> out;
  for (const std::string& line : now) {
    for (const std::string& m : marks) {
      if (absl::StrContains(line, m)) {
        out.push_back(line);
        break;
      }
    }
  }
  return out;
}

}  // namespace

TEST_CASE("GC of one network leaves every object of another network as it was", "[netns][gc][portmap][ipmasq]") {
  NetnsFixture fx;
  const std::string backend = GENERATE(as<std::string>{}, "iptables", "nftables");
  Dirs d;
  std::string outside = AddOutside(fx);
  std::string b1 = fx.AddNetns("b1"), a1 = fx.AddNetns("a1"), a2 = fx.AddNetns("a2");
  auto list_a = List(kNetA, backend, d);
  auto list_b = List(kNetB, backend, d);
  Runtime rt_a = MakeRuntime(d.cache_a), rt_b = MakeRuntime(d.cache_b);

  MustResult(rt_b.AddNetworkList(list_b, Att("gc-b1", b1, 9090)));
  BackgroundProcess server(b1, {"/usr/bin/socat", "TCP-LISTEN:80,reuseaddr,fork", "EXEC:/bin/echo from-b1"});
  REQUIRE(Reaches(outside, "TCP:192.168.79.1:9090,connect-timeout=2", "from-b1"));
  const std::set<std::string> b_only = NodeState(fx, d);

  MustResult(rt_a.AddNetworkList(list_a, Att("gc-a1", a1, 8081)));
  MustResult(rt_a.AddNetworkList(list_a, Att("gc-a2", a2, 8082)));
  {
    const std::set<std::string> all = NodeState(fx, d);
    INFO(absl::StrJoin(Missing(b_only, all), "\n"));
    REQUIRE(Missing(b_only, all).empty());  // A's ADDs left B alone
    // Every kind of A's state is there to be collected.
    const std::vector<std::string> a2_marks = {"gc-a2", "10.61.0.3"};
    REQUIRE(Naming(all, a2_marks).size() >= 5);
  }
  // The containers are gone; their host veths with them.
  fx.DelNetns(a1);
  fx.DelNetns(a2);

  // The runtime's GC of netA: its own cache knows no attachment, so what
  // happens is the plugins' GC alone.
  Runtime gc = MakeRuntime(d.gc_cache);
  auto collect = [&](const std::vector<cni::Attachment>& valid) {
    REQUIRE(gc.GcNetworkList(list_a, valid).ok());
    const std::set<std::string> now = NodeState(fx, d);
    INFO("netB state lost or changed:\n" << absl::StrJoin(Missing(b_only, now), "\n"));
    CHECK(Missing(b_only, now).empty());
    CHECK(Reaches(outside, "TCP:192.168.79.1:9090,connect-timeout=2", "from-b1"));
    CHECK(rt_b.CheckNetworkList(list_b, Att("gc-b1", b1, 9090)).ok());
    return now;
  };
  // host-local keeps its lock and its last reserved address after every
  // release (upstream too): not an attachment's state.
  auto without_ipam_bookkeeping = [&](std::set<std::string> now) {
    std::erase_if(now, [&](const std::string& l) {
      return absl::StartsWith(l, absl::StrCat("file ", d.ipam.str(), "/netA/lock")) ||
             absl::StartsWith(l, absl::StrCat("file ", d.ipam.str(), "/netA/last_reserved_ip")) ||
             absl::StartsWith(l, absl::StrCat("file ", d.ipam.str(), "/netA/.cni-cpp-index/"));
    });
    return now;
  };
  {
    std::set<std::string> now = without_ipam_bookkeeping(collect({{"gc-a1", "eth0"}}));
    INFO("a2's stale state:\n" << absl::StrJoin(Naming(now, {"gc-a2", "10.61.0.3"}), "\n"));
    CHECK(Naming(now, {"gc-a2", "10.61.0.3"}).empty());
    CHECK_FALSE(Naming(now, {"gc-a1"}).empty());  // listed: kept
  }
  {
    std::set<std::string> now = without_ipam_bookkeeping(collect({}));
    INFO("netA's stale state:\n" << absl::StrJoin(Naming(now, {"netA", "gc-a", "10.61.0."}), "\n"));
    CHECK(Naming(now, {"netA", "gc-a", "10.61.0."}).empty());
    // Nothing of A's is left that B did not have (records have no readable
    // names: compared whole).
    std::vector<std::string> extra;
    std::set_difference(now.begin(), now.end(), b_only.begin(), b_only.end(), std::back_inserter(extra));
    std::erase_if(extra, [](const std::string& l) { return !absl::StartsWith(l, "file /run/cni"); });
    INFO(absl::StrJoin(extra, "\n"));
    CHECK(extra.empty());
  }
  REQUIRE(rt_b.DelNetworkList(list_b, Att("gc-b1", b1, 9090)).ok());
  TearDown(fx, {b1, outside}, {"brA", "brB"});
}

TEST_CASE("one pod on two networks: each port mapping survives the other network's ADD, DEL and GC",
          "[netns][gc][portmap]") {
  NetnsFixture fx;
  const std::string backend_a = GENERATE(as<std::string>{}, "nftables", "iptables");
  const std::string backend_b = GENERATE(as<std::string>{}, "nftables", "iptables");
  Dirs d;
  std::string outside = AddOutside(fx);
  std::string pod = fx.AddNetns("pod");
  auto list_a = List(kNetA, backend_a, d);
  auto list_b = List(kNetB, backend_b, d);
  Runtime rt = MakeRuntime(d.cache_a), gc = MakeRuntime(d.gc_cache);
  const RuntimeConf on_a = Att("pod1", pod, 8081, "eth0"), on_b = Att("pod1", pod, 9091, "eth1");
  BackgroundProcess server(pod, {"/usr/bin/socat", "TCP-LISTEN:80,reuseaddr,fork", "EXEC:/bin/echo from-pod"});
  auto reaches = [&](int port) {
    return Reaches(outside, absl::StrCat("TCP:192.168.79.1:", port, ",connect-timeout=2"), "from-pod");
  };
  // A mapping that must be gone: the node refuses the connection itself.
  auto refused = [&](int port) { return Refused(outside, port, "from-pod"); };
  auto a_works = [&] {
    CHECK(reaches(8081));
    CHECK(rt.CheckNetworkList(list_a, on_a).ok());
  };

  MustResult(rt.AddNetworkList(list_a, on_a));
  REQUIRE(reaches(8081));
  MustResult(rt.AddNetworkList(list_b, on_b));  // B's ADD of the same container ID
  a_works();
  CHECK(reaches(9091));
  // Each network's GC with its own attachment valid: nothing changes.
  REQUIRE(gc.GcNetworkList(list_a, std::vector<cni::Attachment>{{"pod1", "eth0"}}).ok());
  REQUIRE(gc.GcNetworkList(list_b, std::vector<cni::Attachment>{{"pod1", "eth1"}}).ok());
  a_works();
  CHECK(reaches(9091));
  REQUIRE(rt.DelNetworkList(list_b, on_b).ok());
  a_works();
  CHECK(refused(9091));
  MustResult(rt.AddNetworkList(list_b, on_b));
  CHECK(reaches(9091));
  // B's GC with the pod no longer valid in B: B's mapping goes, A's stays.
  REQUIRE(gc.GcNetworkList(list_b, std::vector<cni::Attachment>{}).ok());
  a_works();
  CHECK(refused(9091));
  // And the other way round: A's DEL leaves B's mapping. (The runtime
  // DELs an attachment it has collected: the pod's eth1 goes.)
  REQUIRE(rt.DelNetworkList(list_b, on_b).ok());
  MustResult(rt.AddNetworkList(list_b, on_b));
  REQUIRE(rt.DelNetworkList(list_a, on_a).ok());
  CHECK(reaches(9091));
  CHECK(rt.CheckNetworkList(list_b, on_b).ok());
  REQUIRE(rt.DelNetworkList(list_b, on_b).ok());
  TearDown(fx, {pod, outside}, {"brA", "brB"});
}

TEST_CASE("one pod on two networks with rules of the bare-ID kind: DEL of one network leaves the other's",
          "[netns][portmap]") {
  // Rules made before comments named the network (or by upstream) say only
  // the container ID. DEL with prevResult takes only those that match or
  // DNAT to the attachment's own address.
  NetnsFixture fx;
  Dirs d;
  std::string outside = AddOutside(fx);
  std::string pod = fx.AddNetns("pod");
  auto bridge = [&](const Network& n) {
    return NetConf("1.0.0", n.name, "bridge",
                   {{"bridge", n.bridge}, {"isGateway", true},
                    // The outside is reached through netB, whose mapping answers.
                    {"ipam", HostLocalIpam(d.ipam, {n.subnet},
                                           n.name == "netB" ? Json::array({{{"dst", "192.168.79.0/24"}}})
                                                            : Json::array())}});
  };
  RunResult add_a = CallPlugin("bridge", "ADD", bridge(kNetA).dump(), pod, "pod1");
  MustSucceed(add_a, "bridge ADD netA");
  RunResult add_b = CallPlugin("bridge", "ADD", bridge(kNetB).dump(), pod, "pod1", OnInterface("eth1"));
  MustSucceed(add_b, "bridge ADD netB");
  std::string rules = "add table ip cni_hostport\nadd chain ip cni_hostport hostports\n"
                      "add chain ip cni_hostport prerouting { type nat hook prerouting priority -100 ; }\n"
                      "add rule ip cni_hostport prerouting fib daddr type local jump hostports\n"
                      "add chain ip cni_hostport masquerading { type nat hook postrouting priority 100 ; }\n";
  for (const auto& [port, addr] : {std::pair{8081, "10.61.0.2"}, std::pair{9091, "10.62.0.2"}}) {
    absl::StrAppend(&rules, "add rule ip cni_hostport hostports tcp dport ", port, " dnat to ", addr,
                    ":80 comment \"pod1\"\n", "add rule ip cni_hostport masquerading ip saddr ", addr, " ip daddr ",
                    addr, " masquerade comment \"pod1\"\n");
  }
  TempDir nft_dir;
  std::ofstream(nft_dir.str() + "/rules.nft") << rules;
  MustExec(fx, "", {"nft", "-f", nft_dir.str() + "/rules.nft"});
  BackgroundProcess server(pod, {"/usr/bin/socat", "TCP-LISTEN:80,reuseaddr,fork", "EXEC:/bin/echo from-pod"});
  REQUIRE(Reaches(outside, "TCP:192.168.79.1:9091,connect-timeout=2", "from-pod"));

  auto portmap = [&](const Network& n, const RunResult& add, int port) {
    Json maps = Json::array({{{"hostPort", port}, {"containerPort", 80}, {"protocol", "tcp"}}});
    return NetConf("1.0.0", n.name, "portmap", {{"backend", "nftables"}, {"runtimeConfig", {{"portMappings", maps}}}},
                   Json::parse(add.out))
        .dump();
  };
  MustSucceed(CallPlugin("portmap", "DEL", portmap(kNetA, add_a, 8081), pod, "pod1"), "portmap DEL netA");
  std::string table = MustExec(fx, "", {"nft", "list", "table", "ip", "cni_hostport"});
  INFO(table);
  CHECK_FALSE(absl::StrContains(table, "10.61.0.2"));
  CHECK(LinesWith(table, "10.62.0.2").size() == 2);
  CHECK(Reaches(outside, "TCP:192.168.79.1:9091,connect-timeout=2", "from-pod"));
  MustSucceed(CallPlugin("portmap", "DEL", portmap(kNetB, add_b, 9091), pod, "pod1", OnInterface("eth1")),
              "portmap DEL netB");
  CHECK_FALSE(absl::StrContains(MustExec(fx, "", {"nft", "list", "table", "ip", "cni_hostport"}), "pod1"));
  MustSucceed(CallPlugin("bridge", "DEL", bridge(kNetB).dump(), pod, "pod1", OnInterface("eth1")), "bridge DEL B");
  MustSucceed(CallPlugin("bridge", "DEL", bridge(kNetA).dump(), pod, "pod1"), "bridge DEL A");
  TearDown(fx, {pod, outside}, {"brA", "brB"});
}

// The flannel meta plugin on real namespaces: k3s' conflist (flannel +
// portmap + bandwidth, exactly as k3s writes it) through the runtime library,
// IPv4, IPv6 and dual stack, FLANNEL_IPMASQ true and false; and the cross-node
// path: two "nodes" (namespaces) with flannel subnets of one network joined by
// a vxlan set up as flanneld's vxlan backend does, a pod on each pinging the
// other.
//
// The saved delegate configurations are compared with the bytes upstream's
// plugin writes, derived by hand from flannel-io/cni-plugin v1.9.1-flannel1
// (flannel.go, flannel_linux.go): a Go map marshalled by encoding/json, so
// keys sorted, compact.

#include <chrono>
#include <filesystem>
#include <functional>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cni/base/error.h"
#include "cni/base/ip.h"
#include "cni/base/json.h"
#include "cni/net/netns.h"
#include "cni/protocol/version.h"
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

// k3s' /var/lib/rancher/k3s/agent/etc/cni/net.d/10-flannel.conflist, as
// pkg/agent/flannel/setup_linux.go writes it (k3s commit 638b0c4).
constexpr const char* kK3sConflist = R"({
  "name":"cbr0",
  "cniVersion":"1.0.0",
  "plugins":[
    {
      "type":"flannel",
      "delegate":{
        "hairpinMode":true,
        "forceAddress":true,
        "isDefaultGateway":true
      }
    },
    {
      "type":"portmap",
      "capabilities":{
        "portMappings":true
      }
    },
    {
      "type":"bandwidth",
      "capabilities":{
        "bandwidth":true
      }
    }
  ]
}
)";

void WriteFile(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

struct Family {
  std::string name;
  bool v4, v6;
};

// A subnet.env as flanneld writes it for k3s' default cluster CIDRs.
std::string SubnetEnv(const Family& f, bool ipmasq) {
  std::string s;
  if (f.v4) s += "FLANNEL_NETWORK=10.42.0.0/16\nFLANNEL_SUBNET=10.42.0.1/24\n";
  if (f.v6) s += "FLANNEL_IPV6_NETWORK=2001:cafe:42::/56\nFLANNEL_IPV6_SUBNET=2001:cafe:42::1/64\n";
  return absl::StrCat(s, "FLANNEL_MTU=1450\nFLANNEL_IPMASQ=", ipmasq ? "true" : "false", "\n");
}

// What upstream's flannel plugin saves for the k3s conflist and SubnetEnv(f, ipmasq).
std::string UpstreamSaved(const Family& f, bool ipmasq) {
  std::vector<std::string> ranges, routes;
  if (f.v4) {
    ranges.push_back(R"([{"subnet":"10.42.0.0/24"}])");
    routes.push_back(R"({"dst":"10.42.0.0/16"})");
  }
  if (f.v6) {
    ranges.push_back(R"([{"subnet":"2001:cafe:42::/64"}])");
    routes.push_back(R"({"dst":"2001:cafe:42::/56"})");
  }
  return absl::StrCat(R"({"cniVersion":"1.0.0","forceAddress":true,"hairpinMode":true,"ipMasq":)",
                      ipmasq ? "false" : "true", R"(,"ipam":{"ranges":[)", absl::StrJoin(ranges, ","),
                      R"(],"routes":[)", absl::StrJoin(routes, ","),
                      R"(],"type":"host-local"},"isDefaultGateway":true,"isGateway":true,"mtu":1450,)"
                      R"("name":"cbr0","type":"bridge"})");
}

RuntimeConf Att(const std::string& id, const std::string& netns, const Json& caps = Json::object()) {
  RuntimeConf rt;
  rt.container_id = id;
  rt.netns = netns;
  rt.ifname = "eth0";
  rt.capability_args = caps;
  return rt;
}

// The private host namespace's nat rules, iptables and ip6tables.
std::string NatRules(const NetnsFixture& fx, const std::string& netns = "") {
  return fx.Exec(netns, {"iptables-save", "-t", "nat"}).out + fx.Exec(netns, {"ip6tables-save", "-t", "nat"}).out +
         fx.Exec(netns, {"nft", "list", "ruleset"}).out;
}

// True when a MASQUERADE rule carries the comment of container `id` (the
// bridge's ipMasq chain; portmap's masquerade rules carry no container ID).
bool Masquerades(const std::string& rules, const std::string& id) {
  for (absl::string_view line : absl::StrSplit(rules, '\n')) {
    if (absl::StrContains(line, "-j MASQUERADE") && absl::StrContains(line, absl::StrCat("id: \\\"", id, "\\\""))) {
      return true;
    }
  }
  return absl::StrContains(rules, "cni_plugins_masquerade");
}

bool Reaches(const std::string& netns, const std::string& addr, const std::string& want) {
  for (int i = 0; i < 16; ++i) {
    if (absl::StrContains(SocatExchange(netns, addr), want)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  return false;
}

std::vector<std::string> Bwp(const NetnsFixture& fx) {
  std::vector<std::string> out;
  for (const std::string& l : fx.Links()) {
    if (absl::StartsWith(l, "bwp")) out.push_back(l);
  }
  return out;
}

}  // namespace

TEST_CASE("flannel netns: the k3s conflist (flannel, portmap, bandwidth) through the runtime library",
          "[netns][flannel]") {
  Family family = GENERATE(Family{"IPv4", true, false}, Family{"IPv6", false, true}, Family{"dual stack", true, true});
  bool ipmasq = GENERATE(true, false);
  INFO(family.name << ", FLANNEL_IPMASQ=" << ipmasq);
  NetnsFixture fx;
  WriteFile("/run/flannel/subnet.env", SubnetEnv(family, ipmasq));
  auto list = cni::runtime::ConfListFromBytes(kK3sConflist);
  REQUIRE(list.ok());
  cni::runtime::Options o;
  o.plugin_dirs = {PluginDir()};
  Runtime rt(o);
  std::string ns_a = fx.AddNetns("poda"), ns_b = fx.AddNetns("podb");
  // kubelet's capability arguments for pod A: a hostPort and a bandwidth limit.
  Json caps = {{"portMappings", Json::array({{{"hostPort", 8080}, {"containerPort", 80}, {"protocol", "tcp"}}})},
               {"bandwidth", {{"ingressRate", 100000000}, {"ingressBurst", 1000000},
                              {"egressRate", 100000000}, {"egressBurst", 1000000}}}};
  cni::Result a = MustResult(rt.AddNetworkList(*list, Att("pod-a", ns_a, caps)));
  cni::Result b = MustResult(rt.AddNetworkList(*list, Att("pod-b", ns_b)));

  // The delegate configuration is saved as upstream saves it.
  CHECK(ReadFile("/var/lib/cni/flannel/pod-a") == UpstreamSaved(family, ipmasq));
  CHECK(ReadFile("/var/lib/cni/flannel/pod-b") == UpstreamSaved(family, ipmasq));
  REQUIRE(a.ips.size() == (family.v4 && family.v6 ? 2u : 1u));
  for (const cni::IpConfig& ip : a.ips) {
    CHECK(ip.address.ToString().rfind(ip.address.addr().is_v4() ? "10.42.0." : "2001:cafe:42::", 0) == 0);
    CHECK(ip.address.len() == (ip.address.addr().is_v4() ? 24 : 64));
  }
  // Pod to pod, each family.
  for (size_t i = 0; i < b.ips.size(); ++i) {
    CHECK(Ping(ns_a, b.ips[i].address.addr(), 8000));
    CHECK(Ping(ns_b, a.ips[i].address.addr(), 8000));
  }
  // The bridge masquerades exactly when flanneld does not.
  CHECK(Masquerades(NatRules(fx), "pod-a") == !ipmasq);
  // portmap: the node reaches pod A through its hostPort (on cni0's gateway
  // address), and so does pod A itself (hairpin: k3s' hairpinMode); bandwidth:
  // pod A's ifb exists.
  BackgroundProcess server(ns_a, {"/usr/bin/socat", "TCP6-LISTEN:80,reuseaddr,fork", "EXEC:/usr/bin/env"});
  for (const cni::IpConfig& ip : a.ips) {
    std::string gw = ip.gateway->ToString();
    std::string target = ip.gateway->is_v4() ? absl::StrCat("TCP:", gw, ":8080,connect-timeout=1")
                                             : absl::StrCat("TCP:[", gw, "]:8080,connect-timeout=1");
    INFO(target);
    CHECK(Reaches("", target, "SOCAT_SOCKPORT=80"));
    CHECK(Reaches(ns_a, target, "SOCAT_SOCKPORT=80"));
  }
  CHECK(Bwp(fx).size() == 1);

  CHECK(rt.CheckNetworkList(*list, Att("pod-a", ns_a, caps)).ok());
  CHECK(rt.CheckNetworkList(*list, Att("pod-b", ns_b)).ok());

  REQUIRE(rt.DelNetworkList(*list, Att("pod-a", ns_a, caps)).ok());
  REQUIRE(rt.DelNetworkList(*list, Att("pod-b", ns_b)).ok());
  CHECK(rt.DelNetworkList(*list, Att("pod-b", ns_b)).ok());  // DEL again
  CHECK_FALSE(std::filesystem::exists("/var/lib/cni/flannel/pod-a"));
  CHECK_FALSE(std::filesystem::exists("/var/lib/cni/flannel/pod-b"));
  std::vector<std::string> left;
  for (const auto& e : std::filesystem::directory_iterator("/var/lib/cni/networks/cbr0")) {
    std::string n = e.path().filename();
    if (cni::net::IpAddress::Parse(n).ok()) left.push_back(n);
  }
  CHECK(left.empty());
  CHECK(Bwp(fx).empty());
  CHECK_FALSE(absl::StrContains(NatRules(fx), "pod-a"));
  TearDown(fx, {ns_a, ns_b}, {"cni0"});
}

TEST_CASE("flannel netns: DEL after the subnet file is gone, and ADD without one changes nothing",
          "[netns][flannel]") {
  NetnsFixture fx;
  auto list = cni::runtime::ConfListFromBytes(kK3sConflist);
  REQUIRE(list.ok());
  cni::runtime::Options o;
  o.plugin_dirs = {PluginDir()};
  Runtime rt(o);
  std::string ns = fx.AddNetns("pod");

  // No subnet file (flanneld not up yet): a clear error, code 11, nothing made.
  absl::StatusOr<Json> early = rt.AddNetworkList(*list, Att("pod-x", ns));
  REQUIRE_FALSE(early.ok());
  CHECK(cni::CodeOf(early.status()) == 11);
  CHECK(absl::StrContains(early.status().message(), "/run/flannel/subnet.env"));
  CHECK(fx.Links() == std::vector<std::string>{"lo"});
  CHECK_FALSE(std::filesystem::exists("/var/lib/cni/flannel"));
  CHECK(rt.StatusNetworkList(*list).ok());  // 1.0.0 list: STATUS is not asked

  // A malformed one: code 7, nothing made.
  WriteFile("/run/flannel/subnet.env", "FLANNEL_NETWORK=10.42.0.0/16\nFLANNEL_SUBNET=10.42.0.1/24\n");
  absl::StatusOr<Json> bad = rt.AddNetworkList(*list, Att("pod-x", ns));
  REQUIRE_FALSE(bad.ok());
  CHECK(cni::CodeOf(bad.status()) == 7);
  CHECK(fx.Links() == std::vector<std::string>{"lo"});

  WriteFile("/run/flannel/subnet.env", SubnetEnv({"IPv4", true, false}, true));
  MustResult(rt.AddNetworkList(*list, Att("pod-x", ns)));
  CHECK(fx.Links(ns).size() == 2);
  // flanneld stopped and its file went with /run: DEL still cleans up, with
  // the saved configuration.
  std::filesystem::remove("/run/flannel/subnet.env");
  REQUIRE(rt.DelNetworkList(*list, Att("pod-x", ns)).ok());
  CHECK(fx.Links(ns) == std::vector<std::string>{"lo"});
  CHECK_FALSE(std::filesystem::exists("/var/lib/cni/flannel/pod-x"));
  CHECK(rt.DelNetworkList(*list, Att("pod-x", ns)).ok());
  TearDown(fx, {ns}, {"cni0"});
}

TEST_CASE("flannel netns: GC and STATUS of the k3s conflist at cniVersion 1.1.0", "[netns][flannel]") {
  NetnsFixture fx;
  Json conflist = Json::parse(kK3sConflist);
  conflist["cniVersion"] = "1.1.0";
  auto list = cni::runtime::ConfListFromBytes(conflist.dump());
  REQUIRE(list.ok());
  cni::runtime::Options o;
  o.plugin_dirs = {PluginDir()};
  Runtime rt(o);
  // STATUS: not ready until flanneld has written the subnet file.
  absl::Status early = rt.StatusNetworkList(*list);
  CHECK(cni::CodeOf(early) == 50);
  WriteFile("/run/flannel/subnet.env", SubnetEnv({"IPv4", true, false}, true));
  CHECK(rt.StatusNetworkList(*list).ok());

  std::string ns_x = fx.AddNetns("podx"), ns_y = fx.AddNetns("pody");
  MustResult(rt.AddNetworkList(*list, Att("pod-x", ns_x)));
  MustResult(rt.AddNetworkList(*list, Att("pod-y", ns_y)));
  auto reservations = [] {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator("/var/lib/cni/networks/cbr0")) {
      if (cni::net::IpAddress::Parse(e.path().filename().string()).ok()) out.push_back(e.path().filename());
    }
    return out;
  };
  REQUIRE(reservations().size() == 2);
  // pod-y's namespace went away and the runtime lost its cache entry: only
  // GC can find what is left of it (its saved configuration, its address).
  fx.DelNetns(ns_y);
  std::filesystem::remove("/var/lib/cni/results/cbr0-pod-y-eth0");
  REQUIRE(rt.GcNetworkList(*list, std::vector<cni::Attachment>{{"pod-x", "eth0"}}).ok());
  CHECK(std::filesystem::exists("/var/lib/cni/flannel/pod-x"));
  CHECK_FALSE(std::filesystem::exists("/var/lib/cni/flannel/pod-y"));
  CHECK(reservations().size() == 1);
  CHECK(rt.CheckNetworkList(*list, Att("pod-x", ns_x)).ok());
  REQUIRE(rt.DelNetworkList(*list, Att("pod-x", ns_x)).ok());
  CHECK(reservations().empty());
  TearDown(fx, {ns_x}, {"cni0"});
}

TEST_CASE("flannel netns: our flannel delegating to upstream's plugins, and ours deleting what they made",
          "[netns][flannel][differential]") {
  for (const char* p : {"bridge", "host-local", "portmap", "bandwidth"}) {
    if (!std::filesystem::exists(std::string(kUpstreamDir) + "/" + p)) {
      WARN("no upstream " << p << " in /usr/lib/cni: differential skipped");
      return;
    }
  }
  NetnsFixture fx;
  WriteFile("/run/flannel/subnet.env", SubnetEnv({"IPv4", true, false}, false));
  auto list = cni::runtime::ConfListFromBytes(kK3sConflist);
  REQUIRE(list.ok());
  // Our flannel alone in the first directory; everything else from upstream.
  TempDir only_flannel;
  std::filesystem::create_symlink(PluginDir() + "/flannel", only_flannel.path() / "flannel");
  cni::runtime::Options up;
  up.plugin_dirs = {only_flannel.str(), kUpstreamDir};
  cni::runtime::Options ours;
  ours.plugin_dirs = {PluginDir()};
  std::string ns_a = fx.AddNetns("poda"), ns_b = fx.AddNetns("podb");
  Json caps = {{"portMappings", Json::array({{{"hostPort", 8080}, {"containerPort", 80}, {"protocol", "tcp"}}})}};
  cni::Result a = MustResult(Runtime(up).AddNetworkList(*list, Att("pod-a", ns_a, caps)));
  cni::Result b = MustResult(Runtime(ours).AddNetworkList(*list, Att("pod-b", ns_b)));
  CHECK(ReadFile("/var/lib/cni/flannel/pod-a") == UpstreamSaved({"IPv4", true, false}, false));
  CHECK(Ping(ns_a, b.ips[0].address.addr(), 8000));
  CHECK(Ping(ns_b, a.ips[0].address.addr(), 8000));
  CHECK(Masquerades(NatRules(fx), "pod-a"));  // upstream's bridge, same chain names
  CHECK(Runtime(ours).CheckNetworkList(*list, Att("pod-a", ns_a, caps)).ok());
  // The node switches to our plugins: ours delete what upstream's made.
  REQUIRE(Runtime(ours).DelNetworkList(*list, Att("pod-a", ns_a, caps)).ok());
  REQUIRE(Runtime(ours).DelNetworkList(*list, Att("pod-b", ns_b)).ok());
  CHECK_FALSE(absl::StrContains(NatRules(fx), "pod-a"));
  CHECK(fx.Links(ns_a) == std::vector<std::string>{"lo"});
  CHECK_FALSE(std::filesystem::exists("/var/lib/cni/flannel/pod-a"));
  TearDown(fx, {ns_a, ns_b}, {"cni0"});
}

namespace {

// One flannel node (index 0 or 1): a namespace with an underlay interface,
// flannel.1 (vxlan VNI 1 over IPv4, port 8472, no learning, with the network
// address of the node's subnet as /32) and, for dual stack, flannel-v6.1 (the
// same over IPv6, /128), as flanneld's vxlan backend makes them; its own
// subnet file, data directories and runtime cache.
struct FlannelNode {
  int index = 0;
  bool dual = false;
  std::string ns, uplink, mac4, mac6;
  TempDir dir;

  std::string underlay4() const { return absl::StrCat("192.168.50.", index + 1); }
  std::string underlay6() const { return absl::StrCat("fd00:50::", index + 1); }
  std::string subnet4() const { return absl::StrCat("10.42.", index, ".0"); }       // also flannel.1's address
  std::string subnet6() const { return absl::StrCat("2001:cafe:42:", index, "::"); }  // also flannel-v6.1's
  std::string SubnetEnv() const {
    std::string s = absl::StrCat("FLANNEL_NETWORK=10.42.0.0/16\nFLANNEL_SUBNET=10.42.", index, ".1/24\n");
    if (dual) absl::StrAppend(&s, "FLANNEL_IPV6_NETWORK=2001:cafe:42::/56\nFLANNEL_IPV6_SUBNET=", subnet6(), "1/64\n");
    return s + "FLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n";
  }
};

std::string AddVxlan(NetnsFixture& fx, const FlannelNode& n, const std::string& name, const std::string& local,
                     const std::string& mtu, const std::string& address) {
  MustExec(fx, n.ns, {"ip", "link", "add", name, "type", "vxlan", "id", "1", "local", local, "dev", n.uplink,
                      "dstport", "8472", "nolearning"});
  MustExec(fx, n.ns, {"ip", "link", "set", name, "mtu", mtu, "up"});
  MustExec(fx, n.ns, {"ip", "addr", "add", address, "dev", name, "nodad"});
  return LinkJson(fx, n.ns, name)["address"].get<std::string>();
}

void SetUpNode(NetnsFixture& fx, FlannelNode& n) {
  MustExec(fx, n.ns, {"ip", "link", "set", "lo", "up"});
  MustExec(fx, n.ns, {"ip", "addr", "add", n.underlay4() + "/24", "dev", n.uplink});
  MustExec(fx, n.ns, {"ip", "addr", "add", n.underlay6() + "/64", "dev", n.uplink, "nodad"});
  MustExec(fx, n.ns, {"ip", "link", "set", n.uplink, "up"});
  n.mac4 = AddVxlan(fx, n, "flannel.1", n.underlay4(), "1450", n.subnet4() + "/32");
  if (n.dual) n.mac6 = AddVxlan(fx, n, "flannel-v6.1", n.underlay6(), "1430", n.subnet6() + "/128");
  WriteFile(n.dir.str() + "/subnet.env", n.SubnetEnv());
}

// What flanneld's vxlan backend programs on `n` for the remote node `peer`,
// per family: a route to the peer's subnet via the peer's vxlan address
// (onlink), a permanent neighbour entry for that address, and the fdb entry
// sending its MAC to the peer's underlay address.
void Peer(NetnsFixture& fx, const FlannelNode& n, const FlannelNode& peer) {
  struct Fam {
    std::string dev, gw, mac, underlay, subnet;
  };
  std::vector<Fam> fams = {{"flannel.1", peer.subnet4(), peer.mac4, peer.underlay4(), peer.subnet4() + "/24"}};
  if (n.dual) fams.push_back({"flannel-v6.1", peer.subnet6(), peer.mac6, peer.underlay6(), peer.subnet6() + "/64"});
  for (const Fam& f : fams) {
    MustExec(fx, n.ns, {"ip", "neigh", "replace", f.gw, "lladdr", f.mac, "dev", f.dev, "nud", "permanent"});
    MustExec(fx, n.ns, {"bridge", "fdb", "append", f.mac, "dev", f.dev, "dst", f.underlay});
    MustExec(fx, n.ns, {"ip", "route", "add", f.subnet, "via", f.gw, "dev", f.dev, "onlink"});
  }
}

// The k3s conflist with this node's subnet file, flannel dataDir and
// host-local dataDir (the "ipam" base flannel completes).
cni::runtime::NetworkConfigList NodeList(const FlannelNode& n) {
  Json list = Json::parse(kK3sConflist);
  list["plugins"][0]["subnetFile"] = n.dir.str() + "/subnet.env";
  list["plugins"][0]["dataDir"] = n.dir.str() + "/flannel";
  list["plugins"][0]["ipam"] = {{"dataDir", n.dir.str() + "/ipam"}};
  auto parsed = cni::runtime::ConfListFromBytes(list.dump());
  REQUIRE(parsed.ok());
  return *parsed;
}

// The runtime of node `n`: our plugins, the node's own result cache.
cni::runtime::Options NodeOptions(const FlannelNode& n) {
  cni::runtime::Options o;
  o.plugin_dirs = {PluginDir()};
  o.cache_dir = n.dir.str() + "/cache";
  return o;
}

// Runs `fn` in node `n`'s namespace: the plugins the runtime starts from
// there run in the node, as on a real node.
absl::Status OnNode(const FlannelNode& n, const std::function<absl::Status()>& fn) {
  auto ns = cni::net::Netns::Open(n.ns);
  if (!ns.ok()) return ns.status();
  return ns->Run(fn);
}

uint64_t TxPackets(const NetnsFixture& fx, const std::string& ns, const std::string& link) {
  Json j = Json::parse(MustExec(fx, ns, {"ip", "-s", "-j", "link", "show", "dev", link}));
  return j.at(0).at("stats64").at("tx").at("packets").get<uint64_t>();
}

}  // namespace

TEST_CASE("flannel netns: pods on two nodes joined by a flannel vxlan reach each other", "[netns][flannel]") {
  bool dual = GENERATE(false, true);
  INFO((dual ? "dual stack" : "IPv4"));
  NetnsFixture fx;
  FlannelNode nodes[2];
  // The underlay: one veth between the nodes.
  for (int i = 0; i < 2; ++i) {
    nodes[i].index = i;
    nodes[i].dual = dual;
    nodes[i].ns = fx.AddNetns(absl::StrCat("node", i));
    nodes[i].uplink = absl::StrCat("underlay", i);
  }
  MustExec(fx, "", {"ip", "link", "add", "underlay0", "netns", "node0", "type", "veth", "peer", "name", "underlay1",
                    "netns", "node1"});
  for (FlannelNode& n : nodes) SetUpNode(fx, n);
  Peer(fx, nodes[0], nodes[1]);
  Peer(fx, nodes[1], nodes[0]);

  std::string pods[2] = {fx.AddNetns("pod0"), fx.AddNetns("pod1")};
  std::string ids[2] = {"pod-0", "pod-1"};
  cni::Result results[2];
  for (int i = 0; i < 2; ++i) {
    Runtime rt(NodeOptions(nodes[i]));
    auto list = NodeList(nodes[i]);
    absl::StatusOr<Json> added = absl::InternalError("not run");
    REQUIRE(OnNode(nodes[i], [&] {
              added = rt.AddNetworkList(list, Att(ids[i], pods[i]));
              return absl::OkStatus();
            }).ok());
    results[i] = MustResult(added);
    REQUIRE(results[i].ips.size() == (dual ? 2u : 1u));
    // Each pod's addresses come from its own node's subnets.
    CHECK(cni::net::IpPrefix::Parse(nodes[i].subnet4() + "/24")->Contains(results[i].ips[0].address.addr()));
    if (dual) CHECK(cni::net::IpPrefix::Parse(nodes[i].subnet6() + "/64")->Contains(results[i].ips[1].address.addr()));
    CHECK(LinkJson(fx, nodes[i].ns, "cni0")["mtu"] == 1450);
  }
  // Each node got its bridge; the host namespace has nothing.
  CHECK(fx.Links() == std::vector<std::string>{"lo"});

  // Pod to pod across the nodes, each family through its vxlan device.
  for (size_t f = 0; f < results[0].ips.size(); ++f) {
    std::string dev = f == 0 ? "flannel.1" : "flannel-v6.1";
    INFO(dev);
    uint64_t tx_before = TxPackets(fx, nodes[0].ns, dev);
    CHECK(Ping(pods[0], results[1].ips[f].address.addr(), 8000));
    CHECK(Ping(pods[1], results[0].ips[f].address.addr(), 8000));
    CHECK(TxPackets(fx, nodes[0].ns, dev) > tx_before);
  }
  // FLANNEL_IPMASQ=true: the bridge does not masquerade, pod 1 sees pod 0's
  // own address.
  BackgroundProcess server(pods[1], {"/usr/bin/socat", "TCP-LISTEN:7000,reuseaddr,fork", "EXEC:/usr/bin/env"});
  CHECK(Reaches(pods[0], absl::StrCat("TCP:", results[1].ips[0].address.addr().ToString(), ":7000,connect-timeout=1"),
                absl::StrCat("SOCAT_PEERADDR=", results[0].ips[0].address.addr().ToString())));

  for (int i = 0; i < 2; ++i) {
    Runtime rt(NodeOptions(nodes[i]));
    auto list = NodeList(nodes[i]);
    CHECK(OnNode(nodes[i], [&] { return rt.CheckNetworkList(list, Att(ids[i], pods[i])); }).ok());
    absl::Status del = OnNode(nodes[i], [&] { return rt.DelNetworkList(list, Att(ids[i], pods[i])); });
    INFO(del.ToString());
    CHECK(del.ok());
    CHECK_FALSE(std::filesystem::exists(nodes[i].dir.str() + "/flannel/" + ids[i]));
    CHECK(fx.Links(pods[i]) == std::vector<std::string>{"lo"});
  }
  TearDown(fx, {pods[0], pods[1], nodes[0].ns, nodes[1].ns});
}

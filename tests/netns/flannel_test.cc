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
#include <sys/mount.h>

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
#include "cni/error.h"
#include "cni/json.h"
#include "cni/net/ip.h"
#include "cni/net/netns.h"
#include "cni/runtime.h"
#include "cni/version.h"
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

// After NetnsFixture (the mount namespace is private): /var/lib is a tmpfs for
// this process, so the conflist's defaults (/var/lib/cni/flannel,
// /var/lib/cni/networks, the runtime's /var/lib/cni/results) never touch the
// machine.
struct PrivateVarLib {
  PrivateVarLib() { REQUIRE(::mount("tmpfs", "/var/lib", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") == 0); }
  ~PrivateVarLib() { ::umount2("/var/lib", MNT_DETACH); }
};

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

cni::Result MustParse(const absl::StatusOr<Json>& j) {
  INFO((j.ok() ? std::string() : j.status().ToString()));
  REQUIRE(j.ok());
  auto r = cni::ParseResult(*j);
  REQUIRE(r.ok());
  return *r;
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
  PrivateVarLib var_lib;
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
  cni::Result a = MustParse(rt.AddNetworkList(*list, Att("pod-a", ns_a, caps)));
  cni::Result b = MustParse(rt.AddNetworkList(*list, Att("pod-b", ns_b)));

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
  PrivateVarLib var_lib;
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
  MustParse(rt.AddNetworkList(*list, Att("pod-x", ns)));
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

namespace {

// One flannel node: a namespace with an underlay interface, flannel.1 (vxlan
// VNI 1, port 8472, no learning, the subnet's network address /32) and its own
// subnet file, data dirs and runtime cache.
struct FlannelNode {
  std::string ns, underlay_ip, subnet_net, subnet_env, mac;
  TempDir dir;
};

void SetUpNode(NetnsFixture& fx, FlannelNode& n, const std::string& uplink) {
  MustExec(fx, n.ns, {"ip", "link", "set", "lo", "up"});
  MustExec(fx, n.ns, {"ip", "addr", "add", n.underlay_ip + "/24", "dev", uplink});
  MustExec(fx, n.ns, {"ip", "link", "set", uplink, "up"});
  MustExec(fx, n.ns, {"ip", "link", "add", "flannel.1", "type", "vxlan", "id", "1", "local", n.underlay_ip, "dev",
                      uplink, "dstport", "8472", "nolearning"});
  MustExec(fx, n.ns, {"ip", "link", "set", "flannel.1", "mtu", "1450", "up"});
  MustExec(fx, n.ns, {"ip", "addr", "add", n.subnet_net + "/32", "dev", "flannel.1"});
  n.mac = LinkJson(fx, n.ns, "flannel.1")["address"].get<std::string>();
  WriteFile(n.dir.str() + "/subnet.env", n.subnet_env);
}

// What flanneld's vxlan backend programs on `n` for the remote node `peer`
// (subnet `peer_subnet`): a route via the peer's flannel.1 address (onlink),
// a permanent neighbour entry for it, and the fdb entry sending its MAC to
// the peer's underlay address.
void Peer(NetnsFixture& fx, const FlannelNode& n, const FlannelNode& peer, const std::string& peer_subnet) {
  MustExec(fx, n.ns, {"ip", "neigh", "replace", peer.subnet_net, "lladdr", peer.mac, "dev", "flannel.1", "nud",
                      "permanent"});
  MustExec(fx, n.ns, {"bridge", "fdb", "append", peer.mac, "dev", "flannel.1", "dst", peer.underlay_ip});
  MustExec(fx, n.ns, {"ip", "route", "add", peer_subnet, "via", peer.subnet_net, "dev", "flannel.1", "onlink"});
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

// Runs `fn` with the runtime on node `n`: the plugins it starts run in the
// node's namespace, as on a real node.
template <typename T>
absl::StatusOr<T> OnNode(const FlannelNode& n, const std::function<absl::StatusOr<T>()>& fn) {
  auto ns = cni::net::Netns::Open(n.ns);
  if (!ns.ok()) return ns.status();
  return ns->RunFor<T>(fn);
}

uint64_t TxPackets(const NetnsFixture& fx, const std::string& ns, const std::string& link) {
  Json j = Json::parse(MustExec(fx, ns, {"ip", "-s", "-j", "link", "show", "dev", link}));
  return j.at(0).at("stats64").at("tx").at("packets").get<uint64_t>();
}

}  // namespace

TEST_CASE("flannel netns: pods on two nodes joined by a flannel vxlan reach each other", "[netns][flannel]") {
  NetnsFixture fx;
  FlannelNode a, b;
  a.ns = fx.AddNetns("nodea");
  b.ns = fx.AddNetns("nodeb");
  a.underlay_ip = "192.168.50.1";
  b.underlay_ip = "192.168.50.2";
  a.subnet_net = "10.42.0.0";
  b.subnet_net = "10.42.1.0";
  a.subnet_env = "FLANNEL_NETWORK=10.42.0.0/16\nFLANNEL_SUBNET=10.42.0.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n";
  b.subnet_env = "FLANNEL_NETWORK=10.42.0.0/16\nFLANNEL_SUBNET=10.42.1.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n";
  // The underlay: one veth between the nodes.
  MustExec(fx, "", {"ip", "link", "add", "ula", "netns", "nodea", "type", "veth", "peer", "name", "ulb", "netns",
                    "nodeb"});
  SetUpNode(fx, a, "ula");
  SetUpNode(fx, b, "ulb");
  Peer(fx, a, b, "10.42.1.0/24");
  Peer(fx, b, a, "10.42.0.0/24");

  std::string pod_a = fx.AddNetns("pod-on-a"), pod_b = fx.AddNetns("pod-on-b");
  auto list_a = NodeList(a), list_b = NodeList(b);
  cni::runtime::Options oa, ob;
  oa.plugin_dirs = ob.plugin_dirs = {PluginDir()};
  oa.cache_dir = a.dir.str() + "/cache";
  ob.cache_dir = b.dir.str() + "/cache";
  Runtime rt_a(oa), rt_b(ob);
  cni::Result ra = MustParse(OnNode<Json>(a, [&] { return rt_a.AddNetworkList(list_a, Att("pod-a", pod_a)); }));
  cni::Result rb = MustParse(OnNode<Json>(b, [&] { return rt_b.AddNetworkList(list_b, Att("pod-b", pod_b)); }));
  REQUIRE(ra.ips.size() == 1);
  REQUIRE(rb.ips.size() == 1);
  CHECK(ra.ips[0].address.ToString().rfind("10.42.0.", 0) == 0);
  CHECK(rb.ips[0].address.ToString().rfind("10.42.1.", 0) == 0);
  // Each node got its bridge; the host namespace has nothing.
  CHECK(fx.Links() == std::vector<std::string>{"lo"});
  CHECK(LinkJson(fx, a.ns, "cni0")["mtu"] == 1450);

  uint64_t tx_before = TxPackets(fx, a.ns, "flannel.1");
  CHECK(Ping(pod_a, rb.ips[0].address.addr(), 8000));
  CHECK(Ping(pod_b, ra.ips[0].address.addr(), 8000));
  CHECK(TxPackets(fx, a.ns, "flannel.1") > tx_before);  // through the vxlan
  // FLANNEL_IPMASQ=true: no masquerading by the bridge, pod B sees pod A's own address.
  BackgroundProcess server(pod_b, {"/usr/bin/socat", "TCP-LISTEN:7000,reuseaddr,fork", "EXEC:/usr/bin/env"});
  CHECK(Reaches(pod_a, absl::StrCat("TCP:", rb.ips[0].address.addr().ToString(), ":7000,connect-timeout=1"),
                absl::StrCat("SOCAT_PEERADDR=", ra.ips[0].address.addr().ToString())));

  CHECK(OnNode<bool>(a, [&]() -> absl::StatusOr<bool> {
          absl::Status st = rt_a.CheckNetworkList(list_a, Att("pod-a", pod_a));
          if (!st.ok()) return st;
          return true;
        }).ok());
  for (auto* n : {&a, &b}) {
    Runtime& rt = n == &a ? rt_a : rt_b;
    auto& list = n == &a ? list_a : list_b;
    std::string pod = n == &a ? pod_a : pod_b, id = n == &a ? "pod-a" : "pod-b";
    absl::StatusOr<bool> del = OnNode<bool>(*n, [&]() -> absl::StatusOr<bool> {
      absl::Status st = rt.DelNetworkList(list, Att(id, pod));
      if (!st.ok()) return st;
      return true;
    });
    INFO(del.status().ToString());
    CHECK(del.ok());
    CHECK_FALSE(std::filesystem::exists(n->dir.str() + "/flannel/" + id));
    CHECK(fx.Links(pod) == std::vector<std::string>{"lo"});
  }
  TearDown(fx, {pod_a, pod_b, a.ns, b.ns});
}

// cni_floor: the floor under a plugin call. It issues, in one process and
// without exec, the kernel requests a call cannot avoid, and prints the
// median time of one round. scripts/bench.d/floor adds the execs a call
// makes (the "exec" scenario: a static no-op started the way a runtime
// starts a plugin) and prints ours, upstream, floor and ours/floor.
//
// What a floor round contains: opening the namespaces and netlink sockets a
// call needs, the writes (link creation, enslaving, addresses, routes,
// sysctls, qdiscs, nft commits) and the kernel's own waits (a veth or ifb
// deletion's RCU grace period, a netfilter socket's close). What it leaves
// out: reading and parsing the configuration, IPAM's file locking, result
// JSON, and the reads a plugin does to check the state first (a floor
// assumes it already knows the state).
//
//   cni_floor <scenario> --netns PATH [--iterations N] [--noop PATH]
//   scenarios: exec, bridge-add, veth-del, ptp-add, tuning, bandwidth-add,
//              ifb-del, nft-add, nft-del
// Runs in the caller's network namespace (the bench's private one); `--netns`
// is the container namespace. Prints "<scenario> <median microseconds>".
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cni/exec.h"
#include "cni/fw/nft.h"
#include "cni/fw/nft_batch.h"
#include "cni/net/addr.h"
#include "cni/net/bridge.h"
#include "cni/net/link.h"
#include "cni/net/netlink.h"
#include "cni/net/netns.h"
#include "cni/net/qdisc.h"
#include "cni/net/route.h"
#include "cni/net/sysctl.h"
#include "cni/net/veth.h"

namespace {

using cni::net::IpAddress;
using cni::net::IpPrefix;
using cni::net::LinkInfo;
using cni::net::NetlinkSocket;
using cni::net::Netns;

// Aborts the run with the failing step: a floor that silently skipped a
// request would understate the floor.
void Check(const absl::Status& st, const char* what) {
  if (st.ok()) return;
  std::fprintf(stderr, "cni_floor: %s: %s\n", what, std::string(st.message()).c_str());
  std::exit(1);
}
template <typename T>
T Value(absl::StatusOr<T> v, const char* what) {
  Check(v.status(), what);
  return *std::move(v);
}

IpPrefix Prefix(const char* text) { return Value(IpPrefix::Parse(text), text); }
IpAddress Address(const char* text) { return Value(IpAddress::Parse(text), text); }

struct Options {
  std::string scenario, netns, noop;
  int iterations = 100;
};

// One round: `setup` and `teardown` untimed, `body` timed.
struct Scenario {
  std::function<void()> setup = [] {};
  std::function<void()> body;
  std::function<void()> teardown = [] {};
};

// The container's eth0 and its host end, as bridge/ptp ADD leave them.
cni::net::VethPair MakeVeth(const Netns& container, int mtu = 0) {
  NetlinkSocket cs = Value(NetlinkSocket::OpenIn(container), "container socket");
  NetlinkSocket hs = Value(NetlinkSocket::Open(), "host socket");
  return Value(cni::net::SetupVeth(cs, hs, "eth0", mtu, std::nullopt), "veth");
}
// The host end's index of the container's eth0, made first when missing
// (the bench chains tuning and bandwidth after a ptp attachment).
int EnsureVeth(const Netns& container) {
  NetlinkSocket cs = Value(NetlinkSocket::OpenIn(container), "container socket");
  absl::StatusOr<LinkInfo> eth0 = cni::net::LinkByName(cs, "eth0");
  if (!eth0.ok()) return MakeVeth(container).host_index;
  return Value(cni::net::VethPeerIndex(cs, *eth0), "peer of eth0");
}
void DeleteContainerVeth(const Netns& container) {
  NetlinkSocket cs = Value(NetlinkSocket::OpenIn(container), "container socket");
  Check(cni::net::DeleteLinkByNameIfExists(cs, "eth0"), "delete eth0");
}
void Sysctls(const Netns& ns, std::vector<std::pair<std::string, std::string>> kv) {
  Check(ns.Run([&] {
    for (const auto& [k, v] : kv) Check(cni::net::WriteSysctlHere(k, v), k.c_str());
    return absl::OkStatus();
  }), "sysctls");
}

// bridge ADD with a static address and a default route: the pair, the
// port, the container's sysctls, its address and route. The bridge and its
// gateway address exist already (the steady state of a node).
Scenario BridgeAdd(const Options& o, const Netns& container) {
  NetlinkSocket hs = Value(NetlinkSocket::Open(), "host socket");
  Check(cni::net::DeleteLinkByNameIfExists(hs, "cnifloor0"), "old bridge");
  cni::net::BridgeSpec spec;
  spec.name = "cnifloor0";
  LinkInfo br = Value(cni::net::EnsureBridge(hs, spec), "bridge");
  Check(cni::net::AddAddress(hs, br.index, Prefix("10.31.0.1/24")), "gateway address");
  Scenario s;
  s.body = [&o, &container, br] {
    Netns ns = Value(Netns::Open(o.netns), "open netns");
    NetlinkSocket cs = Value(NetlinkSocket::OpenIn(ns), "container socket");
    NetlinkSocket hs = Value(NetlinkSocket::Open(), "host socket");
    cni::net::VethPair pair = Value(cni::net::SetupVeth(cs, hs, "eth0", 0, std::nullopt), "veth");
    LinkInfo port = Value(cni::net::LinkByIndex(hs, pair.host_index), "host end");
    Check(cni::net::SetLinkMaster(hs, port, br.index), "enslave");
    Sysctls(ns, {{"net/ipv6/conf/eth0/accept_dad", "0"}, {"net/ipv4/conf/eth0/arp_notify", "1"}});
    Check(cni::net::AddAddress(cs, pair.container_index, Prefix("10.31.0.5/24")), "address");
    cni::net::RouteSpec def{.dst = Prefix("0.0.0.0/0"), .gw = Address("10.31.0.1"),
                            .ifindex = pair.container_index};
    Check(cni::net::AddRoute(cs, def), "default route");
  };
  s.teardown = [&container] { DeleteContainerVeth(container); };
  return s;
}

// ptp ADD: the pair (mtu 1400), the container's address and its routes via
// the gateway (/32 link route, subnet and default), the host end's gateway
// /32 and the host route to the container.
Scenario PtpAdd(const Options& o, const Netns& container) {
  Scenario s;
  s.body = [&o] {
    Netns ns = Value(Netns::Open(o.netns), "open netns");
    NetlinkSocket cs = Value(NetlinkSocket::OpenIn(ns), "container socket");
    NetlinkSocket hs = Value(NetlinkSocket::Open(), "host socket");
    cni::net::VethPair pair = Value(cni::net::SetupVeth(cs, hs, "eth0", 1400, std::nullopt), "veth");
    const int c = pair.container_index, h = pair.host_index;
    Check(cni::net::AddAddress(cs, c, Prefix("10.10.0.5/24")), "address");
    Check(cni::net::DeleteRoute(cs, {.dst = Prefix("10.10.0.0/24"), .ifindex = c}), "subnet route");
    Check(cni::net::AddRoute(cs, {.dst = Prefix("10.10.0.1/32"), .ifindex = c}), "gateway route");
    Check(cni::net::AddRoute(cs, {.dst = Prefix("10.10.0.0/24"), .gw = Address("10.10.0.1"), .ifindex = c}),
          "subnet via gateway");
    Check(cni::net::AddRoute(cs, {.dst = Prefix("0.0.0.0/0"), .gw = Address("10.10.0.1"), .ifindex = c}),
          "default route");
    Check(cni::net::AddAddress(hs, h, Prefix("10.10.0.1/32")), "host address");
    Check(cni::net::AddRoute(hs, {.dst = Prefix("10.10.0.5/32"), .ifindex = h}), "host route");
  };
  s.teardown = [&container] { DeleteContainerVeth(container); };
  return s;
}

// bridge or ptp DEL: the container's veth deleted (its peer goes with it).
Scenario VethDel(const Options& o, const Netns& container) {
  Scenario s;
  s.setup = [&container] { MakeVeth(container); };
  s.body = [&o] {
    Netns ns = Value(Netns::Open(o.netns), "open netns");
    NetlinkSocket cs = Value(NetlinkSocket::OpenIn(ns), "container socket");
    LinkInfo eth0 = Value(cni::net::LinkByName(cs, "eth0"), "eth0");
    Check(cni::net::DeleteLink(cs, eth0), "delete");
  };
  return s;
}

// tuning ADD as the bench configures it: mtu, mac, promisc and two sysctls.
Scenario Tuning(const Options& o, const Netns& container) {
  EnsureVeth(container);
  Scenario s;
  s.body = [&o] {
    Netns ns = Value(Netns::Open(o.netns), "open netns");
    NetlinkSocket cs = Value(NetlinkSocket::OpenIn(ns), "container socket");
    LinkInfo eth0 = Value(cni::net::LinkByName(cs, "eth0"), "eth0");
    Check(cni::net::SetLinkMtu(cs, eth0, 1400), "mtu");
    Check(cni::net::SetLinkMac(cs, eth0, Value(cni::net::MacAddress::Parse("c2:00:00:00:00:01"), "mac")),
          "mac");
    Check(cni::net::SetLinkPromiscuous(cs, eth0, true), "promisc");
    Sysctls(ns, {{"net/core/somaxconn", "1024"}, {"net/ipv4/conf/eth0/rp_filter", "2"}});
  };
  s.teardown = [&container] {
    NetlinkSocket cs = Value(NetlinkSocket::OpenIn(container), "container socket");
    LinkInfo eth0 = Value(cni::net::LinkByName(cs, "eth0"), "eth0");
    Check(cni::net::SetLinkMtu(cs, eth0, 1500), "mtu back");
  };
  return s;
}

// bandwidth ADD: the ifb, TBF on it and on the host end, the ingress qdisc
// and the redirect filter. ifb-del: the ifb deleted (bandwidth DEL).
constexpr char kIfb[] = "bwfloor0";
int host_end_index = 0;

void AddShaping(NetlinkSocket& hs) {
  const cni::net::TbfParams tbf{.rate = 1250000, .limit = 80000,
                                .buffer = static_cast<uint32_t>(80000 * 8 * 1e6 / 10000000 *
                                                                cni::net::TicksPerUsec())};
  Check(cni::net::CreateIfb(hs, {.name = kIfb, .mtu = 1500}), "ifb");
  LinkInfo ifb = Value(cni::net::LinkByName(hs, kIfb), "ifb link");
  Check(cni::net::AddTbfQdisc(hs, ifb.index, cni::net::TcHandle(1, 0), tbf), "ifb tbf");
  Check(cni::net::AddIngressQdisc(hs, host_end_index), "ingress");
  Check(cni::net::AddRedirectFilter(hs, host_end_index, ifb.index), "redirect");
  Check(cni::net::AddTbfQdisc(hs, host_end_index, cni::net::TcHandle(1, 0), tbf), "veth tbf");
}
void RemoveShaping() {
  NetlinkSocket hs = Value(NetlinkSocket::Open(), "host socket");
  Check(cni::net::DeleteLinkByNameIfExists(hs, kIfb), "delete ifb");
  (void)cni::net::DeleteQdisc(hs, host_end_index, cni::net::kTcIngress);
  (void)cni::net::DeleteQdisc(hs, host_end_index, cni::net::kTcRoot);
}

Scenario BandwidthAdd(const Netns& container) {
  host_end_index = EnsureVeth(container);
  Scenario s;
  s.body = [] {
    NetlinkSocket hs = Value(NetlinkSocket::Open(), "host socket");
    AddShaping(hs);
  };
  s.teardown = RemoveShaping;
  return s;
}

Scenario IfbDel(const Netns& container) {
  host_end_index = EnsureVeth(container);
  Scenario s;
  s.setup = [] {
    NetlinkSocket hs = Value(NetlinkSocket::Open(), "host socket");
    AddShaping(hs);
  };
  s.body = [] {
    NetlinkSocket hs = Value(NetlinkSocket::Open(), "host socket");
    LinkInfo ifb = Value(cni::net::LinkByName(hs, kIfb), "ifb link");
    Check(cni::net::DeleteLink(hs, ifb), "delete ifb");
  };
  s.teardown = RemoveShaping;
  return s;
}

// portmap or firewall: one netfilter transaction of two rules (a mapping's
// DNAT and masquerade, or firewall's two FORWARD rules) into chains that
// exist, with the handles echoed; nft-del deletes them by handle. Both
// include the socket's close, where the kernel waits for deleted rules.
std::vector<cni::fw::NftRule> added_rules;

void AddTwoRules() {
  using cni::fw::NftBatch;
  using cni::fw::NftFamily;
  using cni::fw::NftRuleSpec;
  NetlinkSocket nl = Value(cni::fw::nft::OpenSocket(), "netfilter socket");
  NftBatch b;
  b.AddRule(NftFamily::kIp, "cni_floor", "forward",
            NftRuleSpec().DestAddress(Prefix("10.88.0.5/32")).CtRelatedEstablished().Accept()
                .Comment("floor"));
  b.AddRule(NftFamily::kIp, "cni_floor", "forward",
            NftRuleSpec().SourceAddress(Prefix("10.88.0.5/32")).Accept().Comment("floor"));
  added_rules.clear();
  Check(b.Commit(nl, &added_rules), "commit");
}

void MakeTable() {
  cni::fw::NftBatch b;
  b.AddTable(cni::fw::NftFamily::kIp, "cni_floor");
  b.AddChain(cni::fw::NftFamily::kIp, "cni_floor", "forward");
  Check(b.Commit(), "table");
}
void DeleteAdded() {
  NetlinkSocket nl = Value(cni::fw::nft::OpenSocket(), "netfilter socket");
  cni::fw::NftBatch b;
  for (const auto& r : added_rules) b.DeleteRule(r);
  Check(b.Commit(nl), "delete rules");
}

Scenario NftAdd() {
  MakeTable();
  Scenario s;
  s.body = AddTwoRules;
  s.teardown = DeleteAdded;
  return s;
}
Scenario NftDel() {
  MakeTable();
  Scenario s;
  s.setup = AddTwoRules;
  s.body = DeleteAdded;
  return s;
}

// One exec of a static no-op, started as cni_bench starts a plugin (config
// on stdin, stdout captured).
Scenario Exec(const Options& o) {
  Scenario s;
  s.body = [&o] {
    auto r = cni::RunCommand({o.noop}, {"CNI_COMMAND=VERSION"}, "{\"cniVersion\":\"1.0.0\"}");
    if (!r.ok() || r->exit_code != 0) {
      std::fprintf(stderr, "cni_floor: %s did not run\n", o.noop.c_str());
      std::exit(1);
    }
  };
  return s;
}

bool ParseArgs(int argc, char** argv, Options& o) {
  if (argc < 2) return false;
  o.scenario = argv[1];
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--netns") o.netns = v;
    else if (k == "--iterations") o.iterations = std::stoi(v);
    else if (k == "--noop") o.noop = v;
    else return false;
  }
  return !o.netns.empty();
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!ParseArgs(argc, argv, o)) {
    std::fprintf(stderr, "usage: cni_floor <scenario> --netns PATH [--iterations N] [--noop PATH]\n");
    return 2;
  }
  Netns container = Value(Netns::Open(o.netns), "container netns");
  Scenario s;
  if (o.scenario == "exec") s = Exec(o);
  else if (o.scenario == "bridge-add") s = BridgeAdd(o, container);
  else if (o.scenario == "ptp-add") s = PtpAdd(o, container);
  else if (o.scenario == "veth-del") s = VethDel(o, container);
  else if (o.scenario == "tuning") s = Tuning(o, container);
  else if (o.scenario == "bandwidth-add") s = BandwidthAdd(container);
  else if (o.scenario == "ifb-del") s = IfbDel(container);
  else if (o.scenario == "nft-add") s = NftAdd();
  else if (o.scenario == "nft-del") s = NftDel();
  else {
    std::fprintf(stderr, "cni_floor: unknown scenario %s\n", o.scenario.c_str());
    return 2;
  }
  std::vector<double> us;
  for (int i = 0; i < o.iterations; ++i) {
    s.setup();
    auto start = std::chrono::steady_clock::now();
    s.body();
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
    s.teardown();
  }
  std::sort(us.begin(), us.end());
  std::printf("%s %.0f\n", o.scenario.c_str(), us[us.size() / 2]);
  return 0;
}

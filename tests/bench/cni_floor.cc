// cni_floor: the floor under a plugin call. It issues, in one process and
// without exec, the kernel requests a call cannot avoid, and prints the
// median time of one round. With --execs N it also times, in the same
// rounds, the N execs the call makes (a static no-op started the way a
// runtime starts a plugin; the "exec" scenario times one alone), and
// scripts/bench.d/floor prints ours, upstream, floor and ours/floor.
//
// What a floor round contains: opening the namespaces and netlink sockets a
// call needs, the writes (link creation, enslaving, addresses, routes,
// sysctls, qdiscs, nft commits), the file a call must leave on disk to undo
// itself later (tuning's backup of the link's values: upstream writes it
// too) and the kernel's own waits (a veth or ifb deletion's RCU grace
// period, a netfilter socket's close). What it leaves out: reading and
// parsing the configuration, IPAM's file locking, result JSON, and the reads
// a plugin does to check the state first (a floor assumes it already knows
// the state).
//
//   cni_floor <scenario> --netns PATH [--iterations N] [--noop PATH]
//             [--bridge NAME] [--rules N] [--execs N] [--data-dir DIR]
//   scenarios: exec, bridge-add, veth-del, ptp-add, tuning, bandwidth-add,
//              ifb-del, nft-add, nft-del, nft-chain-add, nft-portmap-add,
//              nft-masq-node-add
// Runs in the caller's network namespace (the bench's private one); `--netns`
// is the container namespace. Prints "<scenario> <median microseconds>",
// then, with --execs, the median microseconds of a round's execs.
// --bridge: bridge-add and veth-del attach to that existing bridge (one a
// bench has filled with other containers' ports, scripts/bench.d/chains)
// instead of a fresh one of their own, so the floor is measured on a full
// node. --rules N: nft-add and nft-del find N other rules in their chain,
// nft-chain-add N other chains (a node's other containers'), nft-portmap-add
// and nft-masq-node-add N other containers' ipMasq and DNAT chains: see
// there. --data-dir: where tuning writes its backup file (the plugin's
// dataDir in the bench, so the same filesystem); without it the round
// writes no file.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cni/base/exec.h"
#include "cni/base/fs.h"
#include "cni/fw/ipt_rule.h"
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
  std::string scenario, netns, noop, bridge, data_dir;
  int iterations = 100;
  int rules = 0;
  int execs = 0;
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
// The bridge to attach to: --bridge's, or a fresh one with its gateway.
LinkInfo FloorBridge(const Options& o) {
  NetlinkSocket hs = Value(NetlinkSocket::Open(), "host socket");
  if (!o.bridge.empty()) return Value(cni::net::LinkByName(hs, o.bridge), "--bridge");
  Check(cni::net::DeleteLinkByNameIfExists(hs, "cnifloor0"), "old bridge");
  cni::net::BridgeSpec spec;
  spec.name = "cnifloor0";
  LinkInfo br = Value(cni::net::EnsureBridge(hs, spec), "bridge");
  Check(cni::net::AddAddress(hs, br.index, Prefix("10.31.0.1/24")), "gateway address");
  return br;
}

Scenario BridgeAdd(const Options& o, const Netns& container) {
  const LinkInfo br = FloorBridge(o);
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
// With --bridge its host end is a port of that bridge, as bridge DEL finds it.
Scenario VethDel(const Options& o, const Netns& container) {
  std::optional<LinkInfo> br;
  if (!o.bridge.empty()) br = FloorBridge(o);
  Scenario s;
  s.setup = [&container, br] {
    cni::net::VethPair pair = MakeVeth(container);
    if (!br.has_value()) return;
    NetlinkSocket hs = Value(NetlinkSocket::Open(), "host socket");
    LinkInfo port = Value(cni::net::LinkByIndex(hs, pair.host_index), "host end");
    Check(cni::net::SetLinkMaster(hs, port, br->index), "enslave");
  };
  s.body = [&o] {
    Netns ns = Value(Netns::Open(o.netns), "open netns");
    NetlinkSocket cs = Value(NetlinkSocket::OpenIn(ns), "container socket");
    LinkInfo eth0 = Value(cni::net::LinkByName(cs, "eth0"), "eth0");
    Check(cni::net::DeleteLink(cs, eth0), "delete");
  };
  return s;
}

// tuning ADD as the bench configures it: the backup of the link's values
// written as tuning writes it (a temporary file renamed into place), then
// mtu, mac, promisc and two sysctls. The teardown removes the file, as DEL
// does, so every round creates it afresh.
Scenario Tuning(const Options& o, const Netns& container) {
  EnsureVeth(container);
  Scenario s;
  const std::string backup = o.data_dir + "/floor_eth0.json";
  s.body = [&o, backup] {
    Netns ns = Value(Netns::Open(o.netns), "open netns");
    NetlinkSocket cs = Value(NetlinkSocket::OpenIn(ns), "container socket");
    LinkInfo eth0 = Value(cni::net::LinkByName(cs, "eth0"), "eth0");
    if (!o.data_dir.empty()) {
      // As long as tuning's own (meta/tuning/backup.cc) for this config.
      constexpr char kBackup[] =
          "{\n \"mac\": \"c2:00:00:00:00:02\",\n \"promisc\": false,\n \"mtu\": 1500,\n"
          " \"network\": \"bench\"\n}";
      Check(cni::WriteFileAtomic(backup, kBackup, {.mode = 0600, .make_parents = true}), "backup");
    }
    Check(cni::net::SetLinkMtu(cs, eth0, 1400), "mtu");
    Check(cni::net::SetLinkMac(cs, eth0, Value(cni::net::MacAddress::Parse("c2:00:00:00:00:01"), "mac")),
          "mac");
    Check(cni::net::SetLinkPromiscuous(cs, eth0, true), "promisc");
    Sysctls(ns, {{"net/core/somaxconn", "1024"}, {"net/ipv4/conf/eth0/rp_filter", "2"}});
  };
  s.teardown = [&o, &container, backup] {
    NetlinkSocket cs = Value(NetlinkSocket::OpenIn(container), "container socket");
    LinkInfo eth0 = Value(cni::net::LinkByName(cs, "eth0"), "eth0");
    Check(cni::net::SetLinkMtu(cs, eth0, 1500), "mtu back");
    if (!o.data_dir.empty()) Check(cni::RemoveFileAndTemp(backup), "backup removed");
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

// firewall (and portmap's rules): one netfilter transaction of firewall's
// two rules for an address, in iptables-nft's encoding, appended to a base
// chain on the forward hook, with the handles echoed; nft-del deletes them by
// handle. The chain is a base chain because the kernel validates, on every
// commit that adds a rule with an xtables expression or a verdict, each rule
// reachable from the table's base chains (nft_table_validate): with --rules N
// the chain holds N other rules, as CNI-FORWARD holds two per container. Both
// include the socket's close, where the kernel waits for deleted rules.
using cni::fw::IptRule;
using cni::fw::NftFamily;
using cni::fw::NftRuleSpec;
// The rule's iptables-nft encoding (every rule here has one).
NftRuleSpec Nft(const IptRule& rule) { return *rule.ToNft(/*ipv6=*/false); }
std::vector<cni::fw::NftRule> added_rules;

void CommitAdding(cni::fw::NftBatch& b) {
  NetlinkSocket nl = Value(cni::fw::nft::OpenSocket(), "netfilter socket");
  added_rules.clear();
  Check(b.Commit(nl, &added_rules), "commit");
}
void DeleteAdded() {
  NetlinkSocket nl = Value(cni::fw::nft::OpenSocket(), "netfilter socket");
  cni::fw::NftBatch b;
  for (const auto& r : added_rules) b.DeleteRule(r);
  Check(b.Commit(nl), "delete rules");
}
IpPrefix OtherAddress(int i) { return Prefix(absl::StrCat("10.89.", i / 250, ".", i % 250 + 1, "/32").c_str()); }

void AddTwoRules() {
  cni::fw::NftBatch b;
  b.AddRule(NftFamily::kIp, "cni_floor", "forward",
            Nft(IptRule("forward").Dest(Prefix("10.88.0.5/32")).CtRelatedEstablished().Accept()));
  b.AddRule(NftFamily::kIp, "cni_floor", "forward", Nft(IptRule("forward").Source(Prefix("10.88.0.5/32")).Accept()));
  CommitAdding(b);
}

// The table and its base chain, with exactly `others` rules in it.
void MakeFilterTable(int others) {
  cni::fw::NftBatch b;
  b.AddTable(NftFamily::kIp, "cni_floor");
  b.AddChain(NftFamily::kIp, "cni_floor", "forward", cni::fw::NftHook{.type = "filter", .hook = "forward"});
  b.FlushChain(NftFamily::kIp, "cni_floor", "forward");  // a run before this one's
  for (int i = 0; i < others; ++i) {
    b.AddRule(NftFamily::kIp, "cni_floor", "forward", Nft(IptRule("forward").Source(OtherAddress(i)).Accept()));
  }
  Check(b.Commit(), "table");
}

Scenario NftAdd(const Options& o) {
  MakeFilterTable(o.rules);
  Scenario s;
  s.body = AddTwoRules;
  s.teardown = DeleteAdded;
  return s;
}
Scenario NftDel(const Options& o) {
  MakeFilterTable(o.rules);
  Scenario s;
  s.setup = AddTwoRules;
  s.body = DeleteAdded;
  return s;
}

// bridge's ipMasq and portmap's mapping: a chain of the container's own,
// its rules (ipMasq's two), and a jump to it from a base chain of the nat
// table, in one transaction. With --rules N the base chain already jumps to
// N such chains (ipMasq's and portmap's, one each per container), all of
// which the commit's validation walks. Its base chain is not iptables-nft's
// POSTROUTING, so that a namespace's own nat table is never touched.
// Named "nat": xtables NAT targets refuse any other table (nft_compat hands
// the table's name to x_tables). The bench runs in a namespace of its own.
constexpr char kNatTable[] = "nat";
std::string OwnChain(int i) { return absl::StrCat("floor-", i); }
void AddMasqChain(cni::fw::NftBatch& b, const std::string& chain, const IpPrefix& address) {
  b.AddChain(NftFamily::kIp, kNatTable, chain);
  b.AddRule(NftFamily::kIp, kNatTable, chain,
            Nft(IptRule(chain).Dest(Prefix("10.88.0.0/16")).Comment("floor").Accept()));
  b.AddRule(NftFamily::kIp, kNatTable, chain,
            Nft(IptRule(chain).Dest(Prefix("224.0.0.0/4"), true).Comment("floor").Masquerade()));
  b.AddRule(NftFamily::kIp, kNatTable, "floor-postrouting",
            Nft(IptRule("floor-postrouting").Source(address).Comment("floor").Jump(chain)));
}
// The chains of `others` other containers, each made by `add_other`, 100
// containers a commit: each batch stays well inside a socket buffer.
void FillNatTable(int others, const std::function<void(cni::fw::NftBatch&, int)>& add_other) {
  NetlinkSocket nl = Value(cni::fw::nft::OpenSocket(), "netfilter socket");
  const int kPerCommit = 100;
  for (int first = 0; first < others; first += kPerCommit) {
    cni::fw::NftBatch fill;
    for (int i = first; i < std::min(others, first + kPerCommit); ++i) add_other(fill, i);
    Check(fill.Commit(nl), "other containers' chains");
  }
}
void MakeNatTable(int others) {
  cni::fw::NftBatch b;
  b.AddTable(NftFamily::kIp, kNatTable);
  b.AddChain(NftFamily::kIp, kNatTable, "floor-postrouting",
             cni::fw::NftHook{.type = "nat", .hook = "postrouting", .priority = 100});
  Check(b.Commit(), "nat table");
  FillNatTable(others, [](cni::fw::NftBatch& fill, int i) { AddMasqChain(fill, OwnChain(i), OtherAddress(i)); });
}
// A teardown: the probe's chain deleted, with the jump to it that the body's
// commit added into `from`.
void DeleteProbeChain(const std::string& from, const std::string& probe) {
  cni::fw::NftBatch b;
  for (const auto& r : added_rules) {
    if (r.chain == from) b.DeleteRule(r);
  }
  b.FlushChain(NftFamily::kIp, kNatTable, probe);
  b.DeleteChain(NftFamily::kIp, kNatTable, probe);
  Check(b.Commit(), "delete the probe's chain");
}

// The probe container's ipMasq chain and the jump to it from POSTROUTING,
// committed in the body and removed by the teardown.
Scenario MasqProbe() {
  Scenario s;
  s.body = [] {
    cni::fw::NftBatch b;
    AddMasqChain(b, "floor-probe", Prefix("10.88.0.5/32"));
    CommitAdding(b);
  };
  s.teardown = [] { DeleteProbeChain("floor-postrouting", "floor-probe"); };
  return s;
}

Scenario NftChainAdd(const Options& o) {
  MakeNatTable(o.rules);
  return MasqProbe();
}

// portmap's mapping on a node laid out as portmap and ipMasq leave it with
// iptables-nft: the nat table's PREROUTING and OUTPUT both jump to the
// hostport chain, which jumps to one DNAT chain per container (its two
// set-mark jumps and its DNAT), and POSTROUTING jumps to one ipMasq chain
// per container. The commit adds the probe's DNAT chain and inserts its
// jump, as portmap's ADD does. nft-chain-add's table has only the ipMasq
// part; the validation on commit walks every path from every base chain.
constexpr char kHostportDnat[] = "floor-hostport-dnat";
constexpr char kSetMark[] = "floor-hostport-setmark";
std::string DnatChain(int i) { return absl::StrCat("floor-dn-", i); }
void AddMappingChain(cni::fw::NftBatch& b, const std::string& chain, const IpPrefix& to, uint16_t host_port) {
  using cni::fw::L4Protocol;
  b.AddChain(NftFamily::kIp, kNatTable, chain);
  IptRule any(chain);
  any.Protocol(L4Protocol::kTcp).DestPort(host_port);
  b.AddRule(NftFamily::kIp, kNatTable, chain, Nft(IptRule(any).Source(Prefix("10.88.0.0/16")).Jump(kSetMark)));
  b.AddRule(NftFamily::kIp, kNatTable, chain, Nft(IptRule(any).Source(Prefix("127.0.0.1/32")).Jump(kSetMark)));
  b.AddRule(NftFamily::kIp, kNatTable, chain, Nft(IptRule(any).Dnat(to.addr(), 80)));
  b.InsertRule(NftFamily::kIp, kNatTable, kHostportDnat,
               Nft(IptRule(kHostportDnat).Protocol(L4Protocol::kTcp).Comment("floor").DestPorts({host_port})
                       .Jump(chain)));
}
void MakeNodeNatTable(int others) {
  MakeNatTable(0);
  cni::fw::NftBatch b;
  b.AddChain(NftFamily::kIp, kNatTable, kHostportDnat);
  b.AddChain(NftFamily::kIp, kNatTable, kSetMark);
  for (const char* hook : {"prerouting", "output"}) {
    std::string base = absl::StrCat("floor-", hook);
    b.AddChain(NftFamily::kIp, kNatTable, base, cni::fw::NftHook{.type = "nat", .hook = hook, .priority = -100});
    b.AddRule(NftFamily::kIp, kNatTable, base, Nft(IptRule(base).Comment("floor").Jump(kHostportDnat)));
  }
  Check(b.Commit(), "node nat layout");
  FillNatTable(others, [](cni::fw::NftBatch& fill, int i) {
    AddMasqChain(fill, OwnChain(i), OtherAddress(i));
    AddMappingChain(fill, DnatChain(i), OtherAddress(i), static_cast<uint16_t>(20000 + i));
  });
}

// bridge's ipMasq on the same node layout: its chain and jump committed
// into a table where PREROUTING and OUTPUT also lead to every other
// container's DNAT chain.
Scenario NftMasqNodeAdd(const Options& o) {
  MakeNodeNatTable(o.rules);
  return MasqProbe();
}

Scenario NftPortmapAdd(const Options& o) {
  MakeNodeNatTable(o.rules);
  Scenario s;
  s.body = [] {
    cni::fw::NftBatch b;
    AddMappingChain(b, "floor-dn-probe", Prefix("10.88.0.5/32"), 8080);
    CommitAdding(b);
  };
  s.teardown = [] { DeleteProbeChain(kHostportDnat, "floor-dn-probe"); };
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

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

bool ParseArgs(int argc, char** argv, Options& o) {
  if (argc < 2) return false;
  o.scenario = argv[1];
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--netns") o.netns = v;
    else if (k == "--iterations") o.iterations = std::stoi(v);
    else if (k == "--noop") o.noop = v;
    else if (k == "--bridge") o.bridge = v;
    else if (k == "--rules") o.rules = std::stoi(v);
    else if (k == "--execs") o.execs = std::stoi(v);
    else if (k == "--data-dir") o.data_dir = v;
    else return false;
  }
  return !o.netns.empty();
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!ParseArgs(argc, argv, o)) {
    std::fprintf(stderr, "usage: cni_floor <scenario> --netns PATH [--iterations N] [--noop PATH] [--bridge NAME] [--rules N] [--execs N] [--data-dir DIR]\n");
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
  else if (o.scenario == "nft-add") s = NftAdd(o);
  else if (o.scenario == "nft-del") s = NftDel(o);
  else if (o.scenario == "nft-chain-add") s = NftChainAdd(o);
  else if (o.scenario == "nft-portmap-add") s = NftPortmapAdd(o);
  else if (o.scenario == "nft-masq-node-add") s = NftMasqNodeAdd(o);
  else {
    std::fprintf(stderr, "cni_floor: unknown scenario %s\n", o.scenario.c_str());
    return 2;
  }
  // --execs N: each round also times N execs of the no-op, right before its
  // body, where a plugin call's execs happen: after the previous round's
  // teardown (the DEL before an ADD, the ADD before a DEL). A no-op timed in
  // a loop of its own runs hot; one that follows a DEL's kernel wait finds
  // an idle CPU and starts slower, and so does the plugin it stands for.
  Scenario exec = Exec(o);
  std::vector<double> body_us, exec_us;
  auto since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t).count();
  };
  for (int i = 0; i < o.iterations; ++i) {
    s.setup();
    auto start = std::chrono::steady_clock::now();
    for (int e = 0; e < o.execs; ++e) exec.body();
    exec_us.push_back(since(start));
    start = std::chrono::steady_clock::now();
    s.body();
    body_us.push_back(since(start));
    s.teardown();
  }
  std::printf("%s %.0f", o.scenario.c_str(), Median(body_us));
  if (o.execs > 0) std::printf(" %.0f", Median(exec_us));
  std::printf("\n");
  return 0;
}

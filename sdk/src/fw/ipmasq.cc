#include "cni/fw/ipmasq.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cni/base/error.h"
#include "cni/base/hash.h"
#include "cni/base/status_macros.h"
#include "cni/fw/iptables.h"
#include "cni/fw/ipt_rule.h"
#include "cni/fw/names.h"
#include "cni/fw/nft.h"
#include "cni/fw/nft_batch.h"
#include "cni/fw/rule_record.h"

namespace cni::fw {
namespace {

constexpr NftFamily kFamily = NftFamily::kInet;
constexpr const char* kTable = "cni_plugins_masquerade";
constexpr const char* kChain = "masq_checks";

// "<ifname>:<container ID>": the attachment within its network.
std::string Instance(const MasqTarget& t) { return absl::StrCat(t.ifname, ":", t.container_id); }

std::string InstanceHash(const MasqTarget& t) { return AttachmentHash(t.network, Instance(t)); }

// The attachment's key in its network's records (cni/fw/rule_record.h): the
// hash of its instance, so that records written before keep serving.
std::string RecordKey(const MasqTarget& t) { return HashWithPrefix(16, "", Instance(t)); }

// --- iptables -------------------------------------------------------------
//
// Upstream's way, for every ADD and DEL, is an iptables-save snapshot of the
// nat table and one iptables-restore: two program runs whose cost grows with
// the table (every container adds a chain and a POSTROUTING rule). With
// iptables-nft, whose tables are nf_tables tables, the usual ADD instead
// writes the container's chain, its rules and the POSTROUTING jumps in
// iptables-nft's own encoding over netlink, one transaction, recording the
// jumps' handles (cni/fw/rule_record.h); DEL probes for the chain and removes
// it with its jumps, by those handles, in one transaction. Neither runs a
// program or reads the table. The snapshot stays for the rest: iptables-
// legacy, a node whose nat table is not there yet, a chain that exists
// already (a repeated ADD), anything unusual.

constexpr const char* kRecordDir = "/run/cni/ipmasq/iptables";
constexpr const char* kNat = "nat";
constexpr const char* kPostrouting = "POSTROUTING";

// The call's netfilter socket: the caller's, else one opened on first use.
class NetfilterSource {
 public:
  explicit NetfilterSource(net::NetlinkSocket* given) : given_(given) {}
  absl::StatusOr<net::NetlinkSocket*> Get() { return given_ != nullptr ? given_ : lazy_.Get(); }

 private:
  net::NetlinkSocket* given_;
  LazyNetfilter lazy_;
};

// One family: (re)declare our chain (a declaration flushes it), drop stale
// POSTROUTING jumps to it, add the rules. One restore = one commit.
absl::Status SetupIptables(bool v6, const MasqRules& m) {
  absl::StatusOr<IptTable> nat = IptablesSave(v6, kNat);
  if (!nat.ok()) return nat.status();
  std::string body = absl::StrCat(":", m.chain, " - [0:0]\n");
  for (const std::string& line : nat->RulesOf(kPostrouting)) {
    if (IptJumpTarget(line) == m.chain) body += IptDeleteLine(line);
  }
  for (const IptRule& r : m.own) body += r.AppendLine();
  for (const IptRule& r : m.jumps) body += r.AppendLine();
  return IptablesRestore(v6, kNat, body);
}

// The same rules over netlink, in one transaction, the jumps' handles
// recorded. False: not possible here (no iptables-nft, no nat table yet, the
// chain exists), nothing was changed; take the snapshot.
bool SetupOverNetlink(NetfilterSource& nf, bool v6, const MasqRules& m, const MasqTarget& t,
                      const RuleRecords& records) {
  if (!IptablesIsNft(v6)) return false;
  absl::StatusOr<net::NetlinkSocket*> sock = nf.Get();
  if (!sock.ok()) return false;
  net::NetlinkSocket& nl = **sock;
  const NftFamily family = IpFamily(v6);
  absl::StatusOr<bool> has_nat = nft::HasChain(nl, family, kNat, kPostrouting);
  if (!has_nat.ok() || !*has_nat) return false;
  std::optional<std::vector<NftRuleSpec>> own = ToNft(m.own, v6), jumps = ToNft(m.jumps, v6);
  if (!own.has_value() || !jumps.has_value()) return false;
  NftBatch b;
  // Exclusive: a chain left by an earlier ADD fails the whole batch, and the
  // snapshot then rebuilds it as upstream does.
  b.CreateChain(family, kNat, m.chain);
  for (NftRuleSpec& r : *own) b.AddRule(family, kNat, m.chain, std::move(r));
  for (NftRuleSpec& r : *jumps) b.AddRule(family, kNat, kPostrouting, std::move(r));
  std::vector<NftRule> added;
  if (!b.Commit(nl, &added).ok()) return false;
  std::erase_if(added, [](const NftRule& r) { return r.chain != kPostrouting; });
  records.Note(nl, RecordKey(t), family, added);
  return true;
}

absl::Status TeardownIptables(bool v6, const MasqTarget& t) {
  if (!IptablesAvailable(v6)) return absl::OkStatus();
  std::string chain = ChainName(t.network, t.container_id);
  absl::StatusOr<IptTable> nat = IptablesSave(v6, kNat);
  if (!nat.ok()) return nat.status();
  std::string body;
  // Any POSTROUTING rule jumping to the chain, whatever its -s form (upstream
  // once used the prefix, now the address).
  for (const std::string& line : nat->RulesOf(kPostrouting)) {
    if (IptJumpTarget(line) == chain) body += IptDeleteLine(line);
  }
  if (nat->HasChain(chain)) absl::StrAppend(&body, "-F ", chain, "\n-X ", chain, "\n");
  if (body.empty()) return absl::OkStatus();
  return IptablesRestore(v6, kNat, body);
}

// The chain and its POSTROUTING jumps removed in one transaction: the jumps
// by their recorded handles (`recorded`), else found by listing POSTROUTING
// (a netlink dump: no program, and cheap next to a snapshot).
absl::Status RemoveChainOverNetlink(net::NetlinkSocket& nl, NftFamily family, const std::string& chain,
                                    const std::optional<std::vector<NftRule>>& recorded) {
  NftBatch b;
  if (recorded.has_value()) {
    for (const NftRule& r : *recorded) {
      if (r.chain == kPostrouting) b.DeleteRule(r);
    }
  } else {
    absl::StatusOr<std::vector<NftRule>> jumps = nft::ListRules(nl, family, kNat, kPostrouting);
    if (!jumps.ok()) return jumps.status();
    for (const NftRule& r : *jumps) {
      if (r.jump == chain) b.DeleteRule(r);
    }
  }
  b.FlushChain(family, kNat, chain);
  b.DeleteChain(family, kNat, chain);
  return b.Commit(nl);
}

// True when nothing of the attachment is left in this family, found out
// and done without a snapshot: the chain does not exist (nf_tables allows no
// jump to a missing chain), or it was removed over netlink. False: take the
// snapshot.
bool TeardownWithoutSnapshot(NetfilterSource& nf, const RuleRecords& records, bool v6, const MasqTarget& t) {
  if (!IptablesIsNft(v6)) return false;
  absl::StatusOr<net::NetlinkSocket*> sock = nf.Get();
  if (!sock.ok()) return false;
  net::NetlinkSocket& nl = **sock;
  const NftFamily family = IpFamily(v6);
  const std::string chain = ChainName(t.network, t.container_id);
  absl::StatusOr<bool> has = nft::HasChain(nl, family, kNat, chain);
  if (!has.ok()) return false;
  if (!*has) return true;
  std::optional<std::vector<NftRule>> recorded = records.Recorded(nl, RecordKey(t), family);
  if (recorded.has_value() && RemoveChainOverNetlink(nl, family, chain, recorded).ok()) return true;
  return RemoveChainOverNetlink(nl, family, chain, std::nullopt).ok();
}

absl::Status SetupIptablesFamilies(NetfilterSource& nf, const std::vector<net::IpPrefix>& addrs, const MasqTarget& t) {
  const RuleRecords records(kRecordDir, kNat, t.network);
  const std::string key = RecordKey(t);
  // A repeated ADD finds its chain: only the snapshot sees what is there.
  const bool repeated = records.Has(key);
  records.Forget(key);  // describes nothing once the rules change
  bool all_recorded = true;
  for (bool v6 : {false, true}) {
    std::vector<net::IpPrefix> fam;
    for (const net::IpPrefix& a : addrs) {
      if (a.is_v4() != v6) fam.push_back(a);
    }
    if (fam.empty()) continue;
    const MasqRules rules = IptMasqRules(v6, fam, t);
    if (!repeated && SetupOverNetlink(nf, v6, rules, t, records)) continue;
    all_recorded = false;
    absl::Status st = RetryOnConflict([&] { return SetupIptables(v6, rules); });
    if (!st.ok()) return Annotate(st, "setting up ipMasq (iptables)");
  }
  // Only a complete record: DEL trusts it for the families it names.
  if (!all_recorded) records.Forget(key);
  return absl::OkStatus();
}

absl::Status TeardownIptablesFamilies(NetfilterSource& nf, const MasqTarget& t, std::vector<std::string>& errors) {
  const RuleRecords records(kRecordDir, kNat, t.network);
  for (bool v6 : {false, true}) {
    if (!IptablesAvailable(v6) || TeardownWithoutSnapshot(nf, records, v6, t)) continue;
    absl::Status st = RetryOnConflict([&] { return TeardownIptables(v6, t); });
    if (!st.ok()) errors.emplace_back(st.message());
  }
  records.Forget(RecordKey(t));
  return absl::OkStatus();
}

// --- nftables -------------------------------------------------------------
//
// One rule per attachment in the shared chain masq_checks. Upstream lists
// that chain on every ADD (for the attachment's stale rules) and DEL, which
// grows with the node. Ours records the rules an ADD made (cni/fw/
// rule_record.h): the usual ADD reads only the three-rule postrouting chain,
// and DEL deletes by handle. masq_checks is listed only when the record
// cannot vouch for what is there (none on DEL, a table made again since, a
// recorded rule someone else deleted, a retry).

constexpr const char* kNftRecordDir = "/run/cni/ipmasq/nftables";

// The attachment's rules: those in masq_checks whose comment starts with its
// hash.
OwnedRules RulesOf(const MasqTarget& t) {
  return {{{kFamily, kChain}}, [prefix = InstanceHash(t)](const NftRule& r) { return absl::StartsWith(r.comment, prefix); }};
}

// The attachment's rules, after the shared part where it is not in place.
absl::Status AppendNft(net::NetlinkSocket& nf, NftBatch& b, const std::vector<net::IpPrefix>& addrs,
                       const MasqTarget& t) {
  ASSIGN_OR_RETURN(std::vector<NftRule> post, nft::ListRules(nf, kFamily, kTable, "postrouting"));
  // The shared part, written (as upstream does on every ADD) only when
  // postrouting is not already the three rules ending in the goto, which
  // also proves the table and masq_checks exist (a goto cannot name a
  // missing chain). Writing it again is not free: re-adding a table or chain
  // that exists is an update and the flush deletes rules, and the kernel
  // frees both only after an RCU grace period, which the socket's close then
  // waits for (ptp ADD with this backend: 16 ms, 2.8 ms without ipMasq). A
  // table deleted meanwhile fails the commit, and the retry looks again.
  if (post.size() != 3 || post.back().jump != kChain) {
    b.AddTable(kFamily, kTable, "Masquerading for plugins from github.com/containernetworking/plugins");
    b.AddChain(kFamily, kTable, kChain, std::nullopt,
               "Masquerade traffic from certain IPs to any (non-multicast) IP outside their subnet");
    b.AddChain(kFamily, kTable, "postrouting", NftHook{"nat", "postrouting", 100});
    b.FlushChain(kFamily, kTable, "postrouting");
    b.AddRule(kFamily, kTable, "postrouting", NftRuleSpec().DestAddress(*net::IpPrefix::Parse("224.0.0.0/4")).Return());
    b.AddRule(kFamily, kTable, "postrouting", NftRuleSpec().DestAddress(*net::IpPrefix::Parse("ff00::/8")).Return());
    b.AddRule(kFamily, kTable, "postrouting", NftRuleSpec().Goto(kChain));
  }
  std::string comment = MasqNftComment(t.network, t.ifname, t.container_id);
  for (const net::IpPrefix& a : addrs) {
    b.AddRule(kFamily, kTable, kChain,
              NftRuleSpec()
                  .SourceAddress(net::IpPrefix::Host(a.addr()))
                  .DestAddress(a.Network(), /*equal=*/false)
                  .Masquerade()
                  .Comment(comment));
  }
  return absl::OkStatus();
}

absl::Status SetupNft(net::NetlinkSocket& nf, const std::vector<net::IpPrefix>& addrs, const MasqTarget& t) {
  const RuleRecords records(kNftRecordDir, kTable, t.network);
  return records.Replace(nf, RecordKey(t), RulesOf(t), [&](NftBatch& b) { return AppendNft(nf, b, addrs, t); });
}

}  // namespace

MasqRules IptMasqRules(bool v6, const std::vector<net::IpPrefix>& addrs, const MasqTarget& t) {
  MasqRules m{.chain = ChainName(t.network, t.container_id)};
  const std::string comment = Comment(t.network, t.container_id);
  for (const net::IpPrefix& a : addrs) m.own.push_back(IptRule(m.chain).Dest(a).Comment(comment).Accept());
  m.own.push_back(IptRule(m.chain).Dest(*net::IpPrefix::Parse(v6 ? "ff00::/8" : "224.0.0.0/4"), true).Comment(comment)
                      .Masquerade());
  for (const net::IpPrefix& a : addrs) {
    m.jumps.push_back(IptRule(kPostrouting).Source(net::IpPrefix::Host(a.addr())).Comment(comment).Jump(m.chain));
  }
  return m;
}

std::string MasqNftComment(absl::string_view network, absl::string_view ifname, absl::string_view id) {
  MasqTarget t{std::string(network), std::string(ifname), std::string(id)};
  return NativeComment(InstanceHash(t), {{"net", network}, {"if", ifname}, {"id", id}});
}

absl::Status SetupIpMasq(Backend backend, const std::vector<net::IpPrefix>& addrs, const MasqTarget& t) {
  if (addrs.empty() || backend == Backend::kIptables) return SetupIpMasq(nullptr, backend, addrs, t);
  ASSIGN_OR_RETURN(net::NetlinkSocket nf, nft::OpenSocket(), "setting up ipMasq (nftables)");
  return SetupIpMasq(&nf, backend, addrs, t);
}

absl::Status SetupIpMasq(net::NetlinkSocket* nf, Backend backend, const std::vector<net::IpPrefix>& addrs,
                         const MasqTarget& t) {
  if (addrs.empty()) return absl::OkStatus();
  if (backend == Backend::kNftables) return Annotate(SetupNft(*nf, addrs, t), "setting up ipMasq (nftables)");
  NetfilterSource source(nf);
  return SetupIptablesFamilies(source, addrs, t);
}

absl::Status TeardownIpMasq(const MasqTarget& t) {
  absl::StatusOr<net::NetlinkSocket> nf = nft::OpenSocket();
  if (!nf.ok()) return Annotate(nf.status(), "tearing down ipMasq");
  return TeardownIpMasq(*nf, t);
}

absl::Status TeardownIpMasq(net::NetlinkSocket& nf, const MasqTarget& t) {
  std::vector<std::string> errors;
  NetfilterSource source(&nf);
  (void)TeardownIptablesFamilies(source, t, errors);
  const RuleRecords records(kNftRecordDir, kTable, t.network);
  if (absl::Status st = records.Delete(nf, RecordKey(t), RulesOf(t)); !st.ok()) errors.emplace_back(st.message());
  if (errors.empty()) return absl::OkStatus();
  return Error(ErrorCode::kInternal, absl::StrCat("tearing down ipMasq: ", absl::StrJoin(errors, "; ")));
}

absl::Status GcIpMasq(absl::string_view network, const std::vector<Attachment>& valid) {
  ASSIGN_OR_RETURN(net::NetlinkSocket nf, nft::OpenSocket(), "garbage-collecting ipMasq (nftables)");
  return GcIpMasq(nf, network, valid);
}

absl::Status GcIpMasq(net::NetlinkSocket& nf, absl::string_view network, const std::vector<Attachment>& valid) {
  std::string net_prefix = NetworkHash(network);
  std::vector<std::string> keep, keep_records;
  for (const Attachment& a : valid) {
    keep.push_back(MasqNftComment(network, a.ifname, a.container_id));
    keep_records.push_back(RecordKey({std::string(network), a.ifname, a.container_id}));
  }
  // iptables (iptables-nft): the recorded attachments not kept lose their
  // chains and jumps. Upstream's chains carry no network marker: unrecorded
  // ones cannot be told apart and stay, as upstream.
  const RuleRecords ipt_records(kRecordDir, kNat, network);
  for (const std::string& key : ipt_records.StaleKeys(keep_records)) {
    for (NftFamily family : {NftFamily::kIp, NftFamily::kIp6}) {
      std::optional<std::vector<NftRule>> jumps = ipt_records.Recorded(nf, key, family);
      if (jumps.has_value() && !jumps->empty() && !jumps->front().jump.empty()) {
        (void)RemoveChainOverNetlink(nf, family, jumps->front().jump, jumps);
      }
    }
  }
  ipt_records.ForgetAllBut(keep_records);
  // nftables: the network's rules not kept, found by listing (GC is rare,
  // and a rule may have no record), then their records.
  OwnedRules stale{{{kFamily, kChain}}, [&](const NftRule& r) {
                     return absl::StartsWith(r.comment, net_prefix) &&
                            std::find(keep.begin(), keep.end(), r.comment) == keep.end();
                   }};
  RETURN_IF_ERROR(RuleRecords(kNftRecordDir, kTable, network).Collect(nf, stale, keep_records),
                  "garbage-collecting ipMasq (nftables)");
  return absl::OkStatus();
}

}  // namespace cni::fw

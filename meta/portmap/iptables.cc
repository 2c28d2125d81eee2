// iptables backend, chain for chain what upstream's portmap builds (nat table):
//   PREROUTING, OUTPUT: -m addrtype --dst-type LOCAL -j CNI-HOSTPORT-DNAT
//   CNI-HOSTPORT-DNAT:  -m comment -m multiport -p P --destination-ports ... -j CNI-DN-<hash>
//   CNI-DN-<hash>:      hairpin/localhost -> CNI-HOSTPORT-SETMARK, then DNAT
//   POSTROUTING (first): -j CNI-HOSTPORT-MASQ: marked packets are masqueraded
// Each ADD/DEL/GC is one iptables-restore --noflush commit per family, built
// from an iptables-save snapshot; only our chains are touched. With
// iptables-nft (whose tables are nf_tables tables) the usual ADD reads what
// it needs over netlink instead of taking a snapshot and writes the
// container's chain, rules and entries over netlink in iptables-nft's
// encoding (each rule described once, cni/fw/ipt_rule.h, and rendered either
// way), and DEL removes the container's chain and its jumps in one nf_tables
// transaction, by the handles ADD recorded (cni/fw/rule_record.h): no
// program runs, and neither grows much with the table.
#include <algorithm>
#include <memory>
#include <optional>
#include <utility>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "cni/fw/iptables.h"
#include "cni/fw/ipt_rule.h"
#include "cni/fw/names.h"
#include "cni/fw/nft.h"
#include "cni/fw/nft_batch.h"
#include "cni/fw/rule_record.h"
#include "portmap.h"

namespace cni::portmap::ipt {
namespace {

constexpr const char* kDnat = "CNI-HOSTPORT-DNAT";
constexpr const char* kSetMark = "CNI-HOSTPORT-SETMARK";
constexpr const char* kMasq = "CNI-HOSTPORT-MASQ";
constexpr size_t kMaxComment = 256;      // iptables' comment limit
constexpr size_t kMultiportMax = 15;     // ports per multiport match

std::string DnatComment(const std::string& network, const std::string& id) {
  std::string c = absl::StrCat("dnat name: \"", network, "\" id: \"", id, "\"");
  if (c.size() > kMaxComment) c.resize(kMaxComment - 3), c += "...";
  return c;
}

// Lines that remove a container's chain and every jump into it.
std::string TeardownLines(const fw::IptTable& t, const std::string& chain) {
  std::string b;
  for (const auto& [c, line] : t.rules) {
    if (fw::IptJumpTarget(line) == chain) b += fw::IptDeleteLine(line);
  }
  if (t.HasChain(chain)) absl::StrAppend(&b, "-F ", chain, "\n-X ", chain, "\n");
  return b;
}

}  // namespace

DnatRules BuildDnatRules(const Config& c, const std::string& id, const net::IpPrefix& addr) {
  DnatRules d;
  d.chain = fw::ChainName(c.name, id, "DN-");
  bool v6 = !addr.is_v4();
  std::string comment = DnatComment(c.name, id);
  std::string set_mark = c.external_set_mark_chain.value_or(kSetMark);
  const std::vector<std::string>& conds = v6 ? c.conditions_v6 : c.conditions_v4;

  // Entry rules: multiport, 15 ports each, protocols in sorted order; the
  // user's conditions (free iptables arguments) after the ports.
  for (fw::L4Protocol proto : {fw::L4Protocol::kSctp, fw::L4Protocol::kTcp, fw::L4Protocol::kUdp}) {
    std::vector<uint16_t> ports;
    for (const PortMapping& m : c.mappings) {
      if (m.protocol == proto) ports.push_back(static_cast<uint16_t>(m.host_port));
    }
    for (size_t i = 0; i < ports.size(); i += kMultiportMax) {
      std::vector<uint16_t> chunk(ports.begin() + i, ports.begin() + std::min(ports.size(), i + kMultiportMax));
      d.entries.push_back(
          fw::IptRule(kDnat).Protocol(proto).Comment(comment).DestPorts(chunk).FreeArgs(conds).Jump(d.chain));
    }
  }

  // Per mapping: mark hairpin, mark localhost (IPv4), DNAT. Marks first.
  for (const PortMapping& m : MappingsFor(c, addr)) {
    fw::IptRule base(d.chain);
    if (m.host_ip.has_value() && !m.host_ip->IsUnspecified()) base.Dest(net::IpPrefix::Host(*m.host_ip));
    base.Protocol(m.protocol).DestPort(static_cast<uint16_t>(m.host_port));
    if (c.snat) {
      // masqAll: from anywhere (a /0, which the rule leaves out).
      net::IpPrefix src = c.masq_all ? *net::IpPrefix::Parse(v6 ? "::/0" : "0.0.0.0/0") : addr.Network();
      d.rules.push_back(fw::IptRule(base).Source(src).Jump(set_mark));
      if (!v6 && !c.masq_all) {
        d.rules.push_back(fw::IptRule(base).Source(*net::IpPrefix::Parse("127.0.0.1/32")).Jump(set_mark));
      }
    }
    d.rules.push_back(fw::IptRule(base).Dnat(addr.addr(), static_cast<uint16_t>(m.container_port)));
  }
  return d;
}

namespace {

// What ADD must know of the nat table before it writes: which shared chains
// and jumps exist, and how to remove an earlier version of the container.
struct NatState {
  bool has_set_mark = false;
  bool set_mark_empty = true;
  bool has_masq = false;
  bool masq_empty = true;
  bool postrouting_to_masq = false;
  bool has_dnat = false;
  bool prerouting_to_dnat = false;
  bool output_to_dnat = false;
  std::string stale;  // restore lines deleting earlier jumps to the container's chain
};

NatState FromSnapshot(const fw::IptTable& t, const std::string& chain) {
  NatState s;
  s.has_set_mark = t.HasChain(kSetMark);
  s.set_mark_empty = t.RulesOf(kSetMark).empty();
  s.has_masq = t.HasChain(kMasq);
  s.masq_empty = t.RulesOf(kMasq).empty();
  s.postrouting_to_masq = t.HasJump("POSTROUTING", kMasq);
  s.has_dnat = t.HasChain(kDnat);
  s.prerouting_to_dnat = t.HasJump("PREROUTING", kDnat);
  s.output_to_dnat = t.HasJump("OUTPUT", kDnat);
  for (const std::string& line : t.RulesOf(kDnat)) {
    if (fw::IptJumpTarget(line) == chain) s.stale += fw::IptDeleteLine(line);
  }
  return s;
}

// With iptables-nft, the nat table is an nf_tables table: when the
// container's chain does not exist (the usual ADD) nothing can jump to it,
// and the rest is a few lookups of single chains, read over netlink.
// iptables-save would print every chain and rule of the table (~45 ms at
// 1,000 containers). nullopt: take a snapshot instead (a repeated ADD, not
// iptables-nft, or a failed lookup).
std::optional<NatState> FromKernel(LazyNetfilter& nf, bool v6, const std::string& chain) {
  if (!fw::IptablesIsNft(v6)) return std::nullopt;
  absl::StatusOr<net::NetlinkSocket*> sock = nf.Get();
  if (!sock.ok()) return std::nullopt;
  net::NetlinkSocket& nl = **sock;
  const fw::NftFamily family = fw::IpFamily(v6);
  absl::StatusOr<bool> mine = fw::nft::HasChain(nl, family, "nat", chain);
  if (!mine.ok() || *mine) return std::nullopt;
  bool failed = false;
  auto has = [&](const char* name) {
    absl::StatusOr<bool> h = fw::nft::HasChain(nl, family, "nat", name);
    failed = failed || !h.ok();
    return h.ok() && *h;
  };
  // `limit` 0: every rule of the chain.
  auto rules = [&](const char* name, size_t limit = 0) {
    absl::StatusOr<std::vector<fw::NftRule>> r = limit > 0 ? fw::nft::ListFirstRules(nl, family, "nat", name, limit)
                                                           : fw::nft::ListRules(nl, family, "nat", name);
    failed = failed || !r.ok();
    return r.ok() ? *r : std::vector<fw::NftRule>{};
  };
  // Whether `from` jumps to `to`. The first rules are looked at first: the
  // jump into CNI-HOSTPORT-MASQ is inserted at the top of POSTROUTING, where
  // ipMasq appends one jump per container, so reading the whole chain would
  // grow with the node. Only when the jump is not among them (another tool
  // inserted rules above it since, or it is missing) is the chain read whole.
  auto jumps = [&](const char* from, const char* to) {
    auto has_jump = [to](const std::vector<fw::NftRule>& r) {
      return std::any_of(r.begin(), r.end(), [to](const fw::NftRule& x) { return x.jump == to; });
    };
    constexpr size_t kFirstRules = 16;
    return has_jump(rules(from, kFirstRules)) || has_jump(rules(from));
  };
  NatState s;
  s.has_set_mark = has(kSetMark);
  s.set_mark_empty = !s.has_set_mark || rules(kSetMark, 1).empty();
  s.has_masq = has(kMasq);
  s.masq_empty = !s.has_masq || rules(kMasq, 1).empty();
  s.postrouting_to_masq = jumps("POSTROUTING", kMasq);
  s.has_dnat = has(kDnat);
  s.prerouting_to_dnat = jumps("PREROUTING", kDnat);
  s.output_to_dnat = jumps("OUTPUT", kDnat);
  if (failed) return std::nullopt;
  return s;
}

// `inserted`: the entry rules with their handles, when they were written
// over netlink (else nullopt).
absl::Status ForwardOnce(LazyNetfilter& nf, const Config& c, const DnatRules& d, const net::IpPrefix& addr,
                         std::optional<std::vector<fw::NftRule>>& inserted) {
  bool v6 = !addr.is_v4();
  inserted.reset();
  std::optional<NatState> t = FromKernel(nf, v6, d.chain);
  // With iptables-nft, the container's chain, its rules and the entry rules
  // go in over netlink, as one nf_tables transaction: iptables-restore costs
  // a program run, and "-I CNI-HOSTPORT-DNAT 1" makes it read every rule of
  // that chain first (~3 ms at 1,000 containers). Only shared chains still
  // missing (the node's first mapping) are made with iptables-restore.
  // Entries with the user's conditions (free iptables arguments) have no
  // encoding here: they go through iptables-restore.
  std::optional<std::vector<fw::NftRuleSpec>> entry_rules, chain_rules;
  if (t.has_value()) entry_rules = fw::ToNft(d.entries, v6), chain_rules = fw::ToNft(d.rules, v6);
  const bool over_netlink = entry_rules.has_value() && !entry_rules->empty() && chain_rules.has_value();
  if (!t.has_value()) {
    ASSIGN_OR_RETURN(fw::IptTable snapshot, fw::IptablesSave(v6, "nat"));
    t = FromSnapshot(snapshot, d.chain);
  }
  std::string b;
  // Shared chains: created once with -N, never declared with ":" (which
  // flushes): if a concurrent ADD created one since we looked, -N fails and
  // the whole commit is retried after looking again.
  if (c.snat && !c.external_set_mark_chain.has_value()) {
    const uint32_t mark = 1u << c.mark_masq_bit;
    if (!t->has_set_mark) absl::StrAppend(&b, "-N ", kSetMark, "\n");
    if (t->set_mark_empty) {
      b += fw::IptRule(kSetMark).Comment("CNI portfwd masquerade mark").SetXMark(mark, mark).AppendLine();
    }
    if (!t->has_masq) absl::StrAppend(&b, "-N ", kMasq, "\n");
    if (t->masq_empty) b += fw::IptRule(kMasq).Mark(mark, mark).Masquerade().AppendLine();
    // First in POSTROUTING, ahead of ipMasq's chains.
    if (!t->postrouting_to_masq) {
      b += fw::IptRule("POSTROUTING").Comment("CNI portfwd requiring masquerade").Jump(kMasq).InsertFirstLine();
    }
  }
  if (!t->has_dnat) absl::StrAppend(&b, "-N ", kDnat, "\n");
  for (auto [entry, jumps] : {std::pair{"PREROUTING", t->prerouting_to_dnat}, std::pair{"OUTPUT", t->output_to_dnat}}) {
    if (!jumps) b += fw::IptRule(entry).DestTypeLocal().Jump(kDnat).AppendLine();
  }
  if (over_netlink) {
    if (!b.empty()) {
      RETURN_IF_ERROR(fw::IptablesRestore(v6, "nat", b));
    }
    // A failure here leaves nothing of the container; the retry looks again.
    ASSIGN_OR_RETURN(net::NetlinkSocket * nl, nf.Get());
    const fw::NftFamily family = fw::IpFamily(v6);
    fw::NftBatch own;
    own.AddChain(family, "nat", d.chain);
    for (fw::NftRuleSpec& r : *chain_rules) own.AddRule(family, "nat", d.chain, std::move(r));
    for (fw::NftRuleSpec& r : *entry_rules) own.InsertRule(family, "nat", kDnat, std::move(r));
    std::vector<fw::NftRule> added;
    RETURN_IF_ERROR(own.Commit(*nl, &added));
    std::erase_if(added, [](const fw::NftRule& r) { return r.chain != kDnat; });
    inserted = std::move(added);
    return absl::OkStatus();
  }
  // This container: drop any earlier version, then rebuild (a chain
  // declaration flushes it, so a leftover chain is reused cleanly).
  b += t->stale;
  absl::StrAppend(&b, ":", d.chain, " - [0:0]\n");
  for (const fw::IptRule& r : d.rules) b += r.AppendLine();
  // Prepended: the most recent container using a host port wins.
  for (const fw::IptRule& r : d.entries) b += r.InsertFirstLine();
  return fw::IptablesRestore(v6, "nat", b);
}
}  // namespace

// Writes the container's rules, then, with iptables-nft, records the handles
// of its jumps from CNI-HOSTPORT-DNAT (cni/fw/rule_record.h), so that DEL
// need not list the chain. They are the `jumps` ForwardOnce inserted when it
// wrote them over netlink. Else iptables-restore has just put them at the
// chain's top, so reading its first few rules finds them whatever the
// chain's length; a few more are read in case concurrent ADDs put theirs
// above since. Not all found: no record, and DEL lists.
static absl::Status Forward(LazyNetfilter& nf, const Config& c, const std::string& id, const net::IpPrefix& addr) {
  DnatRules d = BuildDnatRules(c, id, addr);
  std::optional<std::vector<fw::NftRule>> jumps;
  RETURN_IF_ERROR(fw::RetryOnConflict([&] { return ForwardOnce(nf, c, d, addr, jumps); }),
                  "unable to set up iptables port mappings");
  const fw::RuleRecords records(kIptRecordDir, "nat", c.name);
  const bool v6 = !addr.is_v4();
  absl::StatusOr<net::NetlinkSocket*> sock = fw::IptablesIsNft(v6) ? nf.Get() : nullptr;
  if (sock.ok() && *sock != nullptr && !jumps.has_value()) {
    absl::StatusOr<std::vector<fw::NftRule>> first =
        fw::nft::ListFirstRules(**sock, fw::IpFamily(v6), "nat", kDnat, d.entries.size() + 16);
    if (first.ok()) {
      std::erase_if(*first, [&](const fw::NftRule& r) { return r.jump != d.chain; });
      jumps = std::move(*first);
    }
  }
  if (!sock.ok() || *sock == nullptr || !jumps.has_value() || jumps->size() != d.entries.size()) {
    records.Forget(id);
  } else {
    records.Note(**sock, id, fw::IpFamily(v6), *jumps);
  }
  return absl::OkStatus();
}

namespace {
// With iptables-nft: the container's chain and every jump into it from
// CNI-HOSTPORT-DNAT go in one nf_tables transaction (what iptables-nft
// itself sends for -D, -F and -X), without iptables-save, whose cost grows
// with the table. Fails, and the caller takes the full path, when anything
// is unusual: the SN- chain of old upstream versions, or a jump from
// elsewhere (the chain is then still in use and cannot be deleted).
// `jumps`: the recorded jumps into the chain; nullopt lists the chain.
absl::Status UnforwardOverNetlink(LazyNetfilter& nf, bool v6, const std::string& dn, const std::string& sn,
                                  const std::optional<std::vector<fw::NftRule>>& jumps) {
  ASSIGN_OR_RETURN(net::NetlinkSocket * sock, nf.Get());
  net::NetlinkSocket& nl = *sock;
  const fw::NftFamily family = fw::IpFamily(v6);
  ASSIGN_OR_RETURN(bool has_sn, fw::nft::HasChain(nl, family, "nat", sn));
  if (has_sn) return absl::FailedPreconditionError("an SN- chain exists");
  fw::NftBatch b;
  if (jumps.has_value()) {
    for (const fw::NftRule& r : *jumps) b.DeleteRule(r);
  } else {
    ASSIGN_OR_RETURN(std::vector<fw::NftRule> entries, fw::nft::ListRules(nl, family, "nat", kDnat));
    for (const fw::NftRule& r : entries) {
      if (r.jump == dn) b.DeleteRule(r);
    }
  }
  b.FlushChain(family, "nat", dn);
  b.DeleteChain(family, "nat", dn);
  return b.Commit(nl);
}
}  // namespace

namespace {
// The container's chains in one family, without reading the whole table:
// true when they are gone. A probe finds no DN- chain (nothing of this
// container's: upstream's old SN- chain always came with a DN- chain), or,
// with iptables-nft, one transaction removes the chain and its jumps, by the
// recorded handles, else by listing the entry chain. With iptables-nft the
// probe costs no program run, so it is always made; with iptables-legacy
// only when `probe_first`. False: read the table (a failed probe too).
bool RemovedWithoutSnapshot(LazyNetfilter& nf, const fw::RuleRecords& records, const std::string& id, bool v6,
                            bool probe_first, const std::string& dn, const std::string& sn) {
  const bool nft = fw::IptablesIsNft(v6);
  if (!probe_first && !nft) return false;
  absl::StatusOr<net::NetlinkSocket*> sock = nft ? nf.Get() : nullptr;
  absl::StatusOr<bool> has = fw::IptablesHasChain(sock.ok() ? *sock : nullptr, v6, "nat", dn);
  if (!has.ok()) return false;
  if (!*has) return true;
  if (!nft || !sock.ok()) return false;
  std::optional<std::vector<fw::NftRule>> recorded = records.Recorded(**sock, id, fw::IpFamily(v6));
  if (recorded.has_value() && UnforwardOverNetlink(nf, v6, dn, sn, recorded).ok()) return true;
  return UnforwardOverNetlink(nf, v6, dn, sn, std::nullopt).ok();
}

// The container's chains in one family as upstream removes them: from an
// iptables-save snapshot, one iptables-restore commit (also the SNAT chain
// older upstream versions made).
absl::Status RemoveFromSnapshot(bool v6, const std::string& dn, const std::string& sn) {
  return fw::RetryOnConflict([&]() -> absl::Status {
    ASSIGN_OR_RETURN(fw::IptTable t, fw::IptablesSave(v6, "nat"));
    std::string b = TeardownLines(t, dn) + TeardownLines(t, sn);
    return b.empty() ? absl::OkStatus() : fw::IptablesRestore(v6, "nat", b);
  });
}
}  // namespace

// Both families: first the quick ways, one family after the other on the
// call's one netfilter socket; the families left need a snapshot each, two
// program runs whose cost grows with the table, so those run side by side.
static absl::Status Unforward(LazyNetfilter& nf, const std::string& network, const std::string& id,
                              bool probe_first) {
  const fw::RuleRecords records(kIptRecordDir, "nat", network);
  const std::string dn = fw::ChainName(network, id, "DN-");
  const std::string sn = fw::ChainName(network, id, "SN-");
  bool need_snapshot[2] = {false, false};
  for (bool v6 : {false, true}) {
    need_snapshot[v6] = fw::IptablesAvailable(v6) && !RemovedWithoutSnapshot(nf, records, id, v6, probe_first, dn, sn);
  }
  absl::Status st[2];
  std::optional<std::thread> v6_thread;
  if (need_snapshot[true]) v6_thread.emplace([&] { st[true] = RemoveFromSnapshot(true, dn, sn); });
  if (need_snapshot[false]) st[false] = RemoveFromSnapshot(false, dn, sn);
  if (v6_thread.has_value()) v6_thread->join();
  records.Forget(id);
  // A record of the unscoped kind versions before kept ("<cookie>-<id>").
  fw::RuleRecords(kIptRecordDir, "nat").Forget(id);
  std::vector<std::string> errors;
  for (const absl::Status& s : st) {
    if (!s.ok()) errors.emplace_back(s.message());
  }
  if (errors.empty()) return absl::OkStatus();
  return Error(ErrorCode::kInternal, absl::StrCat("removing iptables port mappings: ", absl::StrJoin(errors, "; ")));
}

static absl::Status Check(const Config& c, const std::string& id, const net::IpPrefix& addr) {
  bool v6 = !addr.is_v4();
  ASSIGN_OR_RETURN(fw::IptTable t, fw::IptablesSave(v6, "nat"));
  DnatRules d = BuildDnatRules(c, id, addr);
  if (d.rules.empty()) return absl::OkStatus();
  auto missing = [&](absl::string_view what) {
    return Error(ErrorCode::kInternal, absl::StrCat("portmap: ", what, " missing for ", addr.addr().ToString()));
  };
  if (!t.HasChain(d.chain)) return missing(absl::StrCat("chain ", d.chain));
  if (t.RulesOf(d.chain).size() < d.rules.size()) return missing(absl::StrCat("rules in ", d.chain));
  if (!t.HasJump(kDnat, d.chain)) return missing(absl::StrCat("jump from ", kDnat, " to ", d.chain));
  if (!t.HasJump("PREROUTING", kDnat) || !t.HasJump("OUTPUT", kDnat)) {
    return missing(absl::StrCat("jumps to ", kDnat));
  }
  return absl::OkStatus();
}

static absl::Status Gc(const std::string& network, const std::vector<std::string>& valid_ids) {
  // As iptables-save prints it: the comment's quotes are backslash-escaped.
  std::string prefix = absl::StrCat("dnat name: \\\"", network, "\\\" id: \\\"");
  const fw::RuleRecords records(kIptRecordDir, "nat", network);
  std::vector<std::string> errors;
  for (bool v6 : {false, true}) {
    if (!fw::IptablesAvailable(v6)) continue;
    absl::StatusOr<fw::IptTable> t = fw::IptablesSave(v6, "nat");
    if (!t.ok()) {
      errors.emplace_back(t.status().message());
      continue;
    }
    // The entry rules' comments name the network and the container: the
    // chains of this network's unlisted containers go.
    std::vector<std::string> doomed;
    for (const std::string& line : t->RulesOf(kDnat)) {
      size_t at = line.find(prefix);
      if (at == std::string::npos) continue;
      size_t start = at + prefix.size();
      size_t end = line.find("\\\"", start);
      if (end == std::string::npos) continue;
      std::string id = line.substr(start, end - start);
      bool valid = false;
      for (const std::string& v : valid_ids) valid = valid || v == id;
      std::string chain = fw::IptJumpTarget(line);
      if (!valid && chain == fw::ChainName(network, id, "DN-")) {
        bool seen = false;
        for (const std::string& d : doomed) seen = seen || d == chain;
        if (!seen) doomed.push_back(chain);
      }
    }
    std::string b;
    for (const std::string& chain : doomed) b += TeardownLines(*t, chain);
    if (b.empty()) continue;
    if (absl::Status st = fw::IptablesRestore(v6, "nat", b); !st.ok()) errors.emplace_back(st.message());
  }
  // The records (and a killed ADD's temporary record) of this network's
  // containers that are gone; the store is scoped to the network.
  records.ForgetAllBut(valid_ids);
  if (errors.empty()) return absl::OkStatus();
  return Error(ErrorCode::kInternal, absl::StrCat("garbage-collecting iptables port mappings: ",
                                                  absl::StrJoin(errors, "; ")));
}

namespace {

// The nat table's chains as upstream's portmap builds them, one commit per
// family.
class IptablesRuleSet final : public RuleSet {
 public:
  using RuleSet::RuleSet;
  absl::Status Add(const Config& c, const std::string& id, const std::vector<net::IpPrefix>& addrs) override {
    for (const net::IpPrefix& a : addrs) RETURN_IF_ERROR(Forward(nf_, c, id, a));
    return absl::OkStatus();
  }
  // When the configured backend is nftables the rules are most likely
  // not here: probe before reading the whole table.
  absl::Status Del(const TeardownConfig& c, const std::string& id) override {
    return Unforward(nf_, c.name, id, c.nftables_configured);
  }
  absl::Status Check(const Config& c, const std::string& id, const std::vector<net::IpPrefix>& addrs) override {
    for (const net::IpPrefix& a : addrs) RETURN_IF_ERROR(ipt::Check(c, id, a));
    return absl::OkStatus();
  }
  absl::Status Gc(const std::string& network, const std::vector<std::string>& valid_ids) override {
    return ipt::Gc(network, valid_ids);
  }
  // One commit per family: the first may be in when the second fails.
  bool Transactional() const override { return false; }
};

}  // namespace

}  // namespace cni::portmap::ipt

namespace cni::portmap {

std::unique_ptr<RuleSet> MakeIptablesRuleSet(LazyNetfilter& nf) { return std::make_unique<ipt::IptablesRuleSet>(nf); }

}  // namespace cni::portmap

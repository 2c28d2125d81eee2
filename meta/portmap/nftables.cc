// nftables backend: tables ip/ip6 cni_hostport as upstream's knftables code
// builds them. Every rule of a container carries its ID as the comment, which
// is how DEL/GC find them (and how upstream's DEL finds ours).
#include <algorithm>
#include <memory>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cni/error.h"
#include "cni/fw/iptables.h"  // RetryOnConflict
#include "cni/fw/nft.h"
#include "cni/fw/nft_batch.h"
#include "cni/status_macros.h"
#include "cni/fw/rule_record.h"
#include "portmap.h"

namespace cni::portmap::nft {
namespace {

constexpr const char* kTable = "cni_hostport";
constexpr const char* kHostPorts = "hostports";
constexpr const char* kHostIpHostPorts = "hostip_hostports";
constexpr const char* kMasq = "masquerading";

// The rules of one family's table that belong to `id`.
absl::StatusOr<std::vector<fw::NftRule>> RulesOf(net::NetlinkSocket& nl, bool v6, const std::string& id) {
  ASSIGN_OR_RETURN(std::vector<fw::NftRule> all, fw::nft::ListRules(nl, fw::IpFamily(v6), kTable));
  std::erase_if(all, [&id](const fw::NftRule& r) { return r.comment != id; });
  return all;
}

// The conditions (user-written nft text) that gate the hook chains' jumps;
// with them, the batch runs through the nft program.
fw::NftRuleSpec Gated(const std::vector<std::string>& conditions) {
  fw::NftRuleSpec rule;
  if (!conditions.empty()) rule.Text(absl::StrJoin(conditions, " "));
  return rule;
}

// The part of the table every ADD shares: the table, the lookup chains,
// the hook chains with their jumps (gated by the conditions), and the
// masquerading chain with snat.
void AppendShared(fw::NftBatch& b, fw::NftFamily fam, const Config& c, const std::vector<std::string>& conds) {
  b.AddTable(fam, kTable, "CNI portmap plugin");
  b.AddChain(fam, kTable, kHostPorts);
  b.AddChain(fam, kTable, kHostIpHostPorts);
  b.AddChain(fam, kTable, "prerouting", fw::NftHook{"nat", "prerouting", -100});
  b.FlushChain(fam, kTable, "prerouting");
  b.AddRule(fam, kTable, "prerouting", Gated(conds).Jump(kHostIpHostPorts));
  b.AddRule(fam, kTable, "prerouting", Gated(conds).Jump(kHostPorts));
  b.AddChain(fam, kTable, "output", fw::NftHook{"nat", "output", -100});
  b.FlushChain(fam, kTable, "output");
  b.AddRule(fam, kTable, "output", Gated(conds).Jump(kHostIpHostPorts));
  b.AddRule(fam, kTable, "output", Gated(conds).DestIsLocal().Jump(kHostPorts));
  if (c.snat) b.AddChain(fam, kTable, kMasq, fw::NftHook{"nat", "postrouting", 100});
}

// The container's own rules: its DNATs and, with snat, its masquerades.
void AppendContainer(fw::NftBatch& b, fw::NftFamily fam, const Config& c, const std::string& id,
                     const net::IpPrefix& addr) {
  const bool v6 = !addr.is_v4();
  for (const PortMapping& m : MappingsFor(c, addr)) {
    fw::NftRuleSpec rule;
    const bool pinned = m.host_ip.has_value() && !m.host_ip->IsUnspecified();
    if (pinned) rule.DestAddress(net::IpPrefix::Host(*m.host_ip));
    rule.DestPort(m.protocol, m.host_port).Dnat(addr.addr(), m.container_port).Comment(id);
    b.AddRule(fam, kTable, pinned ? kHostIpHostPorts : kHostPorts, std::move(rule));
  }
  if (c.snat) {
    net::IpPrefix self = net::IpPrefix::Host(addr.addr());
    // Hairpin (container to its own mapped port) and localhost need the reply
    // to come back through us: masquerade them.
    b.AddRule(fam, kTable, kMasq, fw::NftRuleSpec().SourceAddress(self).DestAddress(self).Masquerade().Comment(id));
    if (!v6) {
      b.AddRule(fam, kTable, kMasq,
                fw::NftRuleSpec()
                    .SourceAddress(net::IpPrefix::Host(*net::IpAddress::Parse("127.0.0.1")))
                    .DestAddress(self)
                    .Masquerade()
                    .Comment(id));
    }
  }
}

void AppendFamily(fw::NftBatch& b, const Config& c, const std::string& id, const net::IpPrefix& addr,
                  bool shared_in_place) {
  bool v6 = !addr.is_v4();
  const fw::NftFamily fam = fw::IpFamily(v6);
  const std::vector<std::string>& conds = v6 ? c.conditions_v6 : c.conditions_v4;
  if (!shared_in_place) AppendShared(b, fam, c, conds);
  AppendContainer(b, fam, c, id, addr);
}

}  // namespace

void AppendForward(fw::NftBatch& b, const Config& c, const std::string& id, const std::vector<net::IpPrefix>& addrs,
                   const std::set<fw::NftFamily>& shared_in_place) {
  for (const net::IpPrefix& a : addrs) AppendFamily(b, c, id, a, shared_in_place.count(fw::IpFamily(!a.is_v4())) > 0);
}

namespace {

// Whether `v6`'s table already holds the shared part as AppendShared would
// write it for `c`: each hook chain holding exactly its two jumps, with no
// conditions ("jump hostip_hostports", then "jump hostports", in output
// behind "fib daddr type local": three expressions), which proves the lookup
// chains exist (a jump cannot name a missing chain), and with snat the
// masquerading chain. Writing it again is not free:
// re-adding a chain that exists is an update and the flush deletes rules,
// and the kernel frees both only after an RCU grace period, which the
// netfilter socket's close then waits for (portmap ADD: 15.7 ms). With
// conditions it is always written again, as upstream does on every ADD.
bool SharedInPlace(net::NetlinkSocket& nl, const Config& c, bool v6) {
  if (!(v6 ? c.conditions_v6 : c.conditions_v4).empty()) return false;
  const fw::NftFamily fam = fw::IpFamily(v6);
  if (c.snat) {
    absl::StatusOr<bool> has = fw::nft::HasChain(nl, fam, kTable, kMasq);
    if (!has.ok() || !*has) return false;
  }
  auto two_jumps = [&](const char* hook, size_t second_expressions) {
    absl::StatusOr<std::vector<fw::NftRule>> r = fw::nft::ListRules(nl, fam, kTable, hook);
    return r.ok() && r->size() == 2 && (*r)[0].jump == kHostIpHostPorts && (*r)[0].expressions == 1 &&
           (*r)[1].jump == kHostPorts && (*r)[1].expressions == second_expressions;
  };
  return two_jumps("prerouting", 1) && two_jumps("output", 3);
}

// Every rule of `id` in both families' tables, by listing the tables.
absl::StatusOr<std::vector<fw::NftRule>> ListedRulesOf(net::NetlinkSocket& nl, const std::string& id) {
  std::vector<fw::NftRule> mine;
  for (bool v6 : {false, true}) {
    ASSIGN_OR_RETURN(std::vector<fw::NftRule> rules, RulesOf(nl, v6, id));
    mine.insert(mine.end(), rules.begin(), rules.end());
  }
  return mine;
}

// Records the container's rules among those a commit just added (not the
// hook chains' jumps, which every ADD makes again), with the handles of the
// tables they went into.
void Remember(net::NetlinkSocket& nl, const fw::RuleRecordStore& store, const std::string& id,
              const std::vector<fw::NftRule>& added) {
  fw::RuleRecord record;
  for (const fw::NftRule& r : added) {
    if (r.comment != id) continue;
    if (record.tables.count(r.family) == 0 && !fw::NoteTable(nl, record, r.family, kTable)) return store.Remove(id);
    record.rules.push_back(r);
  }
  store.Save(id, record);
}

// One attempt. The first trusts the container's record (or, with none, that
// it has no rules yet: the spec forbids a second ADD without a DEL between,
// and upstream never looks); a retry lists the tables, since the failure may
// have been a recorded rule deleted by someone else, or a commit whose echo
// was lost.
absl::Status ForwardOnce(net::NetlinkSocket& nl, const fw::RuleRecordStore& store, const Config& c, const std::string& id,
                         const std::vector<net::IpPrefix>& addrs, bool first_attempt) {
  // nullopt: unknown, list them.
  std::optional<std::vector<fw::NftRule>> stale = first_attempt ? store.RulesToReplace(nl, id, kTable) : std::nullopt;
  if (!stale.has_value()) {
    ASSIGN_OR_RETURN(stale, ListedRulesOf(nl, id));
  }
  std::set<fw::NftFamily> in_place;
  for (const net::IpPrefix& a : addrs) {
    if (SharedInPlace(nl, c, !a.is_v4())) in_place.insert(fw::IpFamily(!a.is_v4()));
  }
  // Stale rules of this container (a repeated ADD) go in the same transaction.
  fw::NftBatch b;
  for (const fw::NftRule& r : *stale) b.DeleteRule(r);
  AppendForward(b, c, id, addrs, in_place);
  if (b.HasText()) {
    // User-written conditions: the nft program, which does not tell us the
    // new handles. Without a record, DEL lists.
    store.Remove(id);
    return fw::nft::Apply(nl, b);
  }
  std::vector<fw::NftRule> added;
  RETURN_IF_ERROR(b.Commit(nl, &added));
  Remember(nl, store, id, added);
  return absl::OkStatus();
}

absl::Status UnforwardOnce(net::NetlinkSocket& nl, const fw::RuleRecordStore& store, const std::string& id, bool first_attempt) {
  if (first_attempt && store.DeleteRecorded(nl, id, kTable)) return absl::OkStatus();
  ASSIGN_OR_RETURN(std::vector<fw::NftRule> mine, ListedRulesOf(nl, id));
  fw::NftBatch b;
  for (const fw::NftRule& r : mine) b.DeleteRule(r);
  // Nothing of ours (e.g. the iptables backend made the rules): a no-op.
  RETURN_IF_ERROR(b.Commit(nl));
  store.Remove(id);
  return absl::OkStatus();
}
}  // namespace

namespace {

// Tables ip/ip6 cni_hostport, through one NETLINK_NETFILTER socket.
class NftBackend final : public PortmapBackend {
 public:
  using PortmapBackend::PortmapBackend;
  absl::Status Add(const Config& c, const std::string& id, const std::vector<net::IpPrefix>& addrs) override;
  absl::Status Del(const TeardownConfig& c, const std::string& id) override;
  absl::Status Check(const Config& c, const std::string& id, const std::vector<net::IpPrefix>& addrs) override;
  absl::Status Gc(const std::string& network, const std::vector<std::string>& valid_ids) override;
};

absl::Status NftBackend::Add(const Config& c, const std::string& id, const std::vector<net::IpPrefix>& addrs) {
  const char* what = "unable to set up nftables rules for port mappings";
  ASSIGN_OR_RETURN(net::NetlinkSocket * nl, nf_.Get(), what);
  fw::RuleRecordStore store = fw::RuleRecordStore::ForCurrentNetns(kNftRecordDir);
  bool first = true;
  return Annotate(fw::RetryOnConflict([&] { return ForwardOnce(*nl, store, c, id, addrs, std::exchange(first, false)); }),
                  what);
}

absl::Status NftBackend::Del(const TeardownConfig&, const std::string& id) {
  const char* what = "deleting nftables port-mapping rules";
  ASSIGN_OR_RETURN(net::NetlinkSocket * nl, nf_.Get(), what);
  fw::RuleRecordStore store = fw::RuleRecordStore::ForCurrentNetns(kNftRecordDir);
  bool first = true;
  return Annotate(fw::RetryOnConflict([&] { return UnforwardOnce(*nl, store, id, std::exchange(first, false)); }),
                  what);
}

absl::Status NftBackend::Check(const Config& c, const std::string& id, const std::vector<net::IpPrefix>& addrs) {
  ASSIGN_OR_RETURN(net::NetlinkSocket * nl, nf_.Get());
  // Only the families the container has are checked: a missing ip6 table is
  // fine for an IPv4-only container (upstream 1.1.1 got this wrong).
  for (const net::IpPrefix& a : addrs) {
    bool v6 = !a.is_v4();
    ASSIGN_OR_RETURN(std::vector<fw::NftRule> mine, RulesOf(*nl, v6, id));
    size_t dnat = 0, masq = 0;
    for (const fw::NftRule& r : mine) {
      if (r.chain == kHostPorts || r.chain == kHostIpHostPorts) ++dnat;
      if (r.chain == kMasq) ++masq;
    }
    size_t want_dnat = MappingsFor(c, a).size();
    size_t want_masq = (c.snat && want_dnat > 0) ? (v6 ? 1 : 2) : 0;
    if (dnat < want_dnat || masq < want_masq) {
      return Error(ErrorCode::kInternal,
                   absl::StrCat("portmap: missing ", fw::NftFamilyName(fw::IpFamily(v6)), " ", kTable, " rules for ",
                                a.addr().ToString(), " (found ", dnat, " DNAT, ", masq, " masquerade)"));
    }
  }
  return absl::OkStatus();
}

// Every container's rules, whatever its network (the rules do not say).
absl::Status NftBackend::Gc(const std::string&, const std::vector<std::string>& valid_ids) {
  const char* what = "garbage-collecting nftables port-mapping rules";
  ASSIGN_OR_RETURN(net::NetlinkSocket * nl, nf_.Get(), what);
  fw::NftBatch b;
  for (bool v6 : {false, true}) {
    ASSIGN_OR_RETURN(std::vector<fw::NftRule> all, fw::nft::ListRules(*nl, fw::IpFamily(v6), kTable));
    for (const fw::NftRule& r : all) {
      if (r.comment.empty()) continue;  // the hook chains' jumps
      bool valid = false;
      for (const std::string& v : valid_ids) valid = valid || v == r.comment;
      if (!valid) b.DeleteRule(r);
    }
  }
  RETURN_IF_ERROR(b.Commit(*nl), what);
  fw::RuleRecordStore::ForCurrentNetns(kNftRecordDir).RemoveAllBut(valid_ids);
  return absl::OkStatus();
}

}  // namespace

}  // namespace cni::portmap::nft

namespace cni::portmap {

std::unique_ptr<PortmapBackend> MakeNftablesBackend(LazyNetfilter& nf) { return std::make_unique<nft::NftBackend>(nf); }

}  // namespace cni::portmap

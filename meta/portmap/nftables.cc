// nftables backend: tables ip/ip6 cni_hostport laid out as upstream 1.9's
// knftables code lays them out: prerouting and output reach hostports_all
// only for local destinations (fib daddr type local), and hostports_all
// jumps to hostip_hostports (kept for rules made before 1.9) and hostports,
// where every DNAT goes. The shared chains are written the same way as
// upstream's, so our ADD and upstream's take turns without rewriting each
// other's layout.
//
// Each rule of a container carries a comment naming its network and its
// container ("<hash of network>-<hash of id>, net: .., id: ..", the shape of
// ipMasq's), by which ADD, DEL and GC find exactly one attachment's rules:
// network A's GC, DEL or ADD never touches network B's rules, even for one
// pod on both. Upstream's comment is the bare container ID, which does not
// say its network: GC leaves such rules alone, and only DEL (of that
// container, as every earlier version of ours and upstream's does) removes
// them, so rules made before this format still go on DEL after an upgrade.
#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "cni/fw/names.h"
#include "cni/fw/nft.h"
#include "cni/fw/nft_batch.h"
#include "cni/fw/rule_record.h"
#include "portmap.h"

namespace cni::portmap::nft {
namespace {

constexpr size_t kHashLength = 33;  // 16 + "-" + 16
constexpr absl::string_view kNetField = ", net: ";

// Whether `comment` is ours and names `network`: then its first kHashLength
// characters name the attachment.
bool OfNetwork(absl::string_view comment, absl::string_view network_hash) {
  return comment.size() > kHashLength + kNetField.size() && absl::StartsWith(comment, network_hash) &&
         comment[network_hash.size()] == '-' && comment.substr(kHashLength, kNetField.size()) == kNetField;
}

// Whose rules a lookup wants: one attachment's, and with `legacy` also the
// rules whose comment is the bare container ID (upstream's, and ours before
// comments named the network), which DEL removes as every version did. When
// the attachment's addresses are known (prevResult), a bare-ID rule is this
// attachment's only if it matches or DNATs to one of them: the same pod's
// rules on another network are left. Found in both families' tables.
struct Owner {
  const std::string& network;
  const std::string& id;
  bool legacy = false;
  std::vector<net::IpAddress> addresses = {};
  bool Owns(const fw::NftRule& r) const {
    if (legacy && r.comment == id) return addresses.empty() || NamesAnAddress(r);
    const std::string hash = fw::AttachmentHash(network, id);
    return r.comment.size() > hash.size() && absl::StartsWith(r.comment, hash) && r.comment[hash.size()] == ',';
  }
  bool NamesAnAddress(const fw::NftRule& r) const {
    for (const net::IpAddress& a : addresses) {
      const std::string bytes(reinterpret_cast<const char*>(a.data()), a.byte_length());
      if (std::find(r.values.begin(), r.values.end(), bytes) != r.values.end()) return true;
    }
    return false;
  }
  // How the records (cni/fw/rule_record.h) find them in a listing.
  fw::OwnedRules Rules() const {
    return {{{fw::NftFamily::kIp, ""}, {fw::NftFamily::kIp6, ""}}, [*this](const fw::NftRule& r) { return Owns(r); }};
  }
};

// The comment on the rules of container `id` in `network`.
std::string RuleComment(const std::string& network, const std::string& id) {
  return fw::NativeComment(fw::AttachmentHash(network, id), {{"net", network}, {"id", id}});
}

// The rules of one family's table that belong to `owner`.
absl::StatusOr<std::vector<fw::NftRule>> RulesOf(net::NetlinkSocket& nl, bool v6, const Owner& owner) {
  ASSIGN_OR_RETURN(std::vector<fw::NftRule> all, fw::nft::ListRules(nl, fw::IpFamily(v6), kTable));
  std::erase_if(all, [&owner](const fw::NftRule& r) { return !owner.Owns(r); });
  return all;
}

// The conditions (user-written nft text) that gate the hook chains' jumps;
// with them, the batch runs through the nft program.
fw::NftRuleSpec Gated(const std::vector<std::string>& conditions) {
  fw::NftRuleSpec rule;
  if (!conditions.empty()) rule.Text(absl::StrJoin(conditions, " "));
  return rule;
}

// The part of the table every ADD shares, in upstream 1.9's order and
// shapes: the table, the lookup chains, hostports_all with its two jumps,
// the hook chains each with one jump to it for local destinations (gated by
// the conditions: traffic routed through the node is never DNAT'd), and the
// masquerading chain with snat.
void AppendShared(fw::NftBatch& b, fw::NftFamily fam, const Config& c, const std::vector<std::string>& conds) {
  b.AddTable(fam, kTable, "CNI portmap plugin");
  b.AddChain(fam, kTable, kHostPorts);
  b.AddChain(fam, kTable, kHostIpHostPorts);
  b.AddChain(fam, kTable, kHostPortsAll);
  b.FlushChain(fam, kTable, kHostPortsAll);
  b.AddRule(fam, kTable, kHostPortsAll, fw::NftRuleSpec().Jump(kHostIpHostPorts));
  b.AddRule(fam, kTable, kHostPortsAll, fw::NftRuleSpec().Jump(kHostPorts));
  for (const char* hook : {"prerouting", "output"}) {
    b.AddChain(fam, kTable, hook, fw::NftHook{"nat", hook, -100});
    b.FlushChain(fam, kTable, hook);
    b.AddRule(fam, kTable, hook, Gated(conds).DestIsLocal().Jump(kHostPortsAll));
  }
  if (c.snat) b.AddChain(fam, kTable, kMasq, fw::NftHook{"nat", "postrouting", 100});
}

// The source a hairpin masquerade matches: the container itself, or with
// masqAll any source (upstream main's masqAll), which covers localhost too.
net::IpPrefix MasqSource(const Config& c, const net::IpPrefix& addr) {
  if (c.masq_all) return *net::IpPrefix::Parse(addr.is_v4() ? "0.0.0.0/0" : "::/0");
  return net::IpPrefix::Host(addr.addr());
}

// The container's own rules: its DNATs and, with snat, its masquerades.
void AppendContainer(fw::NftBatch& b, fw::NftFamily fam, const Config& c, const std::string& id,
                     const net::IpPrefix& addr) {
  const bool v6 = !addr.is_v4();
  const std::string comment = RuleComment(c.name, id);
  // Every DNAT in hostports, a hostIP-pinned one too (upstream 1.9 no longer
  // fills hostip_hostports).
  for (const PortMapping& m : MappingsFor(c, addr)) {
    fw::NftRuleSpec rule;
    if (m.host_ip.has_value() && !m.host_ip->IsUnspecified()) rule.DestAddress(net::IpPrefix::Host(*m.host_ip));
    rule.DestPort(m.protocol, m.host_port).Dnat(addr.addr(), m.container_port).Comment(comment);
    b.AddRule(fam, kTable, kHostPorts, std::move(rule));
  }
  if (c.snat) {
    net::IpPrefix self = net::IpPrefix::Host(addr.addr());
    // Hairpin (container to its own mapped port) and localhost need the reply
    // to come back through us: masquerade them.
    b.AddRule(fam, kTable, kMasq,
              fw::NftRuleSpec().SourceAddress(MasqSource(c, addr)).DestAddress(self).Masquerade().Comment(comment));
    if (!v6 && !c.masq_all) {
      b.AddRule(fam, kTable, kMasq,
                fw::NftRuleSpec()
                    .SourceAddress(net::IpPrefix::Host(*net::IpAddress::Parse("127.0.0.1")))
                    .DestAddress(self)
                    .Masquerade()
                    .Comment(comment));
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
// write it for `c`: each hook chain holding exactly its one jump to
// hostports_all behind "fib daddr type local" (three expressions),
// hostports_all exactly its two jumps ("jump hostip_hostports", then "jump
// hostports"), which proves the lookup chains exist (a jump cannot name a
// missing chain), and with snat the masquerading chain. Upstream 1.9's ADD
// writes the same, so either leaves the other's in place. Writing it again
// is not free: re-adding a chain that exists is an update and the flush
// deletes rules, and the kernel frees both only after an RCU grace period,
// which the netfilter socket's close then waits for (portmap ADD: 15.7 ms).
// With conditions it is always written again, as upstream does on every ADD.
bool SharedInPlace(net::NetlinkSocket& nl, const Config& c, bool v6) {
  if (!(v6 ? c.conditions_v6 : c.conditions_v4).empty()) return false;
  const fw::NftFamily fam = fw::IpFamily(v6);
  if (c.snat) {
    absl::StatusOr<bool> has = fw::nft::HasChain(nl, fam, kTable, kMasq);
    if (!has.ok() || !*has) return false;
  }
  auto one_jump = [&](const char* hook) {
    absl::StatusOr<std::vector<fw::NftRule>> r = fw::nft::ListRules(nl, fam, kTable, hook);
    return r.ok() && r->size() == 1 && (*r)[0].jump == kHostPortsAll && (*r)[0].expressions == 3;
  };
  auto two_jumps = [&] {
    absl::StatusOr<std::vector<fw::NftRule>> r = fw::nft::ListRules(nl, fam, kTable, kHostPortsAll);
    return r.ok() && r->size() == 2 && (*r)[0].jump == kHostIpHostPorts && (*r)[0].expressions == 1 &&
           (*r)[1].jump == kHostPorts && (*r)[1].expressions == 1;
  };
  return one_jump("prerouting") && one_jump("output") && two_jumps();
}

}  // namespace

namespace {

// Tables ip/ip6 cni_hostport, through one NETLINK_NETFILTER socket.
class NftablesRuleSet final : public RuleSet {
 public:
  using RuleSet::RuleSet;
  absl::Status Add(const Config& c, const std::string& id, const std::vector<net::IpPrefix>& addrs) override;
  absl::Status Del(const TeardownConfig& c, const std::string& id) override;
  absl::Status Check(const Config& c, const std::string& id, const std::vector<net::IpPrefix>& addrs) override;
  absl::Status Gc(const std::string& network, const std::vector<std::string>& valid_ids) override;
};

// The container's rules in one transaction with those it had (a repeated
// ADD), recorded (cni/fw/rule_record.h); the shared part only where it is
// not in place already.
absl::Status NftablesRuleSet::Add(const Config& c, const std::string& id, const std::vector<net::IpPrefix>& addrs) {
  const char* what = "unable to set up nftables rules for port mappings";
  ASSIGN_OR_RETURN(net::NetlinkSocket * nl, nf_.Get(), what);
  const fw::RuleRecords records(kNftRecordDir, kTable, c.name);
  return Annotate(records.Replace(*nl, id, Owner{c.name, id}.Rules(), [&](fw::NftBatch& b) {
    std::set<fw::NftFamily> in_place;
    for (const net::IpPrefix& a : addrs) {
      if (SharedInPlace(*nl, c, !a.is_v4())) in_place.insert(fw::IpFamily(!a.is_v4()));
    }
    AppendForward(b, c, id, addrs, in_place);
    return absl::OkStatus();
  }), what);
}

// By the record, else by listing, the attachment's rules and those whose
// comment is the bare container ID (see the top of the file).
absl::Status NftablesRuleSet::Del(const TeardownConfig& c, const std::string& id) {
  const char* what = "deleting nftables port-mapping rules";
  ASSIGN_OR_RETURN(net::NetlinkSocket * nl, nf_.Get(), what);
  const fw::RuleRecords records(kNftRecordDir, kTable, c.name);
  RETURN_IF_ERROR(records.Delete(*nl, id, Owner{c.name, id, /*legacy=*/true, c.addresses}.Rules()), what);
  // A record of the unscoped kind versions before kept ("<cookie>-<id>"):
  // only a hint, and the rules it named are gone with the listing above.
  fw::RuleRecords(kNftRecordDir, kTable).Forget(id);
  return absl::OkStatus();
}

absl::Status NftablesRuleSet::Check(const Config& c, const std::string& id, const std::vector<net::IpPrefix>& addrs) {
  ASSIGN_OR_RETURN(net::NetlinkSocket * nl, nf_.Get());
  // Only the families the container has are checked: a missing ip6 table is
  // fine for an IPv4-only container (upstream 1.1.1 got this wrong).
  for (const net::IpPrefix& a : addrs) {
    bool v6 = !a.is_v4();
    // Rules made before comments named the network count too (upgrade).
    ASSIGN_OR_RETURN(std::vector<fw::NftRule> mine, RulesOf(*nl, v6, Owner{c.name, id, /*legacy=*/true, {a.addr()}}));
    size_t dnat = 0, masq = 0;
    for (const fw::NftRule& r : mine) {
      if (r.chain == kHostPorts || r.chain == kHostIpHostPorts) ++dnat;
      if (r.chain == kMasq) ++masq;
    }
    size_t want_dnat = MappingsFor(c, a).size();
    size_t want_masq = (c.snat && want_dnat > 0) ? (v6 || c.masq_all ? 1 : 2) : 0;
    if (dnat < want_dnat || masq < want_masq) {
      return Error(ErrorCode::kInternal,
                   absl::StrCat("portmap: missing ", fw::NftFamilyName(fw::IpFamily(v6)), " ", kTable, " rules for ",
                                a.addr().ToString(), " (found ", dnat, " DNAT, ", masq, " masquerade)"));
    }
  }
  return absl::OkStatus();
}

// The rules of `network`'s containers not in `valid_ids`, found by their
// comments. A rule whose comment does not name this network (another
// network's, or a bare container ID that could be any network's) stays.
absl::Status NftablesRuleSet::Gc(const std::string& network, const std::vector<std::string>& valid_ids) {
  const char* what = "garbage-collecting nftables port-mapping rules";
  ASSIGN_OR_RETURN(net::NetlinkSocket * nl, nf_.Get(), what);
  const std::string network_hash = fw::NetworkHash(network);
  std::set<std::string, std::less<>> valid;
  for (const std::string& id : valid_ids) valid.insert(fw::AttachmentHash(network, id));
  fw::OwnedRules stale{{{fw::NftFamily::kIp, ""}, {fw::NftFamily::kIp6, ""}}, [&](const fw::NftRule& r) {
                         absl::string_view comment = r.comment;
                         return OfNetwork(comment, network_hash) && valid.count(comment.substr(0, kHashLength)) == 0;
                       }};
  RETURN_IF_ERROR(fw::RuleRecords(kNftRecordDir, kTable, network).Collect(*nl, stale, valid_ids), what);
  return absl::OkStatus();
}

}  // namespace

}  // namespace cni::portmap::nft

namespace cni::portmap {

std::unique_ptr<RuleSet> MakeNftablesRuleSet(LazyNetfilter& nf) { return std::make_unique<nft::NftablesRuleSet>(nf); }

}  // namespace cni::portmap

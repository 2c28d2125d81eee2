// nftables backend: tables ip/ip6 cni_hostport as upstream's knftables code
// builds them. Every rule of a container carries its ID as the comment, which
// is how DEL/GC find them (and how upstream's DEL finds ours).
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cni/error.h"
#include "cni/fw/iptables.h"  // RetryOnConflict
#include "cni/fw/nft.h"
#include "cni/fw/nft_batch.h"
#include "portmap.h"

namespace cni::portmap::nft {
namespace {

constexpr const char* kTable = "cni_hostport";
constexpr const char* kHostPorts = "hostports";
constexpr const char* kHostIpHostPorts = "hostip_hostports";
constexpr const char* kMasq = "masquerading";

const char* Family(bool v6) { return v6 ? "ip6" : "ip"; }

// The rules of one family's table that belong to `id`.
absl::StatusOr<std::vector<fw::NftRule>> RulesOf(bool v6, const std::string& id) {
  absl::StatusOr<std::vector<fw::NftRule>> all = fw::Nft::ListRules(Family(v6), kTable);
  if (!all.ok()) return all.status();
  std::vector<fw::NftRule> mine;
  for (const fw::NftRule& r : *all) {
    if (r.comment == id) mine.push_back(r);
  }
  return mine;
}

// The conditions (user-written nft text) that gate the hook chains' jumps;
// with them, the batch runs through libnftables.
fw::NftRuleSpec Gated(const std::vector<std::string>& conditions) {
  fw::NftRuleSpec rule;
  if (!conditions.empty()) rule.Text(absl::StrJoin(conditions, " "));
  return rule;
}

void AppendFamily(fw::NftBatch& b, const Config& c, const std::string& id, const net::IpPrefix& addr) {
  bool v6 = !addr.is_v4();
  const char* fam = Family(v6);
  const std::vector<std::string>& conds = v6 ? c.conditions_v6 : c.conditions_v4;
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

}  // namespace

void AppendForward(fw::NftBatch& b, const Config& c, const std::string& id, const std::vector<net::IpPrefix>& addrs) {
  for (const net::IpPrefix& a : addrs) AppendFamily(b, c, id, a);
}

namespace {
// One attempt; a rule handle deleted concurrently since the listing fails the
// transaction, and the retry lists again.
absl::Status ForwardOnce(const Config& c, const std::string& id, const std::vector<net::IpPrefix>& addrs) {
  // Stale rules of this container (a repeated ADD) go in the same transaction.
  fw::NftBatch b;
  for (bool v6 : {false, true}) {
    absl::StatusOr<std::vector<fw::NftRule>> stale = RulesOf(v6, id);
    if (!stale.ok()) return stale.status();
    for (const fw::NftRule& r : *stale) b.DeleteRule(r);
  }
  AppendForward(b, c, id, addrs);
  return fw::Nft::Apply(b);  // libnftables only for user-written conditions
}

absl::Status UnforwardOnce(const std::string& id) {
  fw::NftBatch b;
  for (bool v6 : {false, true}) {
    absl::StatusOr<std::vector<fw::NftRule>> mine = RulesOf(v6, id);
    if (!mine.ok()) return mine.status();
    for (const fw::NftRule& r : *mine) b.DeleteRule(r);
  }
  return b.Commit();  // nothing of ours (e.g. the iptables backend made the rules): no-op
}
}  // namespace

absl::Status Forward(const Config& c, const std::string& id, const std::vector<net::IpPrefix>& addrs) {
  return Annotate(fw::RetryOnConflict([&] { return ForwardOnce(c, id, addrs); }),
                  "unable to set up nftables rules for port mappings");
}

absl::Status Unforward(const std::string& id) {
  return Annotate(fw::RetryOnConflict([&] { return UnforwardOnce(id); }), "deleting nftables port-mapping rules");
}

absl::Status Check(const Config& c, const std::string& id, const std::vector<net::IpPrefix>& addrs) {
  // Only the families the container has are checked: a missing ip6 table is
  // fine for an IPv4-only container (upstream 1.1.1 got this wrong).
  for (const net::IpPrefix& a : addrs) {
    bool v6 = !a.is_v4();
    absl::StatusOr<std::vector<fw::NftRule>> mine = RulesOf(v6, id);
    if (!mine.ok()) return mine.status();
    size_t dnat = 0, masq = 0;
    for (const fw::NftRule& r : *mine) {
      if (r.chain == kHostPorts || r.chain == kHostIpHostPorts) ++dnat;
      if (r.chain == kMasq) ++masq;
    }
    size_t want_dnat = MappingsFor(c, a).size();
    size_t want_masq = (c.snat && want_dnat > 0) ? (v6 ? 1 : 2) : 0;
    if (dnat < want_dnat || masq < want_masq) {
      return Error(ErrorCode::kInternal, absl::StrCat("portmap: missing ", Family(v6), " ", kTable, " rules for ",
                                                      a.addr().ToString(), " (found ", dnat, " DNAT, ", masq,
                                                      " masquerade)"));
    }
  }
  return absl::OkStatus();
}

absl::Status Gc(const std::vector<std::string>& valid_ids) {
  fw::NftBatch b;
  for (bool v6 : {false, true}) {
    absl::StatusOr<std::vector<fw::NftRule>> all = fw::Nft::ListRules(Family(v6), kTable);
    if (!all.ok()) return all.status();
    for (const fw::NftRule& r : *all) {
      if (r.comment.empty()) continue;  // the hook chains' jumps
      bool valid = false;
      for (const std::string& v : valid_ids) valid = valid || v == r.comment;
      if (!valid) b.DeleteRule(r);
    }
  }
  return Annotate(b.Commit(), "garbage-collecting nftables port-mapping rules");
}

}  // namespace cni::portmap::nft

// iptables backend, chain for chain what upstream's firewall builds in the
// filter table of each address family:
//   FORWARD (first):  -m comment --comment "CNI firewall plugin rules" -j CNI-FORWARD
//   CNI-FORWARD (first): -m comment --comment "CNI firewall plugin admin overrides" -j <admin chain>
//   CNI-FORWARD, per address: -d IP -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
//                              -s IP -j ACCEPT
// The admin chain is created and never flushed: it is the administrator's.
//
// With iptables-nft (whose tables are nf_tables tables) the usual ADD reads
// the few facts it needs over netlink and appends the address rules over
// netlink in iptables-nft's own encoding (cni/fw/ipt_rule.h renders both),
// recording their handles (cni/fw/rule_record.h); DEL removes them by those
// handles. No program runs and neither grows with the number of containers.
// Everything else (the node's first ADD, iptables-legacy, a DEL without a
// record) takes upstream's way: an iptables-save snapshot and one
// iptables-restore commit per family.
#include <algorithm>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "cni/fw/iptables.h"
#include "cni/fw/ipt_rule.h"
#include "cni/fw/nft_batch.h"
#include "cni/fw/rule_record.h"
#include "firewall.h"
#include "intents.h"
#include "iptables_rules.h"

namespace cni::firewall {
namespace {

constexpr const char* kRecordDir = "/run/cni/firewall/iptables";

std::vector<net::IpPrefix> OfFamily(const std::vector<net::IpPrefix>& all, bool v6) {
  std::vector<net::IpPrefix> out;
  for (const net::IpPrefix& a : all) {
    if (a.is_v4() != v6) out.push_back(a);
  }
  return out;
}

// The addresses' rules, in order.
std::vector<fw::IptRule> AddressRules(const std::vector<net::IpPrefix>& addrs) {
  std::vector<fw::IptRule> rules;
  for (const net::IpPrefix& a : addrs) {
    for (fw::IptRule& r : ipt::AddressRules(a)) rules.push_back(std::move(r));
  }
  return rules;
}

// The addresses' rules as iptables-save prints them ("-A CNI-FORWARD ...").
std::vector<std::string> AddressLines(const std::vector<net::IpPrefix>& addrs) {
  std::vector<std::string> lines;
  for (const fw::IptRule& r : AddressRules(addrs)) lines.push_back(r.Saved());
  return lines;
}

template <typename T>
bool Contains(const std::vector<T>& v, const T& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// With iptables-nft: whether the shared part (both chains and both jumps)
// is in place, read over netlink: a few GETs and the first rules of FORWARD
// and CNI-FORWARD, whatever the number of containers. nullopt: could not
// tell (take a snapshot).
std::optional<bool> SharedInPlace(net::NetlinkSocket& nl, fw::NftFamily family, const std::string& admin) {
  absl::StatusOr<bool> priv = fw::nft::HasChain(nl, family, ipt::kFilter, ipt::kPrivChain);
  absl::StatusOr<bool> adm = fw::nft::HasChain(nl, family, ipt::kFilter, admin);
  if (!priv.ok() || !adm.ok()) return std::nullopt;
  if (!*priv || !*adm) return false;
  // Upstream inserts the jump at the top; the isolation jump may have been
  // put above it since, and other tools' jumps too: look a little further.
  absl::StatusOr<std::vector<fw::NftRule>> forward =
      fw::nft::ListFirstRules(nl, family, ipt::kFilter, ipt::kForwardChain, 8);
  absl::StatusOr<std::vector<fw::NftRule>> first = fw::nft::ListFirstRules(nl, family, ipt::kFilter, ipt::kPrivChain, 1);
  if (!forward.ok() || !first.ok()) return std::nullopt;
  bool jumps = std::any_of(forward->begin(), forward->end(), [](const fw::NftRule& r) { return r.jump == ipt::kPrivChain; });
  return jumps && !first->empty() && first->front().jump == admin;
}

// Upstream's way, from a snapshot: the chains and jumps still missing and
// the address rules not there yet, in one iptables-restore commit.
absl::Status AddFromSnapshot(const Config& c, bool v6, const std::vector<net::IpPrefix>& addrs) {
  return fw::RetryOnConflict([&]() -> absl::Status {
    ASSIGN_OR_RETURN(fw::IptTable t, fw::IptablesSave(v6, ipt::kFilter));
    std::string b = ipt::SharedLines(t, c.admin_chain);
    std::vector<std::string> present = t.RulesOf(ipt::kPrivChain);
    for (const std::string& line : AddressLines(addrs)) {
      if (!Contains(present, line)) absl::StrAppend(&b, line, "\n");
    }
    return b.empty() ? absl::OkStatus() : fw::IptablesRestore(v6, ipt::kFilter, b);
  });
}

// The address rules over netlink, their handles recorded as `key`'s. False:
// the shared part is not (known to be) in place, nothing was done.
absl::StatusOr<bool> AddOverNetlink(LazyNetfilter& nf, const Config& c, bool v6, const std::vector<net::IpPrefix>& addrs,
                                    const fw::RuleRecords& records, const std::string& key) {
  if (!fw::IptablesIsNft(v6)) return false;
  ASSIGN_OR_RETURN(net::NetlinkSocket * nl, nf.Get());
  const fw::NftFamily family = fw::IpFamily(v6);
  if (SharedInPlace(*nl, family, c.admin_chain) != true) return false;
  std::optional<std::vector<fw::NftRuleSpec>> specs = fw::ToNft(AddressRules(addrs), v6);
  if (!specs.has_value()) return false;
  fw::NftBatch b;
  for (fw::NftRuleSpec& spec : *specs) b.AddRule(family, ipt::kFilter, ipt::kPrivChain, std::move(spec));
  std::vector<fw::NftRule> added;
  RETURN_IF_ERROR(b.Commit(*nl, &added), "adding firewall rules");
  records.Note(*nl, key, family, added);
  return true;
}

// Every copy of the addresses' rules, from a snapshot (upstream deletes one
// copy; a copy left behind would keep the address open to its next owner).
absl::Status DelFromSnapshot(LazyNetfilter& nf, bool v6, const std::vector<net::IpPrefix>& addrs) {
  absl::StatusOr<net::NetlinkSocket*> nl = fw::IptablesIsNft(v6) ? nf.Get() : nullptr;
  ASSIGN_OR_RETURN(bool has_chain, fw::IptablesHasChain(nl.ok() ? *nl : nullptr, v6, ipt::kFilter, ipt::kPrivChain));
  if (!has_chain) return absl::OkStatus();
  const std::vector<std::string> ours = AddressLines(addrs);
  return fw::RetryOnConflict([&]() -> absl::Status {
    ASSIGN_OR_RETURN(fw::IptTable t, fw::IptablesSave(v6, ipt::kFilter));
    std::string b;
    for (const std::string& line : t.RulesOf(ipt::kPrivChain)) {
      if (Contains(ours, line)) b += fw::IptDeleteLine(line);
    }
    return b.empty() ? absl::OkStatus() : fw::IptablesRestore(v6, ipt::kFilter, b);
  });
}

absl::Status CheckFamily(const Config& c, bool v6, const std::vector<net::IpPrefix>& addrs) {
  ASSIGN_OR_RETURN(fw::IptTable t, fw::IptablesSave(v6, ipt::kFilter));
  auto missing = [](absl::string_view what) {
    return Error(ErrorCode::kInternal, absl::StrCat("firewall: expected ", what, " not found"));
  };
  for (const std::string& chain : {std::string(ipt::kPrivChain), c.admin_chain}) {
    if (!t.HasChain(chain)) return missing(absl::StrCat("chain ", chain));
  }
  if (!t.HasJump(ipt::kForwardChain, ipt::kPrivChain)) return missing("FORWARD rule jumping to CNI-FORWARD");
  if (!t.HasJump(ipt::kPrivChain, c.admin_chain)) {
    return missing(absl::StrCat("CNI-FORWARD rule jumping to ", c.admin_chain));
  }
  std::vector<std::string> present = t.RulesOf(ipt::kPrivChain);
  for (const std::string& line : AddressLines(addrs)) {
    if (!Contains(present, line)) return missing(absl::StrCat("rule \"", line, "\""));
  }
  return absl::OkStatus();
}

class IptablesRuleSet final : public RuleSet {
 public:
  explicit IptablesRuleSet(LazyNetfilter& nf) : nf_(nf), intents_(AddressIntents::ForCurrentNetns()) {}

  absl::Status Add(const Config& c, const Owner& o) override {
    const fw::RuleRecords records(kRecordDir, ipt::kFilter, o.network);
    const std::string key = Owner::IntentPrefix(o.network) + o.Key();
    // A repeated ADD, or one after an ADD that was killed, must not append
    // its rules twice: only the snapshot sees which are there. (Its intent
    // is written before any rule and removed after the last.)
    const bool repeated = intents_.Has(key);
    std::vector<net::IpPrefix> intended = intents_.Load(key);
    for (const net::IpPrefix& a : c.addresses) {
      if (!Contains(intended, a)) intended.push_back(a);
    }
    // Before the first rule: from here on, whatever stops this ADD leaves
    // rules that DEL finds by these addresses.
    RETURN_IF_ERROR(intents_.Save(key, intended), "recording the attachment's addresses");
    // The handles of rules made over netlink, for a DEL that needs no
    // snapshot; a repeated ADD's rules may be older than any record.
    if (repeated) records.Forget(o.Key());
    for (bool v6 : {false, true}) {
      std::vector<net::IpPrefix> addrs = OfFamily(c.addresses, v6);
      if (addrs.empty()) continue;
      bool done = false;
      if (!repeated) {
        ASSIGN_OR_RETURN(done, AddOverNetlink(nf_, c, v6, addrs, records, o.Key()));
      }
      if (!done) RETURN_IF_ERROR(AddFromSnapshot(c, v6, addrs), "adding iptables rules");
    }
    return absl::OkStatus();
  }

  absl::Status Del(const Config& c, const Owner& o) override { return Teardown(o.network, o.Key(), c.addresses, {}); }

  absl::Status Check(const Config& c, const Owner&) override {
    for (bool v6 : {false, true}) {
      std::vector<net::IpPrefix> addrs = OfFamily(c.addresses, v6);
      if (!addrs.empty()) RETURN_IF_ERROR(CheckFamily(c, v6, addrs));
    }
    return absl::OkStatus();
  }

  // Upstream's rules carry no owner: only ours, known by their records and
  // intents, can be told apart. Those of `network`'s attachments not in
  // `valid` go; an address that an attachment which stays (of any network)
  // still claims is spared.
  absl::Status Gc(const std::string& network, const std::vector<Owner>& valid) override {
    const fw::RuleRecords records(kRecordDir, ipt::kFilter, network);
    std::vector<std::string> keep;
    for (const Owner& o : valid) keep.push_back(o.Key());
    // The network's attachments not kept: recorded, or (the truth) intended.
    std::vector<std::string> stale = records.StaleKeys(keep);
    const std::string prefix = Owner::IntentPrefix(network);
    for (const std::string& intent : intents_.KeysWithPrefix(prefix)) {
      const std::string key = intent.substr(prefix.size());
      if (!Contains(keep, key) && !Contains(stale, key)) stale.push_back(key);
    }
    std::vector<net::IpPrefix> spare;
    for (const std::string& intent : intents_.KeysWithPrefix("")) {
      if (absl::StartsWith(intent, prefix) && Contains(stale, intent.substr(prefix.size()))) continue;
      for (const net::IpPrefix& a : intents_.Load(intent)) spare.push_back(a);
    }
    std::vector<absl::Status> failures;
    for (const std::string& key : stale) {
      if (absl::Status st = Teardown(network, key, {}, spare); !st.ok()) failures.push_back(st);
    }
    records.ForgetAllBut(keep);
    return JoinErrors(failures);
  }

  absl::Status Isolate(const Config& c) override { return ipt::Isolate(nf_, c); }

 private:
  // Removes the rules of `network`'s attachment `key`: per family by its
  // handle record while that holds, else every copy of the rules of `addrs`
  // and of the addresses its intent names, but those in `spare`. The intent
  // goes last, once nothing failed: a DEL that fails or is killed before is
  // retried with it.
  absl::Status Teardown(const std::string& network, const std::string& key, std::vector<net::IpPrefix> addrs,
                        const std::vector<net::IpPrefix>& spare) {
    const fw::RuleRecords records(kRecordDir, ipt::kFilter, network);
    const std::string intent = Owner::IntentPrefix(network) + key;
    for (const net::IpPrefix& a : intents_.Load(intent)) {
      if (!Contains(addrs, a)) addrs.push_back(a);
    }
    std::erase_if(addrs, [&](const net::IpPrefix& a) { return Contains(spare, a); });
    std::vector<absl::Status> failures;
    // The socket only when there is a record to use.
    absl::StatusOr<net::NetlinkSocket*> nl = records.Has(key) ? nf_.Get() : nullptr;
    for (bool v6 : {false, true}) {
      // By handle, one transaction; else (no record that holds, a rule gone
      // already) from a snapshot.
      std::optional<std::vector<fw::NftRule>> recorded =
          nl.ok() && *nl != nullptr ? records.Recorded(**nl, key, fw::IpFamily(v6)) : std::nullopt;
      if (recorded.has_value()) {
        fw::NftBatch b;
        for (const fw::NftRule& r : *recorded) b.DeleteRule(r);
        if (b.Commit(**nl).ok()) continue;
      }
      std::vector<net::IpPrefix> of_family = OfFamily(addrs, v6);
      if (of_family.empty() || !fw::IptablesAvailable(v6)) continue;
      if (absl::Status st = DelFromSnapshot(nf_, v6, of_family); !st.ok()) failures.push_back(st);
    }
    records.Forget(key);
    // A record of the kind versions before kept, named like the intent.
    fw::RuleRecords(kRecordDir, ipt::kFilter).Forget(intent);
    RETURN_IF_ERROR(JoinErrors(failures), "removing iptables rules");
    intents_.Remove(intent);
    return absl::OkStatus();
  }

  LazyNetfilter& nf_;
  AddressIntents intents_;
};

}  // namespace

std::unique_ptr<RuleSet> MakeIptablesRuleSet(LazyNetfilter& nf) { return std::make_unique<IptablesRuleSet>(nf); }

}  // namespace cni::firewall

// The ingress policies same-bridge and isolated in iptables, as upstream
// builds them (docker's isolation between networks):
//   FORWARD (first):       -j CNI-ISOLATION-STAGE-1
//   CNI-ISOLATION-STAGE-1: -i BR ! -o BR -j CNI-ISOLATION-STAGE-2  (leaving the bridge)
//                          -i BR -o BR -j DROP                      (isolated only, put above)
//                          -j RETURN                                 (last)
//   CNI-ISOLATION-STAGE-2: -o BR -j DROP                             (entering another bridge)
//                          -j RETURN                                 (last)
// so a packet from bridge A to bridge B is dropped when either is isolated,
// while traffic to and from the host (INPUT/OUTPUT) never meets these chains.
//
// The chains are shared by every container of the bridge and set up once:
// with iptables-nft, the bridge's rule handles are recorded
// (cni/fw/rule_record.h) and a later ADD finds them in the two small chains
// over netlink instead of taking a snapshot of the whole filter table.
#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "cni/base/status_macros.h"
#include "cni/fw/nft.h"
#include "cni/fw/rule_record.h"
#include "iptables_rules.h"

namespace cni::firewall::ipt {
namespace {

constexpr const char* kStage1 = "CNI-ISOLATION-STAGE-1";
constexpr const char* kStage2 = "CNI-ISOLATION-STAGE-2";
constexpr const char* kRecordDir = "/run/cni/firewall/isolation";
constexpr const char* kSharedComment = "CNI firewall plugin rules (ingressPolicy: same-bridge|isolated)";

std::string PolicyComment(IngressPolicy p) {
  return absl::StrCat("CNI firewall plugin rules (ingressPolicy: ",
                      p == IngressPolicy::kIsolated ? "isolated" : "same-bridge", ")");
}

// The bridge's own rules per chain, in the order they end up (top first).
struct BridgeRules {
  std::vector<fw::IptRule> stage1;
  std::vector<fw::IptRule> stage2;
};

BridgeRules RulesFor(const Config& c) {
  const std::string& br = c.bridge;
  const std::string policy = PolicyComment(c.ingress_policy);
  BridgeRules r;
  if (c.ingress_policy == IngressPolicy::kIsolated) {
    r.stage1.push_back(fw::IptRule(kStage1).InInterface(br).OutInterface(br).Comment(policy).Drop());
  }
  r.stage1.push_back(fw::IptRule(kStage1).InInterface(br).OutInterface(br, true).Comment(policy).Jump(kStage2));
  r.stage2.push_back(fw::IptRule(kStage2).OutInterface(br).Comment(kSharedComment).Drop());
  return r;
}

bool Has(const std::vector<std::string>& lines, const std::string& line) {
  return std::find(lines.begin(), lines.end(), line) != lines.end();
}

// Upstream's InsertUnique calls as one restore commit: what is missing, the
// bridge's rules put first (the last of them inserted first), the RETURNs
// appended.
std::string MissingLines(const fw::IptTable& t, const BridgeRules& r) {
  std::string b;
  for (const char* chain : {kStage1, kStage2}) {
    if (!t.HasChain(chain)) absl::StrAppend(&b, "-N ", chain, "\n");
  }
  if (!t.HasJump(kForwardChain, kStage1)) {
    b += fw::IptRule(kForwardChain).Comment(kSharedComment).Jump(kStage1).InsertFirstLine();
  }
  for (auto [chain, rules] : {std::pair{kStage1, &r.stage1}, std::pair{kStage2, &r.stage2}}) {
    const std::vector<std::string> present = t.RulesOf(chain);
    for (auto it = rules->rbegin(); it != rules->rend(); ++it) {
      if (!Has(present, it->Saved())) b += it->InsertFirstLine();
    }
    const fw::IptRule ret = fw::IptRule(chain).Comment(kSharedComment).Return();
    if (!Has(present, ret.Saved())) b += ret.AppendLine();
  }
  return b;
}

// With iptables-nft: whether the bridge's recorded rules (`recorded`, while
// the record holds) are still in their chains and FORWARD still jumps to
// stage 1 (a few small listings).
bool InPlace(net::NetlinkSocket& nl, const std::optional<std::vector<fw::NftRule>>& recorded, fw::NftFamily family) {
  if (!recorded.has_value()) return false;
  absl::StatusOr<std::vector<fw::NftRule>> forward = fw::nft::ListFirstRules(nl, family, kFilter, kForwardChain, 8);
  if (!forward.ok() ||
      std::none_of(forward->begin(), forward->end(), [](const fw::NftRule& r) { return r.jump == kStage1; })) {
    return false;
  }
  for (const char* chain : {kStage1, kStage2}) {
    absl::StatusOr<std::vector<fw::NftRule>> now = fw::nft::ListRules(nl, family, kFilter, chain);
    if (!now.ok()) return false;
    for (const fw::NftRule& mine : *recorded) {
      if (mine.chain != chain) continue;
      if (std::none_of(now->begin(), now->end(), [&](const fw::NftRule& r) { return r.handle == mine.handle; })) {
        return false;
      }
    }
  }
  return true;
}

// The bridge's rules with their handles: iptables-save and the netlink
// listing show a chain's rules in the same order, so the n-th saved line is
// the n-th listed rule. nullopt when the counts differ (a writer came
// between the two reads): nothing is recorded, and the next ADD takes a
// snapshot again.
std::optional<std::vector<fw::NftRule>> WithHandles(net::NetlinkSocket& nl, bool v6, const BridgeRules& r) {
  const fw::NftFamily family = fw::IpFamily(v6);
  absl::StatusOr<fw::IptTable> t = fw::IptablesSave(v6, kFilter);
  if (!t.ok()) return std::nullopt;
  std::vector<fw::NftRule> found;
  for (auto [chain, rules] : {std::pair{kStage1, &r.stage1}, std::pair{kStage2, &r.stage2}}) {
    const std::vector<std::string> saved = t->RulesOf(chain);
    absl::StatusOr<std::vector<fw::NftRule>> listed = fw::nft::ListRules(nl, family, kFilter, chain);
    if (!listed.ok() || listed->size() != saved.size()) return std::nullopt;
    for (const fw::IptRule& rule : *rules) {
      auto at = std::find(saved.begin(), saved.end(), rule.Saved());
      if (at == saved.end()) return std::nullopt;
      found.push_back((*listed)[at - saved.begin()]);
    }
  }
  return found;
}

}  // namespace

absl::Status Isolate(LazyNetfilter& nf, const Config& c) {
  // Per bridge and policy: isolation rules belong to no one network.
  const fw::RuleRecords records(kRecordDir, kFilter);
  const std::string key =
      absl::StrCat(c.ingress_policy == IngressPolicy::kIsolated ? "isolated-" : "same-bridge-", c.bridge);
  const BridgeRules rules = RulesFor(c);
  for (bool v6 : {false, true}) {
    if (std::none_of(c.addresses.begin(), c.addresses.end(), [v6](const net::IpPrefix& a) { return a.is_v4() != v6; })) {
      continue;  // upstream: only the families the container has
    }
    const fw::NftFamily family = fw::IpFamily(v6);
    absl::StatusOr<net::NetlinkSocket*> nl = fw::IptablesIsNft(v6) ? nf.Get() : absl::StatusOr<net::NetlinkSocket*>(nullptr);
    if (nl.ok() && *nl != nullptr && InPlace(**nl, records.Recorded(**nl, key, family), family)) continue;
    RETURN_IF_ERROR(fw::RetryOnConflict([&]() -> absl::Status {
      ASSIGN_OR_RETURN(fw::IptTable t, fw::IptablesSave(v6, kFilter));
      std::string b = MissingLines(t, rules);
      return b.empty() ? absl::OkStatus() : fw::IptablesRestore(v6, kFilter, b);
    }), "setting up ingress policy");
    if (nl.ok() && *nl != nullptr) {
      std::optional<std::vector<fw::NftRule>> found = WithHandles(**nl, v6, rules);
      if (found.has_value()) {
        records.Note(**nl, key, family, *found);
      } else {
        records.Forget(key);
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace cni::firewall::ipt

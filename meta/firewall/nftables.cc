// nftables backend (ours; upstream has none): upstream's semantics in tables
// of our own, ip and ip6 "cni_firewall", one transaction per change:
//   chain forward (filter hook forward priority 0, policy accept):
//       jump isolation_stage_1, jump cni_forward
//   chain cni_forward: jump admin (the administrator's chain, never
//       flushed), then per address, commented with the attachment:
//       ip daddr IP ct state related,established accept
//       ip saddr IP accept
//   chains isolation_stage_1/2: the ingress policy's rules per bridge
//       (as upstream's CNI-ISOLATION-STAGE-1/2, see isolation.cc).
// An nftables "accept" ends only its own base chain: where another table
// (say iptables' FORWARD with policy DROP) drops forwarded traffic, accept it
// there too. The isolation drops hold whatever other tables do.
//
// ADD records the handles of the rules it made (cni/fw/rule_record.h) and DEL
// deletes by them; the comments find the rules again when there is no record
// (and for GC), by listing cni_forward. The comment and the record both name
// the network, so each lookup sees only its own network's.
#include <algorithm>
#include <functional>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/hash.h"
#include "cni/base/status_macros.h"
#include "cni/fw/nft.h"
#include "cni/fw/nft_batch.h"
#include "cni/fw/rule_record.h"
#include "firewall.h"

namespace cni::firewall {
namespace {

constexpr const char* kTable = "cni_firewall";
constexpr const char* kBase = "forward";
constexpr const char* kPriv = "cni_forward";
constexpr const char* kAdmin = "admin";
constexpr const char* kStage1 = "isolation_stage_1";
constexpr const char* kStage2 = "isolation_stage_2";
constexpr const char* kRecordDir = "/run/cni/firewall/nftables";
constexpr size_t kCommentMax = 128;

// "<network hash> " starts the comment of every rule of the network.
std::string NetworkMark(const std::string& network) { return HashWithPrefix(13, "", network) + " "; }

bool PlainWord(absl::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char ch) {
    return absl::ascii_isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == '.' || ch == ':';
  });
}

// "<network hash> <container ID> <ifname>", readable in `nft list`; a hash of
// the two when they would not fit in a comment or hold odd characters.
std::string CommentOf(const Owner& o) {
  std::string readable = absl::StrCat(NetworkMark(o.network), o.container_id, " ", o.ifname);
  if (readable.size() <= kCommentMax && PlainWord(o.container_id) && PlainWord(o.ifname)) return readable;
  return absl::StrCat(NetworkMark(o.network), HashWithPrefix(40, "h:", absl::StrCat(o.container_id, "/", o.ifname)));
}

std::vector<net::IpPrefix> OfFamily(const std::vector<net::IpPrefix>& all, bool v6) {
  std::vector<net::IpPrefix> out;
  for (const net::IpPrefix& a : all) {
    if (a.is_v4() != v6) out.push_back(a);
  }
  return out;
}

// The table, its chains and jumps: the node's first ADD. cni_forward is
// created exclusively, so of two first ADDs at once one fails and retries.
void AppendSetup(fw::NftBatch& b, fw::NftFamily f) {
  b.AddTable(f, kTable);
  b.AddChain(f, kTable, kBase, fw::NftHook{.type = "filter", .hook = "forward", .priority = 0});
  for (const char* chain : {kStage1, kStage2, kAdmin}) b.AddChain(f, kTable, chain);
  b.CreateChain(f, kTable, kPriv);
  b.AddRule(f, kTable, kBase, fw::NftRuleSpec().Jump(kStage1));
  b.AddRule(f, kTable, kBase, fw::NftRuleSpec().Jump(kPriv));
  b.AddRule(f, kTable, kPriv, fw::NftRuleSpec().Jump(kAdmin));
}

void AppendAddressRules(fw::NftBatch& b, fw::NftFamily f, const std::vector<net::IpPrefix>& addrs,
                        const std::string& comment) {
  for (const net::IpPrefix& a : addrs) {
    b.AddRule(f, kTable, kPriv, fw::NftRuleSpec().DestAddress(a).CtRelatedEstablished().Accept().Comment(comment));
    b.AddRule(f, kTable, kPriv, fw::NftRuleSpec().SourceAddress(a).Accept().Comment(comment));
  }
}

// The rules of cni_forward (both families) whose comment `select` selects;
// an attachment's are those with its comment (CommentOf).
fw::OwnedRules Selected(std::function<bool(const std::string&)> select) {
  return {{{fw::NftFamily::kIp, kPriv}, {fw::NftFamily::kIp6, kPriv}},
          [select = std::move(select)](const fw::NftRule& r) { return select(r.comment); }};
}

class NftablesRuleSet final : public RuleSet {
 public:
  explicit NftablesRuleSet(LazyNetfilter& nf) : nf_(nf) {}

  // One transaction: the table and its chains on the node's first ADD
  // (cni_forward is created exclusively, so of two first ADDs at once one
  // fails and retries), the attachment's earlier rules out (a repeated ADD),
  // its rules in.
  absl::Status Add(const Config& c, const Owner& o) override {
    ASSIGN_OR_RETURN(net::NetlinkSocket * nl, nf_.Get());
    const std::string comment = CommentOf(o);
    const fw::RuleRecords records(kRecordDir, kTable, o.network);
    const fw::OwnedRules mine = Selected([&](const std::string& cm) { return cm == comment; });
    RETURN_IF_ERROR(records.Replace(*nl, o.Key(), mine, [&](fw::NftBatch& b) -> absl::Status {
      for (bool v6 : {false, true}) {
        std::vector<net::IpPrefix> addrs = OfFamily(c.addresses, v6);
        if (addrs.empty()) continue;
        const fw::NftFamily f = fw::IpFamily(v6);
        ASSIGN_OR_RETURN(bool ready, fw::nft::HasChain(*nl, f, kTable, kPriv));
        if (!ready) AppendSetup(b, f);
        AppendAddressRules(b, f, addrs, comment);
      }
      return absl::OkStatus();
    }), "adding nftables firewall rules");
    return absl::OkStatus();
  }

  absl::Status Del(const Config&, const Owner& o) override {
    ASSIGN_OR_RETURN(net::NetlinkSocket * nl, nf_.Get());
    const std::string comment = CommentOf(o);
    const fw::OwnedRules mine = Selected([&](const std::string& cm) { return cm == comment; });
    RETURN_IF_ERROR(fw::RuleRecords(kRecordDir, kTable, o.network).Delete(*nl, o.Key(), mine),
                    "removing nftables firewall rules");
    // A record of the kind versions before kept ("<cookie>-<intent key>").
    fw::RuleRecords(kRecordDir, kTable).Forget(Owner::IntentPrefix(o.network) + o.Key());
    return absl::OkStatus();
  }

  absl::Status Check(const Config& c, const Owner& o) override {
    ASSIGN_OR_RETURN(net::NetlinkSocket * nl, nf_.Get());
    const std::string comment = CommentOf(o);
    for (bool v6 : {false, true}) {
      std::vector<net::IpPrefix> addrs = OfFamily(c.addresses, v6);
      if (addrs.empty()) continue;
      ASSIGN_OR_RETURN(std::vector<fw::NftRule> mine, fw::nft::ListRules(*nl, fw::IpFamily(v6), kTable, kPriv));
      std::erase_if(mine, [&](const fw::NftRule& r) { return r.comment != comment; });
      if (mine.size() < 2 * addrs.size()) {
        return Error(ErrorCode::kInternal, absl::StrCat("firewall: nftables rules of ", fw::NftFamilyName(fw::IpFamily(v6)),
                                                        " ", kTable, " missing for ", o.container_id));
      }
    }
    return absl::OkStatus();
  }

  absl::Status Gc(const std::string& network, const std::vector<Owner>& valid) override {
    std::vector<std::string> keep_comments, keep_keys;
    for (const Owner& o : valid) keep_comments.push_back(CommentOf(o)), keep_keys.push_back(o.Key());
    const std::string mark = NetworkMark(network);
    ASSIGN_OR_RETURN(net::NetlinkSocket * nl, nf_.Get());
    const fw::OwnedRules stale = Selected([&](const std::string& cm) {
      return absl::StartsWith(cm, mark) && std::find(keep_comments.begin(), keep_comments.end(), cm) == keep_comments.end();
    });
    RETURN_IF_ERROR(fw::RuleRecords(kRecordDir, kTable, network).Collect(*nl, stale, keep_keys),
                    "garbage-collecting nftables firewall rules");
    return absl::OkStatus();
  }

  // The bridge's isolation rules, once per bridge and policy (their comment
  // says which), in each family the container has addresses of.
  absl::Status Isolate(const Config& c) override {
    ASSIGN_OR_RETURN(net::NetlinkSocket * nl, nf_.Get());
    const bool isolated = c.ingress_policy == IngressPolicy::kIsolated;
    const std::string comment = absl::StrCat("bridge ", c.bridge, isolated ? " isolated" : " same-bridge");
    for (bool v6 : {false, true}) {
      if (OfFamily(c.addresses, v6).empty()) continue;
      const fw::NftFamily f = fw::IpFamily(v6);
      ASSIGN_OR_RETURN(std::vector<fw::NftRule> present, fw::nft::ListRules(*nl, f, kTable, kStage1));
      if (std::any_of(present.begin(), present.end(), [&](const fw::NftRule& r) { return r.comment == comment; })) {
        continue;
      }
      fw::NftBatch b;
      if (isolated) {
        b.AddRule(f, kTable, kStage1,
                  fw::NftRuleSpec().InInterface(c.bridge).OutInterface(c.bridge).Drop().Comment(comment));
      }
      b.AddRule(f, kTable, kStage1,
                fw::NftRuleSpec().InInterface(c.bridge).OutInterface(c.bridge, false).Jump(kStage2).Comment(comment));
      b.AddRule(f, kTable, kStage2, fw::NftRuleSpec().OutInterface(c.bridge).Drop().Comment(comment));
      RETURN_IF_ERROR(b.Commit(*nl), "setting up ingress policy");
    }
    return absl::OkStatus();
  }

 private:
  LazyNetfilter& nf_;
};

}  // namespace

std::unique_ptr<RuleSet> MakeNftablesRuleSet(LazyNetfilter& nf) { return std::make_unique<NftablesRuleSet>(nf); }

}  // namespace cni::firewall

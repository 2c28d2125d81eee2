#include "cni/fw/spoofcheck.h"

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "cni/fw/nft.h"
#include "cni/fw/nft_batch.h"
#include "cni/fw/validate.h"

namespace cni::fw {
namespace {

constexpr NftFamily kFamily = NftFamily::kBridge;
constexpr const char* kTable = "nat";
constexpr const char* kBase = "PREROUTING";

std::string IfaceChain(absl::string_view ref_id) { return absl::StrCat("cni-br-iface-", ref_id); }
std::string Comment(absl::string_view ref_id) { return absl::StrCat("macspoofchk-", ref_id); }

// Deletes of the port's rules in the base chain (listed first, so that a
// repeated setup replaces them instead of adding a second jump).
absl::Status DeleteBaseRules(net::NetlinkSocket& nf, NftBatch& b, absl::string_view ref_id) {
  absl::StatusOr<std::vector<NftRule>> rules = nft::ListRules(nf, kFamily, kTable);
  if (!rules.ok()) return rules.status();
  for (const NftRule& r : *rules) {
    if (r.chain == kBase && r.comment == Comment(ref_id)) b.DeleteRule(r);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status SetupSpoofCheck(absl::string_view host_iface, absl::string_view mac, absl::string_view ref_id) {
  ASSIGN_OR_RETURN(net::NetlinkSocket nf, nft::OpenSocket(), "setting up spoof-check");
  return SetupSpoofCheck(nf, host_iface, mac, ref_id);
}

absl::Status SetupSpoofCheck(net::NetlinkSocket& nf, absl::string_view host_iface, absl::string_view mac,
                             absl::string_view ref_id) {
  if (absl::Status st = ValidateIdentifier("spoof-check interface", host_iface); !st.ok()) return st;
  if (absl::Status st = ValidateIdentifier("spoof-check id", ref_id); !st.ok()) return st;
  absl::StatusOr<net::MacAddress> hw = net::MacAddress::Parse(mac);
  if (!hw.ok()) return Error(ErrorCode::kInternal, absl::StrCat("spoof-check: bad MAC \"", mac, "\""));
  std::string iface_chain = IfaceChain(ref_id);
  std::string mac_chain = iface_chain + "-mac";
  std::string comment = Comment(ref_id);
  NftBatch b;
  // Declarations, flushes and rules in one transaction (upstream uses two).
  b.AddTable(kFamily, kTable);
  b.AddChain(kFamily, kTable, kBase, NftHook{"filter", "prerouting", -300});
  b.AddChain(kFamily, kTable, iface_chain);
  b.AddChain(kFamily, kTable, mac_chain);
  b.FlushChain(kFamily, kTable, iface_chain);
  b.FlushChain(kFamily, kTable, mac_chain);
  RETURN_IF_ERROR(DeleteBaseRules(nf, b, ref_id));
  b.AddRule(kFamily, kTable, kBase, NftRuleSpec().InInterface(host_iface).Jump(iface_chain).Comment(comment));
  b.AddRule(kFamily, kTable, iface_chain, NftRuleSpec().Jump(mac_chain).Comment(comment));
  b.AddRule(kFamily, kTable, mac_chain, NftRuleSpec().EtherSource(*hw).Return().Comment(comment));
  b.AddRule(kFamily, kTable, mac_chain, NftRuleSpec().Drop().Comment(comment));
  return Annotate(b.Commit(nf), "setting up spoof-check");
}

absl::Status TeardownSpoofCheck(absl::string_view ref_id) {
  ASSIGN_OR_RETURN(net::NetlinkSocket nf, nft::OpenSocket(), "tearing down spoof-check");
  return TeardownSpoofCheck(nf, ref_id);
}

absl::Status TeardownSpoofCheck(net::NetlinkSocket& nf, absl::string_view ref_id) {
  if (absl::Status st = ValidateIdentifier("spoof-check id", ref_id); !st.ok()) return st;
  absl::StatusOr<std::vector<std::string>> chains = nft::ListChains(nf, kFamily, kTable);
  if (!chains.ok()) return chains.status();
  NftBatch b;
  RETURN_IF_ERROR(DeleteBaseRules(nf, b, ref_id));
  std::string iface_chain = IfaceChain(ref_id);
  // The iface chain jumps to the mac chain: delete it first.
  for (const std::string& name : {iface_chain, iface_chain + "-mac"}) {
    for (const std::string& c : *chains) {
      if (c != name) continue;
      b.FlushChain(kFamily, kTable, name);
      b.DeleteChain(kFamily, kTable, name);
    }
  }
  return Annotate(b.Commit(nf), "tearing down spoof-check");  // nothing of ours: a no-op
}

}  // namespace cni::fw

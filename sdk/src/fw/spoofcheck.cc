#include "cni/fw/spoofcheck.h"

#include "absl/strings/str_cat.h"
#include "cni/error.h"
#include "cni/fw/nft.h"
#include "cni/fw/validate.h"

namespace cni::fw {
namespace {

constexpr const char* kTable = "bridge nat";
constexpr const char* kBase = "PREROUTING";

std::string IfaceChain(absl::string_view ref_id) { return absl::StrCat("cni-br-iface-", ref_id); }
std::string Comment(absl::string_view ref_id) { return absl::StrCat("macspoofchk-", ref_id); }

// Deletes of the port's rules in the base chain (listed first, so that a
// repeated setup replaces them instead of adding a second jump).
absl::StatusOr<std::string> DeleteBaseRules(absl::string_view ref_id) {
  absl::StatusOr<std::vector<NftRule>> rules = Nft::ListRules("bridge", "nat");
  if (!rules.ok()) return rules.status();
  std::string b;
  for (const NftRule& r : *rules) {
    if (r.chain == kBase && r.comment == Comment(ref_id)) b += NftDeleteRule(r);
  }
  return b;
}

}  // namespace

absl::Status SetupSpoofCheck(absl::string_view host_iface, absl::string_view mac, absl::string_view ref_id) {
  if (absl::Status st = ValidateIdentifier("spoof-check interface", host_iface); !st.ok()) return st;
  if (absl::Status st = ValidateIdentifier("spoof-check id", ref_id); !st.ok()) return st;
  if (absl::Status st = ValidateIdentifier("spoof-check MAC", mac); !st.ok()) return st;
  absl::StatusOr<Nft> nft = Nft::Open();
  if (!nft.ok()) return nft.status();
  absl::StatusOr<std::string> stale = DeleteBaseRules(ref_id);
  if (!stale.ok()) return stale.status();
  std::string iface_chain = IfaceChain(ref_id);
  std::string mac_chain = iface_chain + "-mac";
  std::string comment = NftQuote(Comment(ref_id));
  std::string b;
  // Declarations, flushes and rules in one transaction (upstream uses two).
  absl::StrAppend(&b, "add table ", kTable, "\n");
  absl::StrAppend(&b, "add chain ", kTable, " ", kBase, " { type filter hook prerouting priority -300 ; policy accept ; }\n");
  absl::StrAppend(&b, "add chain ", kTable, " ", iface_chain, "\n");
  absl::StrAppend(&b, "add chain ", kTable, " ", mac_chain, "\n");
  absl::StrAppend(&b, "flush chain ", kTable, " ", iface_chain, "\n");
  absl::StrAppend(&b, "flush chain ", kTable, " ", mac_chain, "\n");
  b += *stale;
  absl::StrAppend(&b, "add rule ", kTable, " ", kBase, " iifname ", NftQuote(host_iface), " jump ", iface_chain,
                  " comment ", comment, "\n");
  absl::StrAppend(&b, "add rule ", kTable, " ", iface_chain, " jump ", mac_chain, " comment ", comment, "\n");
  absl::StrAppend(&b, "add rule ", kTable, " ", mac_chain, " ether saddr ", mac, " return comment ", comment, "\n");
  absl::StrAppend(&b, "add rule ", kTable, " ", mac_chain, " drop comment ", comment, "\n");
  return Annotate(nft->Run(b), "setting up spoof-check");
}

absl::Status TeardownSpoofCheck(absl::string_view ref_id) {
  if (absl::Status st = ValidateIdentifier("spoof-check id", ref_id); !st.ok()) return st;
  absl::StatusOr<std::vector<std::string>> chains = Nft::ListChains("bridge", "nat");
  if (!chains.ok()) return chains.status();
  absl::StatusOr<std::string> b = DeleteBaseRules(ref_id);
  if (!b.ok()) return b.status();
  std::string iface_chain = IfaceChain(ref_id);
  // The iface chain jumps to the mac chain: delete it first.
  for (const std::string& name : {iface_chain, iface_chain + "-mac"}) {
    for (const std::string& c : *chains) {
      if (c == name) absl::StrAppend(&*b, "flush chain ", kTable, " ", name, "\ndelete chain ", kTable, " ", name, "\n");
    }
  }
  // Nothing of ours: done without loading libnftables (a node may not have it).
  if (b->empty()) return absl::OkStatus();
  absl::StatusOr<Nft> nft = Nft::Open();
  if (!nft.ok()) return nft.status();
  return Annotate(nft->Run(*b), "tearing down spoof-check");
}

}  // namespace cni::fw

#include "iptables_rules.h"

#include "absl/strings/str_cat.h"
#include "cni/fw/iptables_nft_encoding.h"

namespace cni::firewall::ipt {

std::vector<std::vector<std::string>> AddressRules(const net::IpPrefix& host) {
  const std::string p = host.ToString();
  return {{"-d", p, "-m", "conntrack", "--ctstate", "RELATED,ESTABLISHED", "-j", "ACCEPT"}, {"-s", p, "-j", "ACCEPT"}};
}

std::vector<fw::NftRuleSpec> AddressRulesNft(const net::IpPrefix& host) {
  return {fw::iptables_nft::AcceptEstablishedTo(host), fw::iptables_nft::AcceptFrom(host)};
}

bool HasJump(const fw::IptTable& t, const std::string& chain, const std::string& target) {
  for (const std::string& line : t.RulesOf(chain)) {
    if (fw::IptJumpTarget(line) == target) return true;
  }
  return false;
}

std::string SharedLines(const fw::IptTable& t, const std::string& admin) {
  std::string b;
  // Created with -N, never declared with ":" (which would flush a chain a
  // concurrent ADD just filled): a -N that collides fails the commit, and
  // the retry looks again.
  for (const std::string& chain : {std::string(kPrivChain), admin}) {
    if (!t.HasChain(chain)) absl::StrAppend(&b, "-N ", chain, "\n");
  }
  if (!HasJump(t, kForwardChain, kPrivChain)) {
    b += fw::IptLine("-I", absl::StrCat(kForwardChain, " 1"), {"-m", "comment", "--comment", kRulesComment, "-j", kPrivChain});
  }
  if (!HasJump(t, kPrivChain, admin)) {
    b += fw::IptLine("-I", absl::StrCat(kPrivChain, " 1"), {"-m", "comment", "--comment", kAdminComment, "-j", admin});
  }
  return b;
}

}  // namespace cni::firewall::ipt

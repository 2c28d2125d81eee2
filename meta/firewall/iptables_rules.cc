#include "iptables_rules.h"

#include "absl/strings/str_cat.h"

namespace cni::firewall::ipt {

std::vector<fw::IptRule> AddressRules(const net::IpPrefix& host) {
  return {fw::IptRule(kPrivChain).Dest(host).CtRelatedEstablished().Accept(),
          fw::IptRule(kPrivChain).Source(host).Accept()};
}

std::string SharedLines(const fw::IptTable& t, const std::string& admin) {
  std::string b;
  // Created with -N, never declared with ":" (which would flush a chain a
  // concurrent ADD just filled): a -N that collides fails the commit, and
  // the retry looks again.
  for (const std::string& chain : {std::string(kPrivChain), admin}) {
    if (!t.HasChain(chain)) absl::StrAppend(&b, "-N ", chain, "\n");
  }
  if (!t.HasJump(kForwardChain, kPrivChain)) {
    b += fw::IptRule(kForwardChain).Comment(kRulesComment).Jump(kPrivChain).InsertFirstLine();
  }
  if (!t.HasJump(kPrivChain, admin)) {
    b += fw::IptRule(kPrivChain).Comment(kAdminComment).Jump(admin).InsertFirstLine();
  }
  return b;
}

}  // namespace cni::firewall::ipt

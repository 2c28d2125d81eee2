#include "cni/fw/iptables_nft_encoding.h"

// <netinet/in.h> before the <linux/...> headers: the other order redefines
// struct in_addr (linux/libc-compat.h only guards this one).
#include <netinet/in.h>
#include <linux/netfilter/nf_nat.h>
#include <linux/netfilter/x_tables.h>
#include <linux/netfilter/xt_comment.h>
#include <linux/netfilter/xt_conntrack.h>
#include <linux/netfilter/xt_multiport.h>

#include <algorithm>
#include <cstring>
#include <string>

namespace cni::fw::iptables_nft {
namespace {

// An extension's options as nft_compat takes them: the kernel struct,
// padded to XT_ALIGN (the kernel checks the size against the extension's).
template <typename KernelStruct>
std::string Info(const KernelStruct& options) {
  std::string info(reinterpret_cast<const char*>(&options), sizeof(options));
  info.resize(XT_ALIGN(sizeof(options)), '\0');
  return info;
}

// "-p P [-s S] [-d D] --dport N" and the counter iptables-nft puts in every
// rule; -p is both meta l4proto and the compat protocol the xtables
// extensions check.
NftRuleSpec Matching(const PortMatch& m) {
  NftRuleSpec rule;
  rule.L4Proto(m.protocol).XtProtocol(m.protocol);
  if (m.source.has_value() && m.source->len() > 0) rule.SourceAddress(*m.source);
  if (m.dest.has_value()) rule.DestAddress(*m.dest);
  rule.ThDestPort(m.dport).Counter();
  return rule;
}

// The DNAT target's options (revision 2) for "--to-destination to:port".
std::string DnatInfo(const net::IpAddress& to, uint16_t port) {
  nf_nat_range2 range{};
  range.flags = NF_NAT_RANGE_MAP_IPS | NF_NAT_RANGE_PROTO_SPECIFIED;
  std::memcpy(&range.min_addr, to.data(), to.byte_length());
  range.max_addr = range.min_addr;
  range.min_proto.all = htons(port);
  range.max_proto = range.min_proto;
  return Info(range);
}

// The comment match's options: the text, cut to the kernel's limit.
std::string CommentInfo(absl::string_view comment) {
  xt_comment_info text{};
  std::memcpy(text.comment, comment.data(), std::min(comment.size(), sizeof(text.comment) - 1));
  return Info(text);
}

}  // namespace

NftRuleSpec PortJump(const PortMatch& match, absl::string_view chain) { return Matching(match).Jump(chain); }

NftRuleSpec PortDnat(const PortMatch& match, const net::IpAddress& to, uint16_t port) {
  return Matching(match).XtTarget("DNAT", 2, DnatInfo(to, port));
}

NftRuleSpec MultiportJump(absl::string_view comment, L4Protocol protocol, const std::vector<uint16_t>& ports,
                          absl::string_view chain) {
  xt_multiport_v1 multiport{};
  multiport.flags = XT_MULTIPORT_DESTINATION;
  multiport.count = static_cast<uint8_t>(std::min<size_t>(ports.size(), XT_MULTI_PORTS));
  // Host byte order, as iptables stores them.
  std::copy_n(ports.begin(), multiport.count, multiport.ports);
  NftRuleSpec rule;
  rule.L4Proto(protocol)
      .XtProtocol(protocol)
      .XtMatch("comment", 0, CommentInfo(comment))
      .XtMatch("multiport", 1, Info(multiport))
      .Counter()
      .Jump(chain);
  return rule;
}

NftRuleSpec Commented(const InterfaceMatch& match, absl::string_view comment) {
  using Ifname = NftRuleSpec::Ifname;
  NftRuleSpec rule;
  if (!match.in.empty()) rule.InInterface(match.in, true, Ifname::kIptables);
  if (!match.out.empty()) rule.OutInterface(match.out, !match.out_negated, Ifname::kIptables);
  rule.XtMatch("comment", 0, CommentInfo(comment)).Counter();
  return rule;
}

NftRuleSpec AddressesCommented(const AddressMatch& match, absl::string_view comment) {
  NftRuleSpec rule;
  if (match.source.has_value()) rule.SourceAddress(*match.source);
  if (match.dest.has_value()) rule.DestAddress(*match.dest, !match.dest_negated);
  rule.XtMatch("comment", 0, CommentInfo(comment)).Counter();
  return rule;
}

NftRuleSpec& Masquerade(NftRuleSpec& rule, bool ipv6) {
  // The kernel's MASQUERADE checks the options' size per family, and for
  // IPv4 that the one range is the only one (rangesize 1).
  if (ipv6) return rule.XtTarget("MASQUERADE", 0, Info(nf_nat_range{}));
  nf_nat_ipv4_multi_range_compat ranges{};
  ranges.rangesize = 1;
  return rule.XtTarget("MASQUERADE", 0, Info(ranges));
}

NftRuleSpec AcceptEstablishedTo(const net::IpPrefix& dest) {
  // What libxt_conntrack's --ctstate fills in (revision 3, the one
  // iptables 1.8 uses): the state flag and the two states' bits.
  xt_conntrack_mtinfo3 ct{};
  ct.match_flags = XT_CONNTRACK_STATE;
  ct.state_mask = XT_CONNTRACK_STATE_BIT(IP_CT_RELATED) | XT_CONNTRACK_STATE_BIT(IP_CT_ESTABLISHED);
  NftRuleSpec rule;
  rule.DestAddress(dest).XtMatch("conntrack", 3, Info(ct)).Counter().Accept();
  return rule;
}

NftRuleSpec AcceptFrom(const net::IpPrefix& source) {
  NftRuleSpec rule;
  rule.SourceAddress(source).Counter().Accept();
  return rule;
}

}  // namespace cni::fw::iptables_nft

// iptables-nft's own encoding of iptables rules as nf_tables rules: the
// expressions, the xtables extensions (nft_compat "match" and "target" with
// the extensions' kernel structs) and the compat attribute iptables-nft sends
// for a rule. A rule built here and committed over netlink (NftBatch, no
// iptables-restore run) is one that iptables-save prints, and iptables-nft
// deletes, exactly as if iptables-restore had written it. This file pair is
// the only place that knows the encoding; portmap's and firewall's iptables
// backends and ipMasq (cni/fw/ipmasq.h) call it.
//
// Checked against iptables v1.8.9 (nf_tables), Debian 12's `iptables
// --version`, by tests/netns/portmap_test.cc, "portmap: with iptables-nft the
// rules written over netlink are exactly what iptables-restore writes": the
// same iptables-save lines and the same expressions (`nft --debug=netlink`),
// in the same order, either way. Another iptables version may encode rules
// differently: run that test against it first.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "cni/base/ip.h"
#include "cni/fw/nft_batch.h"
#include "cni/fw/protocols.h"

namespace cni::fw::iptables_nft {

// The match "-p P [-s S] [-d D] --dport N" (iptables' order of options).
struct PortMatch {
  L4Protocol protocol = L4Protocol::kTcp;  // -p
  std::optional<net::IpPrefix> source;     // -s; none matches any (so does a /0: iptables drops it)
  std::optional<net::IpPrefix> dest;       // -d; none matches any
  uint16_t dport = 0;                      // --dport
};

// "<match> -j CHAIN": meta l4proto, the addresses, th dport, a counter, the
// jump.
NftRuleSpec PortJump(const PortMatch& match, absl::string_view chain);
// "<match> -j DNAT --to-destination TO:PORT" ([TO]:PORT for IPv6): as
// PortJump, with the DNAT target (revision 2) instead of the jump.
NftRuleSpec PortDnat(const PortMatch& match, const net::IpAddress& to, uint16_t port);
// "-m comment --comment C -m multiport -p P --destination-ports X,Y -j CHAIN":
// meta l4proto, the comment and multiport matches, a counter, the jump.
// `comment` is cut to 255 bytes and `ports` to 15 (the matches' limits).
NftRuleSpec MultiportJump(absl::string_view comment, L4Protocol protocol, const std::vector<uint16_t>& ports,
                          absl::string_view chain);

// The interface part of a rule: "[-i IN] [[!] -o OUT]".
struct InterfaceMatch {
  std::string in;            // -i; "" matches any
  std::string out;           // -o; "" matches any
  bool out_negated = false;  // "! -o OUT"
};
// "[-i IN] [[!] -o OUT] -m comment --comment C": the interface matches (each
// only when named, compared as iptables-nft does), the comment match and the
// counter; the caller appends the target: .Jump(chain), .Drop(), .Return()
// or .Accept().
NftRuleSpec Commented(const InterfaceMatch& match, absl::string_view comment);
// The address part of a rule: "[-s SOURCE] [[!] -d DEST]".
struct AddressMatch {
  std::optional<net::IpPrefix> source;  // -s; none matches any
  std::optional<net::IpPrefix> dest;    // -d; none matches any
  bool dest_negated = false;            // "! -d DEST"
};
// "[-s S] [[!] -d D] -m comment --comment C" and the counter (ipMasq's
// rules); the caller appends the target: .Jump(chain), .Accept(), or
// Masquerade.
NftRuleSpec AddressesCommented(const AddressMatch& match, absl::string_view comment);
// Appends "-j MASQUERADE" (the xtables target, revision 0, with the options
// libxt_MASQUERADE sends for an IPv4 or IPv6 rule).
NftRuleSpec& Masquerade(NftRuleSpec& rule, bool ipv6);
// "-d DEST -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT".
NftRuleSpec AcceptEstablishedTo(const net::IpPrefix& dest);
// "-s SOURCE -j ACCEPT".
NftRuleSpec AcceptFrom(const net::IpPrefix& source);

}  // namespace cni::fw::iptables_nft

// One iptables rule, described once, and rendered two ways:
//   - as iptables-restore input, written exactly as iptables-save prints the
//     rule (so the rendered line also finds the rule in a snapshot), for
//     iptables-legacy and every snapshot-and-restore path;
//   - as iptables-nft's own nf_tables encoding of it (an NftRuleSpec with the
//     expressions, the xtables extensions through nft_compat and the compat
//     attribute iptables-nft sends), committed over netlink with no program
//     run; iptables-save then prints it as the same line, and iptables-nft
//     deletes it, exactly as if iptables-restore had written it.
// ipMasq (cni/fw/ipmasq.h) and the iptables backends of portmap and firewall
// describe their rules here only: this file pair is the only place that
// spells a rule in either form (chain declarations and reading
// iptables-save's output are cni/fw/iptables.h's).
//
// Checked against iptables v1.8.9 (nf_tables), Debian 12's `iptables
// --version`, by tests/netns/ipt_rule_test.cc: every rule shape the plugins
// make, written once through iptables-restore and once over netlink, lists
// the same in iptables-save (and as the rendered line), with the same
// expressions in `nft --debug=netlink`. Another iptables version may encode
// rules differently: run that test against it first.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "cni/base/ip.h"
#include "cni/fw/nft_batch.h"
#include "cni/fw/protocols.h"

namespace cni::fw {

// A rule of one chain: the header matches (-s, -d, -i, -o, -p), then the
// extension matches in the order added, then one target. Each method sets or
// appends one part and returns the rule, so that a rule reads as its line:
//   IptRule("CNI-FORWARD").Dest(host).CtRelatedEstablished().Accept()
class IptRule {
 public:
  explicit IptRule(absl::string_view chain) : chain_(chain) {}

  // --- The packet's header (iptables-save prints these first, this order).
  // "[!] -s PREFIX"; host bits are cleared (iptables does), and a /0 that is
  // not negated matches anything and is left out (iptables drops it too).
  IptRule& Source(const net::IpPrefix& prefix, bool negated = false);
  // "[!] -d PREFIX", likewise.
  IptRule& Dest(const net::IpPrefix& prefix, bool negated = false);
  // "[!] -i NAME".
  IptRule& InInterface(absl::string_view name, bool negated = false);
  // "[!] -o NAME".
  IptRule& OutInterface(absl::string_view name, bool negated = false);
  // "-p tcp|udp|sctp".
  IptRule& Protocol(L4Protocol protocol);

  // --- Extension matches, in the order they are added.
  // "-m tcp --dport N" (the protocol's own match: needs Protocol first).
  IptRule& DestPort(uint16_t port);
  // "-m multiport --dports A,B,...": at most 15 ports (the match's limit;
  // more are cut); needs Protocol first.
  IptRule& DestPorts(const std::vector<uint16_t>& ports);
  // "-m comment --comment TEXT", cut to 255 bytes (the kernel's limit).
  IptRule& Comment(absl::string_view text);
  // "-m conntrack --ctstate RELATED,ESTABLISHED".
  IptRule& CtRelatedEstablished();
  // "-m addrtype --dst-type LOCAL": addressed to this host.
  IptRule& DestTypeLocal();
  // "-m mark --mark VALUE/MASK". No netlink encoding here (iptables-nft
  // writes it as native meta expressions): ToNft is nullopt.
  IptRule& Mark(uint32_t value, uint32_t mask);
  // iptables arguments as a user wrote them (portmap's conditionsV4/V6),
  // placed after the matches. Only iptables parses them: a rule with any has
  // no netlink encoding here (ToNft is nullopt) and goes through
  // iptables-restore.
  IptRule& FreeArgs(const std::vector<std::string>& args);

  // --- The target (the last one set counts).
  IptRule& Jump(absl::string_view chain);                  // "-j CHAIN"
  IptRule& Accept();                                       // "-j ACCEPT"
  IptRule& Drop();                                         // "-j DROP"
  IptRule& Return();                                       // "-j RETURN"
  IptRule& Masquerade();                                   // "-j MASQUERADE"
  IptRule& Dnat(const net::IpAddress& to, uint16_t port);  // "-j DNAT --to-destination ADDR:PORT" ([ADDR] for IPv6)
  IptRule& SetXMark(uint32_t value, uint32_t mask);        // "-j MARK --set-xmark VALUE/MASK"

  // The chain the rule belongs to.
  const std::string& chain() const { return chain_; }
  // The arguments after "-A <chain>", unquoted, in iptables-save's order and
  // spelling ("-s 10.0.0.2/32 -p tcp -m tcp --dport 80 -j X").
  std::vector<std::string> Args() const;
  // The rule as iptables-save prints it, without the newline:
  // "-A <chain> <args>", the comment quoted as iptables-save quotes it.
  std::string Saved() const;
  // The restore line appending the rule: Saved() and a newline.
  std::string AppendLine() const;
  // The restore line putting the rule at the chain's top: "-I <chain> 1 ...".
  std::string InsertFirstLine() const;
  // iptables-nft's encoding of the rule in an `ipv6` (ip6tables) or IPv4
  // table: nullopt when the rule has free arguments, which only iptables
  // can parse, or a mark match; such a rule goes through iptables-restore.
  std::optional<NftRuleSpec> ToNft(bool ipv6) const;

 private:
  // One extension match.
  struct Match {
    enum class Kind { kDestPort, kDestPorts, kComment, kCtState, kDestTypeLocal, kMark, kFreeArgs };
    Kind kind;
    std::vector<uint16_t> ports;    // kDestPort (one), kDestPorts
    std::string text;               // kComment
    uint32_t value = 0, mask = 0;   // kMark
    std::vector<std::string> args;  // kFreeArgs
  };
  // The target.
  struct Target {
    enum class Kind { kNone, kJump, kAccept, kDrop, kReturn, kMasquerade, kDnat, kSetXMark };
    Kind kind = Kind::kNone;
    std::string chain;             // kJump
    net::IpAddress to;             // kDnat
    uint16_t port = 0;             // kDnat
    uint32_t value = 0, mask = 0;  // kSetXMark
  };
  // An address match.
  struct Address {
    net::IpPrefix prefix;
    bool negated = false;
  };
  // An interface match.
  struct Interface {
    std::string name;
    bool negated = false;
  };
  // The rendered arguments, each with how iptables-save quotes it.
  struct Word {
    std::string text;
    enum class Quote { kNone, kSaved, kFree } quote = Quote::kNone;
  };
  static std::optional<Address> AddressMatch(const net::IpPrefix& prefix, bool negated);
  IptRule& Add(Match match);
  IptRule& Set(Target target);
  std::vector<Word> Words() const;
  std::string Line(absl::string_view op_and_chain) const;

  std::string chain_;
  std::optional<Address> source_, dest_;
  std::optional<Interface> in_, out_;
  std::optional<L4Protocol> protocol_;
  std::vector<Match> matches_;
  Target target_;
};

// Every rule of `rules` in iptables-nft's encoding, in order; nullopt when
// any has none (then all of them go through iptables-restore).
std::optional<std::vector<NftRuleSpec>> ToNft(const std::vector<IptRule>& rules, bool ipv6);

}  // namespace cni::fw

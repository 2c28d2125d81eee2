#include "cni/fw/ipt_rule.h"

// <netinet/in.h> before the <linux/...> headers: the other order redefines
// struct in_addr (linux/libc-compat.h only guards this one).
#include <netinet/in.h>
#include <linux/netfilter/nf_nat.h>
#include <linux/netfilter/x_tables.h>
#include <linux/netfilter/xt_addrtype.h>
#include <linux/netfilter/xt_comment.h>
#include <linux/netfilter/xt_conntrack.h>
#include <linux/netfilter/xt_mark.h>  // the MARK target
#include <linux/netfilter/xt_multiport.h>
// xt_sctp.h's inline helpers are C (_Bool); only its struct is used here.
#define _Bool bool
#include <linux/netfilter/xt_sctp.h>
#undef _Bool

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace cni::fw {
namespace {

constexpr size_t kMaxComment = sizeof(xt_comment_info::comment) - 1;  // 255

// "0x2000": how iptables-save prints a mark or mask.
std::string Hex(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%x", v);
  return buf;
}

// `s` bare when it is not empty and `bare` holds for each character, else
// in double quotes with the characters in `escape` backslash-escaped.
std::string Quote(absl::string_view s, bool (*bare)(char), absl::string_view escape) {
  if (!s.empty() && std::all_of(s.begin(), s.end(), bare)) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (absl::StrContains(escape, c)) out += '\\';
    out += c;
  }
  return out + "\"";
}

// A string as iptables-save prints it (xtables_save_string): bare when it
// is only letters, digits, '-' and '_'. iptables-restore reads it back as
// the same string.
std::string SaveQuoted(absl::string_view s) {
  return Quote(s, [](char c) { return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'; },
               "\"\\'");
}

// A user's argument for iptables-restore's parser, as the user wrote it:
// quoted only when it holds a blank, a quote or a backslash.
std::string FreeQuoted(absl::string_view a) {
  return Quote(a, [](char c) { return !absl::StrContains(" \t\"'\\", c); }, "\"\\");
}

// An extension's options as nft_compat takes them: the kernel struct,
// padded to XT_ALIGN (the kernel checks the size against the extension's).
template <typename KernelStruct>
std::string Info(const KernelStruct& options) {
  std::string info(reinterpret_cast<const char*>(&options), sizeof(options));
  info.resize(XT_ALIGN(sizeof(options)), '\0');
  return info;
}

}  // namespace

// A /0 that is not negated matches any address: iptables leaves it out.
std::optional<IptRule::Address> IptRule::AddressMatch(const net::IpPrefix& prefix, bool negated) {
  if (prefix.len() == 0 && !negated) return std::nullopt;
  return Address{prefix.Network(), negated};
}

IptRule& IptRule::Source(const net::IpPrefix& prefix, bool negated) {
  source_ = AddressMatch(prefix, negated);
  return *this;
}
IptRule& IptRule::Dest(const net::IpPrefix& prefix, bool negated) {
  dest_ = AddressMatch(prefix, negated);
  return *this;
}
IptRule& IptRule::InInterface(absl::string_view name, bool negated) {
  in_ = Interface{std::string(name), negated};
  return *this;
}
IptRule& IptRule::OutInterface(absl::string_view name, bool negated) {
  out_ = Interface{std::string(name), negated};
  return *this;
}
IptRule& IptRule::Protocol(L4Protocol protocol) {
  protocol_ = protocol;
  return *this;
}

IptRule& IptRule::Add(Match match) {
  matches_.push_back(std::move(match));
  return *this;
}
IptRule& IptRule::DestPort(uint16_t port) { return Add({.kind = Match::Kind::kDestPort, .ports = {port}}); }
IptRule& IptRule::DestPorts(const std::vector<uint16_t>& ports) {
  const size_t n = std::min<size_t>(ports.size(), XT_MULTI_PORTS);
  return Add({.kind = Match::Kind::kDestPorts, .ports = {ports.begin(), ports.begin() + n}});
}
IptRule& IptRule::Comment(absl::string_view text) {
  return Add({.kind = Match::Kind::kComment, .text = std::string(text.substr(0, kMaxComment))});
}
IptRule& IptRule::CtRelatedEstablished() { return Add({.kind = Match::Kind::kCtState}); }
IptRule& IptRule::DestTypeLocal() { return Add({.kind = Match::Kind::kDestTypeLocal}); }
IptRule& IptRule::Mark(uint32_t value, uint32_t mask) {
  return Add({.kind = Match::Kind::kMark, .value = value, .mask = mask});
}
IptRule& IptRule::FreeArgs(const std::vector<std::string>& args) {
  return args.empty() ? *this : Add({.kind = Match::Kind::kFreeArgs, .args = args});
}

IptRule& IptRule::Set(Target target) {
  target_ = std::move(target);
  return *this;
}
IptRule& IptRule::Jump(absl::string_view chain) {
  return Set({.kind = Target::Kind::kJump, .chain = std::string(chain)});
}
IptRule& IptRule::Accept() { return Set({.kind = Target::Kind::kAccept}); }
IptRule& IptRule::Drop() { return Set({.kind = Target::Kind::kDrop}); }
IptRule& IptRule::Return() { return Set({.kind = Target::Kind::kReturn}); }
IptRule& IptRule::Masquerade() { return Set({.kind = Target::Kind::kMasquerade}); }
IptRule& IptRule::Dnat(const net::IpAddress& to, uint16_t port) {
  return Set({.kind = Target::Kind::kDnat, .to = to, .port = port});
}
IptRule& IptRule::SetXMark(uint32_t value, uint32_t mask) {
  return Set({.kind = Target::Kind::kSetXMark, .value = value, .mask = mask});
}

// --- iptables-save's text ----------------------------------------------------

std::vector<IptRule::Word> IptRule::Words() const {
  std::vector<Word> w;
  auto add = [&w](std::initializer_list<std::string> words) {
    for (const std::string& s : words) w.push_back({s});
  };
  // save_ipv4_addr/save_ipv6_addr, then save_rule_details: -s, -d, -i, -o, -p.
  auto address = [&](const std::optional<Address>& a, const char* flag) {
    if (!a.has_value()) return;
    if (a->negated) add({"!"});
    add({flag, a->prefix.ToString()});
  };
  auto interface = [&](const std::optional<Interface>& i, const char* flag) {
    if (!i.has_value()) return;
    if (i->negated) add({"!"});
    add({flag, i->name});
  };
  address(source_, "-s");
  address(dest_, "-d");
  interface(in_, "-i");
  interface(out_, "-o");
  const std::string proto = protocol_.has_value() ? L4ProtocolName(*protocol_) : "";
  if (protocol_.has_value()) add({"-p", proto});
  for (const Match& m : matches_) {
    switch (m.kind) {
      case Match::Kind::kDestPort: add({"-m", proto, "--dport", absl::StrCat(m.ports.front())}); break;
      case Match::Kind::kDestPorts: add({"-m", "multiport", "--dports", absl::StrJoin(m.ports, ",")}); break;
      case Match::Kind::kComment:
        add({"-m", "comment", "--comment"});
        w.push_back({m.text, Word::Quote::kSaved});
        break;
      case Match::Kind::kCtState: add({"-m", "conntrack", "--ctstate", "RELATED,ESTABLISHED"}); break;
      case Match::Kind::kDestTypeLocal: add({"-m", "addrtype", "--dst-type", "LOCAL"}); break;
      case Match::Kind::kMark: add({"-m", "mark", "--mark", absl::StrCat(Hex(m.value), "/", Hex(m.mask))}); break;
      case Match::Kind::kFreeArgs:
        for (const std::string& a : m.args) w.push_back({a, Word::Quote::kFree});
        break;
    }
  }
  switch (target_.kind) {
    case Target::Kind::kNone: break;
    case Target::Kind::kJump: add({"-j", target_.chain}); break;
    case Target::Kind::kAccept: add({"-j", "ACCEPT"}); break;
    case Target::Kind::kDrop: add({"-j", "DROP"}); break;
    case Target::Kind::kReturn: add({"-j", "RETURN"}); break;
    case Target::Kind::kMasquerade: add({"-j", "MASQUERADE"}); break;
    case Target::Kind::kDnat: {
      const std::string to = target_.to.is_v4() ? target_.to.ToString() : absl::StrCat("[", target_.to.ToString(), "]");
      add({"-j", "DNAT", "--to-destination", absl::StrCat(to, ":", target_.port)});
      break;
    }
    case Target::Kind::kSetXMark:
      add({"-j", "MARK", "--set-xmark", absl::StrCat(Hex(target_.value), "/", Hex(target_.mask))});
      break;
  }
  return w;
}

std::vector<std::string> IptRule::Args() const {
  std::vector<std::string> args;
  for (const Word& w : Words()) args.push_back(w.text);
  return args;
}

std::string IptRule::Line(absl::string_view op_and_chain) const {
  std::string line(op_and_chain);
  for (const Word& w : Words()) {
    switch (w.quote) {
      case Word::Quote::kNone: absl::StrAppend(&line, " ", w.text); break;
      case Word::Quote::kSaved: absl::StrAppend(&line, " ", SaveQuoted(w.text)); break;
      case Word::Quote::kFree: absl::StrAppend(&line, " ", FreeQuoted(w.text)); break;
    }
  }
  return line;
}

std::string IptRule::Saved() const { return Line(absl::StrCat("-A ", chain_)); }

std::string IptRule::AppendLine() const { return Saved() + "\n"; }

std::string IptRule::InsertFirstLine() const { return Line(absl::StrCat("-I ", chain_, " 1")) + "\n"; }

// --- iptables-nft's encoding ---------------------------------------------------
//
// As iptables-nft builds a rule (nft_ipv4_add/nft_ipv6_add): -i, -o, -p
// (meta l4proto, and the compat protocol the xtables extensions check),
// -s, -d; then each match (a tcp or udp --dport as a native "th dport",
// the others as nft_compat matches with their kernel structs); a counter; the target (a
// verdict for a chain or ACCEPT/DROP/RETURN, else an nft_compat target).

std::optional<NftRuleSpec> IptRule::ToNft(bool ipv6) const {
  using Ifname = NftRuleSpec::Ifname;
  NftRuleSpec rule;
  if (in_.has_value()) rule.InInterface(in_->name, !in_->negated, Ifname::kIptables);
  if (out_.has_value()) rule.OutInterface(out_->name, !out_->negated, Ifname::kIptables);
  if (protocol_.has_value()) rule.L4Proto(*protocol_).XtProtocol(*protocol_);
  if (source_.has_value()) rule.SourceAddress(source_->prefix, !source_->negated);
  if (dest_.has_value()) rule.DestAddress(dest_->prefix, !dest_->negated);
  for (const Match& m : matches_) {
    switch (m.kind) {
      case Match::Kind::kDestPort:
        // tcp and udp become a native "th dport"; sctp stays libxt_sctp's
        // match (iptables-save cannot read sctp's port as a payload).
        if (protocol_ == L4Protocol::kSctp) {
          xt_sctp_info sctp{};
          sctp.dpts[0] = sctp.dpts[1] = m.ports.front();  // host byte order
          sctp.spts[1] = 0xffff;                            // any source port, as libxt_sctp leaves it
          sctp.flags = XT_SCTP_DEST_PORTS;
          rule.XtMatch("sctp", 0, Info(sctp));
        } else {
          rule.ThDestPort(m.ports.front());
        }
        break;
      case Match::Kind::kDestPorts: {
        xt_multiport_v1 multiport{};
        multiport.flags = XT_MULTIPORT_DESTINATION;
        multiport.count = static_cast<uint8_t>(m.ports.size());
        std::copy(m.ports.begin(), m.ports.end(), multiport.ports);  // host byte order, as iptables stores them
        rule.XtMatch("multiport", 1, Info(multiport));
        break;
      }
      case Match::Kind::kComment: {
        xt_comment_info text{};
        std::memcpy(text.comment, m.text.data(), m.text.size());
        rule.XtMatch("comment", 0, Info(text));
        break;
      }
      case Match::Kind::kCtState: {
        // What libxt_conntrack's --ctstate fills in (revision 3, the one
        // iptables 1.8 uses): the state flag and the two states' bits.
        xt_conntrack_mtinfo3 ct{};
        ct.match_flags = XT_CONNTRACK_STATE;
        ct.state_mask = XT_CONNTRACK_STATE_BIT(IP_CT_RELATED) | XT_CONNTRACK_STATE_BIT(IP_CT_ESTABLISHED);
        rule.XtMatch("conntrack", 3, Info(ct));
        break;
      }
      case Match::Kind::kDestTypeLocal: {
        xt_addrtype_info_v1 type{};
        type.dest = XT_ADDRTYPE_LOCAL;
        rule.XtMatch("addrtype", 1, Info(type));
        break;
      }
      // iptables-nft writes -m mark as native meta mark expressions, for
      // which NftRuleSpec has no piece; free arguments only iptables parses.
      case Match::Kind::kMark:
      case Match::Kind::kFreeArgs: return std::nullopt;
    }
  }
  rule.Counter();
  switch (target_.kind) {
    case Target::Kind::kNone: break;
    case Target::Kind::kJump: rule.Jump(target_.chain); break;
    case Target::Kind::kAccept: rule.Accept(); break;
    case Target::Kind::kDrop: rule.Drop(); break;
    case Target::Kind::kReturn: rule.Return(); break;
    case Target::Kind::kMasquerade:
      // The kernel's MASQUERADE checks the options' size per family, and
      // for IPv4 that the one range is the only one (rangesize 1).
      if (ipv6) {
        rule.XtTarget("MASQUERADE", 0, Info(nf_nat_range{}));
      } else {
        nf_nat_ipv4_multi_range_compat ranges{};
        ranges.rangesize = 1;
        rule.XtTarget("MASQUERADE", 0, Info(ranges));
      }
      break;
    case Target::Kind::kDnat: {
      // Revision 2, "--to-destination to:port".
      nf_nat_range2 range{};
      range.flags = NF_NAT_RANGE_MAP_IPS | NF_NAT_RANGE_PROTO_SPECIFIED;
      std::memcpy(&range.min_addr, target_.to.data(), target_.to.byte_length());
      range.max_addr = range.min_addr;
      range.min_proto.all = htons(target_.port);
      range.max_proto = range.min_proto;
      rule.XtTarget("DNAT", 2, Info(range));
      break;
    }
    case Target::Kind::kSetXMark: {
      xt_mark_tginfo2 mark{};
      mark.mark = target_.value;
      mark.mask = target_.mask;
      rule.XtTarget("MARK", 2, Info(mark));
      break;
    }
  }
  return rule;
}

std::optional<std::vector<NftRuleSpec>> ToNft(const std::vector<IptRule>& rules, bool ipv6) {
  std::vector<NftRuleSpec> out;
  out.reserve(rules.size());
  for (const IptRule& r : rules) {
    std::optional<NftRuleSpec> spec = r.ToNft(ipv6);
    if (!spec.has_value()) return std::nullopt;
    out.push_back(*std::move(spec));
  }
  return out;
}

}  // namespace cni::fw

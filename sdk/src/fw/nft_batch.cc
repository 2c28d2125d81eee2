// NftRuleSpec / NftBatch: building commands and rendering them as nft text.
// The netlink encoding is in nft_encode.cc, the transaction in nft_commit.cc.
#include "cni/base/quoted.h"
#include "cni/fw/nft_batch.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "cni/base/error.h"
#include "cni/base/exec.h"
#include "cni/base/status_macros.h"
#include "nft_commit.h"

namespace cni::fw {
namespace {

using Kind = NftPiece::Kind;


// A host prefix reads as the bare address, as nft prints it.
std::string PrefixText(const net::IpPrefix& p) {
  return p.len() == p.addr().bit_length() ? p.addr().ToString() : p.Network().ToString();
}

std::string AddressText(const NftPiece& p, const char* field) {
  return absl::StrCat(p.prefix.is_v4() ? "ip " : "ip6 ", field, p.equal ? " " : " != ", PrefixText(p.prefix));
}

std::string PieceText(const NftPiece& p) {
  switch (p.kind) {
    case Kind::kSourceAddress: return AddressText(p, "saddr");
    case Kind::kDestAddress: return AddressText(p, "daddr");
    case Kind::kDestPort: return absl::StrCat(L4ProtocolName(p.protocol), " dport ", p.port);
    case Kind::kL4Proto: return absl::StrCat("meta l4proto ", L4ProtocolName(p.protocol));
    case Kind::kThDestPort: return absl::StrCat("th dport ", p.port);
    case Kind::kXtMatch: return absl::StrCat("xt match ", Quoted(p.text));
    case Kind::kXtTarget: return absl::StrCat("xt target ", Quoted(p.text));
    case Kind::kCounter: return "counter";
    case Kind::kDestIsLocal: return "fib daddr type local";
    case Kind::kInInterface: return absl::StrCat("iifname ", p.equal ? "" : "!= ", Quoted(p.text));
    case Kind::kOutInterface: return absl::StrCat("oifname ", p.equal ? "" : "!= ", Quoted(p.text));
    case Kind::kCtEstablished: return "ct state related,established";
    case Kind::kEtherSource: return absl::StrCat("ether saddr ", p.mac.ToString());
    case Kind::kText: return p.text;
    case Kind::kJump: return absl::StrCat("jump ", p.text);
    case Kind::kGoto: return absl::StrCat("goto ", p.text);
    case Kind::kReturn: return "return";
    case Kind::kDrop: return "drop";
    case Kind::kAccept: return "accept";
    case Kind::kMasquerade: return "masquerade";
    case Kind::kDnat:
      return p.address.is_v4() ? absl::StrCat("dnat to ", p.address.ToString(), ":", p.port)
                               : absl::StrCat("dnat to [", p.address.ToString(), "]:", p.port);
    case Kind::kComment: return absl::StrCat("comment ", Quoted(p.text));
  }
  return "";
}

}  // namespace

NftRuleSpec& NftRuleSpec::Add(NftPiece piece) {
  pieces_.push_back(std::move(piece));
  return *this;
}

NftRuleSpec& NftRuleSpec::SourceAddress(const net::IpPrefix& prefix, bool equal) {
  return Add({.kind = Kind::kSourceAddress, .prefix = prefix, .equal = equal});
}
NftRuleSpec& NftRuleSpec::DestAddress(const net::IpPrefix& prefix, bool equal) {
  return Add({.kind = Kind::kDestAddress, .prefix = prefix, .equal = equal});
}
NftRuleSpec& NftRuleSpec::DestPort(L4Protocol protocol, uint16_t port) {
  return Add({.kind = Kind::kDestPort, .port = port, .protocol = protocol});
}
NftRuleSpec& NftRuleSpec::L4Proto(L4Protocol protocol) { return Add({.kind = Kind::kL4Proto, .protocol = protocol}); }
NftRuleSpec& NftRuleSpec::XtMatch(absl::string_view name, uint32_t revision, std::string info) {
  return Add({.kind = Kind::kXtMatch, .text = std::string(name), .revision = revision, .info = std::move(info)});
}
NftRuleSpec& NftRuleSpec::Counter() { return Add({.kind = Kind::kCounter}); }
NftRuleSpec& NftRuleSpec::ThDestPort(uint16_t port) { return Add({.kind = Kind::kThDestPort, .port = port}); }
NftRuleSpec& NftRuleSpec::XtTarget(absl::string_view name, uint32_t revision, std::string info) {
  return Add({.kind = Kind::kXtTarget, .text = std::string(name), .revision = revision, .info = std::move(info)});
}
NftRuleSpec& NftRuleSpec::XtProtocol(L4Protocol protocol) {
  xt_protocol_ = protocol;
  return *this;
}
NftRuleSpec& NftRuleSpec::DestIsLocal() { return Add({.kind = Kind::kDestIsLocal}); }
NftRuleSpec& NftRuleSpec::InInterface(absl::string_view name, bool equal, Ifname how) {
  return Add({.kind = Kind::kInInterface, .equal = equal, .name_only = how == Ifname::kIptables,
              .text = std::string(name)});
}
NftRuleSpec& NftRuleSpec::OutInterface(absl::string_view name, bool equal, Ifname how) {
  return Add({.kind = Kind::kOutInterface, .equal = equal, .name_only = how == Ifname::kIptables,
              .text = std::string(name)});
}
NftRuleSpec& NftRuleSpec::CtRelatedEstablished() { return Add({.kind = Kind::kCtEstablished}); }
NftRuleSpec& NftRuleSpec::EtherSource(const net::MacAddress& mac) {
  return Add({.kind = Kind::kEtherSource, .mac = mac});
}
NftRuleSpec& NftRuleSpec::Text(absl::string_view nft_text) {
  return Add({.kind = Kind::kText, .text = std::string(nft_text)});
}
NftRuleSpec& NftRuleSpec::Jump(absl::string_view chain) { return Add({.kind = Kind::kJump, .text = std::string(chain)}); }
NftRuleSpec& NftRuleSpec::Goto(absl::string_view chain) { return Add({.kind = Kind::kGoto, .text = std::string(chain)}); }
NftRuleSpec& NftRuleSpec::Return() { return Add({.kind = Kind::kReturn}); }
NftRuleSpec& NftRuleSpec::Drop() { return Add({.kind = Kind::kDrop}); }
NftRuleSpec& NftRuleSpec::Accept() { return Add({.kind = Kind::kAccept}); }
NftRuleSpec& NftRuleSpec::Masquerade() { return Add({.kind = Kind::kMasquerade}); }
NftRuleSpec& NftRuleSpec::Dnat(const net::IpAddress& to, uint16_t port) {
  return Add({.kind = Kind::kDnat, .address = to, .port = port});
}
NftRuleSpec& NftRuleSpec::Comment(absl::string_view comment) {
  return Add({.kind = Kind::kComment, .text = std::string(comment)});
}

std::string NftRuleSpec::ToText() const {
  return absl::StrJoin(pieces_, " ", [](std::string* out, const NftPiece& p) { out->append(PieceText(p)); });
}

bool NftRuleSpec::HasText() const {
  for (const NftPiece& p : pieces_) {
    if (p.kind == Kind::kText) return true;
  }
  return false;
}

bool NftRuleSpec::HasXt() const {
  return std::any_of(pieces_.begin(), pieces_.end(),
                     [](const NftPiece& p) { return p.kind == Kind::kXtMatch || p.kind == Kind::kXtTarget; });
}

std::string NftCommand::ToText() const {
  std::string where = absl::StrCat(NftFamilyName(family), " ", table);
  switch (op) {
    case Op::kAddTable:
      return comment.empty() ? absl::StrCat("add table ", where)
                             : absl::StrCat("add table ", where, " { comment ", Quoted(comment), " ; }");
    case Op::kAddChain:
    case Op::kCreateChain: {
      const char* verb = op == Op::kAddChain ? "add chain " : "create chain ";
      std::string spec;
      if (hook.has_value()) {
        absl::StrAppend(&spec, "type ", hook->type, " hook ", hook->hook, " priority ", hook->priority, " ; ");
      }
      if (!comment.empty()) absl::StrAppend(&spec, "comment ", Quoted(comment), " ; ");
      return spec.empty() ? absl::StrCat(verb, where, " ", chain)
                          : absl::StrCat(verb, where, " ", chain, " { ", spec, "}");
    }
    case Op::kFlushChain: return absl::StrCat("flush chain ", where, " ", chain);
    case Op::kDeleteChain: return absl::StrCat("delete chain ", where, " ", chain);
    case Op::kAddRule: return absl::StrCat("add rule ", where, " ", chain, " ", rule.ToText());
    case Op::kInsertRule: return absl::StrCat("insert rule ", where, " ", chain, " ", rule.ToText());
    case Op::kDeleteRule: return absl::StrCat("delete rule ", where, " ", chain, " handle ", handle);
  }
  return "";
}

void NftBatch::AddTable(NftFamily family, absl::string_view table, absl::string_view comment) {
  commands_.push_back({.op = NftCommand::Op::kAddTable, .family = family, .table = std::string(table),
                       .comment = std::string(comment)});
}

void NftBatch::AddChain(NftFamily family, absl::string_view table, absl::string_view chain,
                        std::optional<NftHook> hook, absl::string_view comment) {
  commands_.push_back({.op = NftCommand::Op::kAddChain, .family = family, .table = std::string(table),
                       .chain = std::string(chain), .comment = std::string(comment), .hook = std::move(hook)});
}

void NftBatch::CreateChain(NftFamily family, absl::string_view table, absl::string_view chain,
                           std::optional<NftHook> hook) {
  commands_.push_back({.op = NftCommand::Op::kCreateChain, .family = family, .table = std::string(table),
                       .chain = std::string(chain), .hook = std::move(hook)});
}

void NftBatch::FlushChain(NftFamily family, absl::string_view table, absl::string_view chain) {
  commands_.push_back({.op = NftCommand::Op::kFlushChain, .family = family,
                       .table = std::string(table), .chain = std::string(chain)});
}

void NftBatch::DeleteChain(NftFamily family, absl::string_view table, absl::string_view chain) {
  commands_.push_back({.op = NftCommand::Op::kDeleteChain, .family = family,
                       .table = std::string(table), .chain = std::string(chain)});
}

void NftBatch::AddRule(NftFamily family, absl::string_view table, absl::string_view chain,
                       NftRuleSpec rule) {
  commands_.push_back({.op = NftCommand::Op::kAddRule, .family = family, .table = std::string(table),
                       .chain = std::string(chain), .rule = std::move(rule)});
}

void NftBatch::InsertRule(NftFamily family, absl::string_view table, absl::string_view chain,
                          NftRuleSpec rule) {
  commands_.push_back({.op = NftCommand::Op::kInsertRule, .family = family,
                       .table = std::string(table), .chain = std::string(chain), .rule = std::move(rule)});
}

void NftBatch::DeleteRule(const NftRule& rule) {
  commands_.push_back({.op = NftCommand::Op::kDeleteRule, .family = rule.family, .table = rule.table,
                       .chain = rule.chain, .handle = rule.handle});
}

std::string NftBatch::ToText() const {
  std::string out;
  for (const NftCommand& c : commands_) absl::StrAppend(&out, c.ToText(), "\n");
  return out;
}

bool NftBatch::HasText() const {
  for (const NftCommand& c : commands_) {
    if ((c.op == NftCommand::Op::kAddRule || c.op == NftCommand::Op::kInsertRule) && c.rule.HasText()) return true;
  }
  return false;
}

absl::Status nft::Apply(net::NetlinkSocket& nl, const NftBatch& batch) {
  if (!batch.HasText()) return batch.Commit(nl);
  // User-written nft text: only nft's parser can compile it. It runs in the
  // nft program (as upstream's knftables does) rather than through
  // libnftables in this process: dlopen needs the dynamic loader, and a
  // dynamically linked plugin pays ~1.4 ms more start-up on every exec,
  // also on the many calls that never see user-written text.
  std::string nft = FindSystemProgram("nft");
  if (nft.empty()) {
    return Error(ErrorCode::kInternal,
                 "nftables: user-written nft text needs the nft program (Debian package nftables), not found");
  }
  // `nft -f -` applies its whole input as one transaction.
  absl::StatusOr<CommandResult> r =
      RunCommand({nft, "-f", "-"}, {"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}, batch.ToText(),
                 CommandOptions{.capture_stderr = true, .timeout = std::chrono::seconds(60)});
  if (!r.ok()) return Annotate(r.status(), absl::StrCat("running ", nft));
  if (r->exit_code != 0) {
    return Error(ErrorCode::kInternal,
                 absl::StrCat("nftables transaction failed: ", absl::StripTrailingAsciiWhitespace(r->err)));
  }
  return absl::OkStatus();
}

absl::Status NftBatch::Commit(net::NetlinkSocket& nl, std::vector<NftRule>* added) const {
  if (added != nullptr) added->clear();
  if (commands_.empty()) return absl::OkStatus();
  return internal::CommitOverNetlink(nl, commands_, added);
}

absl::Status NftBatch::Commit(std::vector<NftRule>* added) const {
  if (added != nullptr) added->clear();
  if (commands_.empty()) return absl::OkStatus();
  ASSIGN_OR_RETURN(net::NetlinkSocket nl, nft::OpenSocket(), "nftables transaction failed");
  return Commit(nl, added);
}

}  // namespace cni::fw

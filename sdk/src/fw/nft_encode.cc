#include "nft_encode.h"

// <netinet/in.h> before the <linux/...> headers: the other order redefines
// struct in_addr (linux/libc-compat.h only guards this one).
#include <endian.h>
#include <netinet/in.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_nat.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nf_tables_compat.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netlink/attr.h>
#include <netlink/msg.h>

#include <array>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/fw/protocols.h"

namespace cni::fw::internal {
namespace {

using Kind = NftPiece::Kind;

// nft's limit on a comment (libnftnl's NFTNL_UDATA_COMMENT_MAXLEN).
constexpr size_t kCommentMax = 128;

absl::Status Invalid(const NftCommand& c, absl::string_view why) {
  return Error(ErrorCode::kInternal, absl::StrCat("nftables: ", c.ToText(), ": ", why));
}

// A libnl "put" failed: the only cause is a message over its size limit.
absl::Status TooLong(const NftCommand& c) { return Invalid(c, "message too long"); }

absl::StatusOr<uint32_t> HookNumber(absl::string_view hook) {
  // The bridge family's NF_BR_* hooks have the same numbers as NF_INET_*.
  if (hook == "prerouting") return NF_INET_PRE_ROUTING;
  if (hook == "input") return NF_INET_LOCAL_IN;
  if (hook == "forward") return NF_INET_FORWARD;
  if (hook == "output") return NF_INET_LOCAL_OUT;
  if (hook == "postrouting") return NF_INET_POST_ROUTING;
  return Error(ErrorCode::kInternal, absl::StrCat("nftables: unknown hook \"", hook, "\""));
}

// Writes one rule's expressions, tracking what nft's dependency logic would:
// the network protocol a family implies (an inet rule matching "ip saddr"
// first checks meta nfproto, once).
class ExprWriter {
 public:
  ExprWriter(nl_msg* msg, uint8_t family) : msg_(msg), family_(family) {
    if (family == NFPROTO_IPV4 || family == NFPROTO_IPV6) nfproto_ = family;
  }

  // Each returns false when the message is full.
  bool Piece(const NftPiece& p, absl::Status& invalid) {
    switch (p.kind) {
      case Kind::kSourceAddress:
      case Kind::kDestAddress: return Address(p, invalid);
      case Kind::kDestPort: return L4Proto(p.protocol) && DestPort(p.port);
      case Kind::kL4Proto: return L4Proto(p.protocol);
      case Kind::kThDestPort: return DestPort(p.port);
      case Kind::kXtMatch: return Xt(p, "match", NFTA_MATCH_NAME, NFTA_MATCH_REV, NFTA_MATCH_INFO);
      case Kind::kXtTarget: return Xt(p, "target", NFTA_TARGET_NAME, NFTA_TARGET_REV, NFTA_TARGET_INFO);
      case Kind::kCounter:
        return Begin("counter") && nla_put_u64(msg_, NFTA_COUNTER_BYTES, 0) == 0 &&
               nla_put_u64(msg_, NFTA_COUNTER_PACKETS, 0) == 0 && End();
      case Kind::kDestIsLocal: return FibLocal();
      case Kind::kInInterface: return Ifname(NFT_META_IIFNAME, p, invalid);
      case Kind::kOutInterface: return Ifname(NFT_META_OIFNAME, p, invalid);
      case Kind::kCtEstablished: return CtRelatedEstablished();
      case Kind::kEtherSource:
        return Payload(NFT_PAYLOAD_LL_HEADER, 6, 6) && Cmp(NFT_CMP_EQ, p.mac.bytes().data(), 6);
      case Kind::kText:
        invalid = absl::InvalidArgumentError("raw nft text cannot be encoded (libnftables path)");
        return true;
      case Kind::kJump: return Verdict(NFT_JUMP, p.text);
      case Kind::kGoto: return Verdict(NFT_GOTO, p.text);
      case Kind::kReturn: return Verdict(NFT_RETURN, "");
      case Kind::kDrop: return Verdict(NF_DROP, "");
      case Kind::kAccept: return Verdict(NF_ACCEPT, "");
      case Kind::kMasquerade: return Begin("masq") && End();
      case Kind::kDnat: return Dnat(p);
      case Kind::kComment: return true;  // user data, not an expression
    }
    return true;
  }

 private:
  bool Address(const NftPiece& p, absl::Status& invalid) {
    const bool v4 = p.prefix.is_v4();
    const uint8_t want = v4 ? NFPROTO_IPV4 : NFPROTO_IPV6;
    if (family_ != NFPROTO_INET && family_ != want) {
      // nft refuses these too: "ip6 saddr" in an ip table, or in a bridge
      // table (which would need an ether type dependency we never use).
      invalid = absl::InvalidArgumentError("address match of another family");
      return true;
    }
    if (nfproto_ != want) {
      if (!MetaCmp(NFT_META_NFPROTO, &want, 1)) return false;
      nfproto_ = want;
    }
    const bool source = p.kind == Kind::kSourceAddress;
    const uint32_t offset = v4 ? (source ? 12 : 16) : (source ? 8 : 24);
    const uint32_t full = p.prefix.addr().byte_length();
    const int bits = p.prefix.len();
    const net::IpAddress net = p.prefix.Network().addr();
    const uint32_t op = p.equal ? NFT_CMP_EQ : NFT_CMP_NEQ;
    if (bits > 0 && bits % 8 == 0) {
      // Byte-aligned: nft loads just the prefix's bytes.
      uint32_t len = bits / 8;
      return Payload(NFT_PAYLOAD_NETWORK_HEADER, offset, len) && Cmp(op, net.data(), len);
    }
    // Otherwise (/0 included): the whole address, masked.
    std::vector<uint8_t> zero(full, 0);
    return Payload(NFT_PAYLOAD_NETWORK_HEADER, offset, full) &&
           Bitwise(p.prefix.Mask().data(), zero.data(), full) && Cmp(op, net.data(), full);
  }

  bool Ifname(uint32_t key, const NftPiece& p, absl::Status& invalid) {
    if (p.text.size() >= IFNAMSIZ) {
      invalid = absl::InvalidArgumentError("interface name too long");
      return true;
    }
    std::array<uint8_t, IFNAMSIZ> name{};
    std::copy(p.text.begin(), p.text.end(), name.begin());
    // nft compares all IFNAMSIZ bytes; iptables-nft the name and its NUL.
    const size_t len = p.name_only ? p.text.size() + 1 : name.size();
    return Meta(key) && Cmp(p.equal ? NFT_CMP_EQ : NFT_CMP_NEQ, name.data(), len);
  }

  // ct state & (related | established) != 0, as nft compiles it.
  bool CtRelatedEstablished() {
    const uint32_t mask = NF_CT_STATE_BIT(IP_CT_ESTABLISHED) | NF_CT_STATE_BIT(IP_CT_RELATED);
    const uint32_t zero = 0;
    return Begin("ct") && U32(NFTA_CT_DREG, NFT_REG_1) && U32(NFTA_CT_KEY, NFT_CT_STATE) && End() &&
           Bitwise(&mask, &zero, 4) && Cmp(NFT_CMP_NEQ, &zero, 4);
  }

  bool L4Proto(L4Protocol protocol) {
    const uint8_t number = L4ProtocolNumber(protocol);
    return MetaCmp(NFT_META_L4PROTO, &number, 1);
  }

  bool DestPort(uint16_t port) {
    uint16_t be = htons(port);
    return Payload(NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2) && Cmp(NFT_CMP_EQ, &be, 2);
  }

  bool FibLocal() {
    uint32_t local = RTN_LOCAL;  // the result register holds a host-order type
    return Begin("fib") && U32(NFTA_FIB_DREG, NFT_REG_1) && U32(NFTA_FIB_RESULT, NFT_FIB_RESULT_ADDRTYPE) &&
           U32(NFTA_FIB_FLAGS, NFTA_FIB_F_DADDR) && End() && Cmp(NFT_CMP_EQ, &local, 4);
  }

  bool Dnat(const NftPiece& p) {
    uint16_t port = htons(p.port);
    return Immediate(NFT_REG_1, p.address.data(), p.address.byte_length()) &&
           Immediate(NFT_REG_2, &port, 2) && Begin("nat") && U32(NFTA_NAT_TYPE, NFT_NAT_DNAT) &&
           U32(NFTA_NAT_FAMILY, p.address.is_v4() ? NFPROTO_IPV4 : NFPROTO_IPV6) &&
           U32(NFTA_NAT_REG_ADDR_MIN, NFT_REG_1) && U32(NFTA_NAT_REG_PROTO_MIN, NFT_REG_2) &&
           U32(NFTA_NAT_FLAGS, NF_NAT_RANGE_PROTO_SPECIFIED) && End();
  }

  bool Meta(uint32_t key) { return Begin("meta") && U32(NFTA_META_DREG, NFT_REG_1) && U32(NFTA_META_KEY, key) && End(); }
  bool MetaCmp(uint32_t key, const void* value, size_t len) { return Meta(key) && Cmp(NFT_CMP_EQ, value, len); }

  // nft_compat's "match" or "target": the xtables extension by name and
  // revision, with its info struct (built, padded, by
  // ipt_rule.cc); the kernel checks the size against the
  // extension's own.
  bool Xt(const NftPiece& p, const char* expr, int name_attr, int rev_attr, int info_attr) {
    return Begin(expr) && nla_put_string(msg_, name_attr, p.text.c_str()) == 0 && U32(rev_attr, p.revision) &&
           nla_put(msg_, info_attr, static_cast<int>(p.info.size()), p.info.data()) == 0 && End();
  }

  bool Payload(uint32_t base, uint32_t offset, uint32_t len) {
    return Begin("payload") && U32(NFTA_PAYLOAD_DREG, NFT_REG_1) && U32(NFTA_PAYLOAD_BASE, base) &&
           U32(NFTA_PAYLOAD_OFFSET, offset) && U32(NFTA_PAYLOAD_LEN, len) && End();
  }

  bool Cmp(uint32_t op, const void* value, size_t len) {
    return Begin("cmp") && U32(NFTA_CMP_SREG, NFT_REG_1) && U32(NFTA_CMP_OP, op) &&
           Data(NFTA_CMP_DATA, value, len) && End();
  }

  bool Bitwise(const void* mask, const void* xor_value, size_t len) {
    return Begin("bitwise") && U32(NFTA_BITWISE_SREG, NFT_REG_1) && U32(NFTA_BITWISE_DREG, NFT_REG_1) &&
           U32(NFTA_BITWISE_LEN, len) && Data(NFTA_BITWISE_MASK, mask, len) &&
           Data(NFTA_BITWISE_XOR, xor_value, len) && End();
  }

  bool Immediate(uint32_t reg, const void* value, size_t len) {
    return Begin("immediate") && U32(NFTA_IMMEDIATE_DREG, reg) && Data(NFTA_IMMEDIATE_DATA, value, len) && End();
  }

  bool Verdict(int code, const std::string& chain) {
    if (!Begin("immediate") || !U32(NFTA_IMMEDIATE_DREG, NFT_REG_VERDICT)) return false;
    nlattr* data = nla_nest_start(msg_, NFTA_IMMEDIATE_DATA);
    nlattr* verdict = data != nullptr ? nla_nest_start(msg_, NFTA_DATA_VERDICT) : nullptr;
    if (verdict == nullptr || !U32(NFTA_VERDICT_CODE, static_cast<uint32_t>(code))) return false;
    if (!chain.empty() && nla_put_string(msg_, NFTA_VERDICT_CHAIN, chain.c_str()) < 0) return false;
    nla_nest_end(msg_, verdict);
    nla_nest_end(msg_, data);
    return End();
  }

  // One list element: the expression's name, then its attributes.
  bool Begin(const char* name) {
    elem_ = nla_nest_start(msg_, NFTA_LIST_ELEM);
    if (elem_ == nullptr || nla_put_string(msg_, NFTA_EXPR_NAME, name) < 0) return false;
    data_ = nla_nest_start(msg_, NFTA_EXPR_DATA);
    return data_ != nullptr;
  }
  bool End() {
    nla_nest_end(msg_, data_);
    nla_nest_end(msg_, elem_);
    return true;
  }
  bool U32(int type, uint32_t value) { return nla_put_u32(msg_, type, htonl(value)) == 0; }
  bool Data(int type, const void* value, size_t len) {
    nlattr* nest = nla_nest_start(msg_, type);
    if (nest == nullptr || nla_put(msg_, NFTA_DATA_VALUE, static_cast<int>(len), value) < 0) return false;
    nla_nest_end(msg_, nest);
    return true;
  }

  nl_msg* msg_;
  nlattr* elem_ = nullptr;
  nlattr* data_ = nullptr;
  uint8_t family_;                  // the table's family
  std::optional<uint8_t> nfproto_;  // the network protocol already known
};

absl::Status PutRule(const NftCommand& c, nl_msg* msg) {
  if (nla_put_string(msg, NFTA_RULE_TABLE, c.table.c_str()) < 0 ||
      nla_put_string(msg, NFTA_RULE_CHAIN, c.chain.c_str()) < 0) {
    return TooLong(c);
  }
  nlattr* list = nla_nest_start(msg, NFTA_RULE_EXPRESSIONS);
  if (list == nullptr) return TooLong(c);
  ExprWriter writer(msg, NftFamilyNumber(c.family));
  std::string comment;
  for (const NftPiece& p : c.rule.pieces()) {
    absl::Status invalid;
    if (!writer.Piece(p, invalid)) return TooLong(c);
    if (!invalid.ok()) return Invalid(c, invalid.message());
    if (p.kind == Kind::kComment) comment = p.text;
  }
  nla_nest_end(msg, list);
  if (c.rule.HasXt()) {
    // xtables extensions check the rule's protocol (e.g. multiport wants
    // tcp, udp or sctp): nft_compat takes it from here (XtProtocol).
    const std::optional<L4Protocol> proto = c.rule.xt_protocol();
    const uint32_t number = proto.has_value() ? L4ProtocolNumber(*proto) : 0;
    nlattr* compat = nla_nest_start(msg, NFTA_RULE_COMPAT);
    if (compat == nullptr || nla_put_u32(msg, NFTA_RULE_COMPAT_PROTO, htonl(number)) < 0 ||
        nla_put_u32(msg, NFTA_RULE_COMPAT_FLAGS, 0) < 0) {
      return TooLong(c);
    }
    nla_nest_end(msg, compat);
  }
  if (!comment.empty()) {
    if (comment.size() > kCommentMax) return Invalid(c, "comment longer than 128 bytes");
    std::string udata = CommentUserData(comment);
    if (nla_put(msg, NFTA_RULE_USERDATA, static_cast<int>(udata.size()), udata.data()) < 0) return TooLong(c);
  }
  return absl::OkStatus();
}

absl::Status PutChain(const NftCommand& c, nl_msg* msg) {
  if (nla_put_string(msg, NFTA_CHAIN_TABLE, c.table.c_str()) < 0 ||
      nla_put_string(msg, NFTA_CHAIN_NAME, c.chain.c_str()) < 0) {
    return TooLong(c);
  }
  if (c.op != NftCommand::Op::kAddChain && c.op != NftCommand::Op::kCreateChain) return absl::OkStatus();
  if (c.hook.has_value()) {
    absl::StatusOr<uint32_t> hooknum = HookNumber(c.hook->hook);
    if (!hooknum.ok()) return Invalid(c, hooknum.status().message());
    nlattr* hook = nla_nest_start(msg, NFTA_CHAIN_HOOK);
    if (hook == nullptr || nla_put_u32(msg, NFTA_HOOK_HOOKNUM, htonl(*hooknum)) < 0 ||
        nla_put_u32(msg, NFTA_HOOK_PRIORITY, htonl(static_cast<uint32_t>(c.hook->priority))) < 0) {
      return TooLong(c);
    }
    nla_nest_end(msg, hook);
    if (nla_put_string(msg, NFTA_CHAIN_TYPE, c.hook->type.c_str()) < 0) return TooLong(c);
  }
  if (!c.comment.empty()) {
    if (c.comment.size() > kCommentMax) return Invalid(c, "comment longer than 128 bytes");
    std::string udata = CommentUserData(c.comment);  // NFTNL_UDATA_CHAIN_COMMENT is type 0 too
    if (nla_put(msg, NFTA_CHAIN_USERDATA, static_cast<int>(udata.size()), udata.data()) < 0) return TooLong(c);
  }
  return absl::OkStatus();
}

absl::Status PutTable(const NftCommand& c, nl_msg* msg) {
  if (nla_put_string(msg, NFTA_TABLE_NAME, c.table.c_str()) < 0) return TooLong(c);
  if (!c.comment.empty()) {
    if (c.comment.size() > kCommentMax) return Invalid(c, "comment longer than 128 bytes");
    std::string udata = CommentUserData(c.comment);  // NFTNL_UDATA_TABLE_COMMENT is type 0 too
    if (nla_put(msg, NFTA_TABLE_USERDATA, static_cast<int>(udata.size()), udata.data()) < 0) return TooLong(c);
  }
  return absl::OkStatus();
}

}  // namespace

std::string CommentUserData(absl::string_view comment) {
  std::string tlv;
  tlv += '\0';                                        // type: comment
  tlv += static_cast<char>(comment.size() + 1);       // length, with the NUL
  tlv.append(comment.data(), comment.size());
  tlv += '\0';
  return tlv;
}

absl::StatusOr<net::NlMsgPtr> EncodeCommand(const NftCommand& c, uint32_t seq) {
  using Op = NftCommand::Op;
  int type = 0;
  int flags = NLM_F_REQUEST;
  switch (c.op) {
    case Op::kAddTable: type = NFT_MSG_NEWTABLE; flags |= NLM_F_CREATE; break;
    case Op::kAddChain: type = NFT_MSG_NEWCHAIN; flags |= NLM_F_CREATE; break;
    case Op::kCreateChain: type = NFT_MSG_NEWCHAIN; flags |= NLM_F_CREATE | NLM_F_EXCL; break;
    case Op::kFlushChain: type = NFT_MSG_DELRULE; break;  // a DELRULE without a handle empties the chain
    case Op::kDeleteChain: type = NFT_MSG_DELCHAIN; break;
    case Op::kAddRule: type = NFT_MSG_NEWRULE; flags |= NLM_F_CREATE | NLM_F_APPEND; break;
    case Op::kInsertRule: type = NFT_MSG_NEWRULE; flags |= NLM_F_CREATE; break;  // no APPEND: at the top
    case Op::kDeleteRule: type = NFT_MSG_DELRULE; break;
  }
  net::NlMsgPtr msg(nlmsg_alloc_simple((NFNL_SUBSYS_NFTABLES << 8) | type, flags));
  if (!msg) return Error(ErrorCode::kInternal, "nftables: out of memory");
  nlmsg_hdr(msg.get())->nlmsg_seq = seq;
  nfgenmsg hdr{.nfgen_family = NftFamilyNumber(c.family), .version = NFNETLINK_V0, .res_id = 0};
  if (nlmsg_append(msg.get(), &hdr, sizeof(hdr), NLMSG_ALIGNTO) < 0) return TooLong(c);
  absl::Status st;
  switch (c.op) {
    case Op::kAddTable: st = PutTable(c, msg.get()); break;
    case Op::kAddChain:
    case Op::kCreateChain:
    case Op::kDeleteChain: st = PutChain(c, msg.get()); break;
    case Op::kFlushChain:
      if (nla_put_string(msg.get(), NFTA_RULE_TABLE, c.table.c_str()) < 0 ||
          nla_put_string(msg.get(), NFTA_RULE_CHAIN, c.chain.c_str()) < 0) {
        st = TooLong(c);
      }
      break;
    case Op::kAddRule:
    case Op::kInsertRule: st = PutRule(c, msg.get()); break;
    case Op::kDeleteRule:
      if (nla_put_string(msg.get(), NFTA_RULE_TABLE, c.table.c_str()) < 0 ||
          nla_put_string(msg.get(), NFTA_RULE_CHAIN, c.chain.c_str()) < 0 ||
          nla_put_u64(msg.get(), NFTA_RULE_HANDLE, htobe64(c.handle)) < 0) {
        st = TooLong(c);
      }
      break;
  }
  if (!st.ok()) return st;
  return msg;
}

}  // namespace cni::fw::internal

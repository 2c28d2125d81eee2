#include "nft_dump.h"

// <netinet/in.h> before the <linux/...> headers: the other order redefines
// struct in_addr (linux/libc-compat.h only guards this one).
#include <endian.h>
#include <netinet/in.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "cni/net/netlink.h"

namespace cni::fw::internal {
namespace {

// nft's user-data TLV type for a rule comment (libnftnl's
// NFTNL_UDATA_RULE_COMMENT); its value is a NUL-terminated string.
constexpr uint8_t kUdataRuleComment = 0;

// The largest attribute number we parse (NFTA_RULE_MAX, NFTA_CHAIN_MAX).
constexpr int kAttrMax = 32;
static_assert(NFTA_RULE_MAX <= kAttrMax && NFTA_CHAIN_MAX <= kAttrMax);

using Attrs = std::vector<std::pair<int, std::string>>;

absl::Status Failed(absl::string_view where, absl::string_view why) {
  return Error(ErrorCode::kInternal, absl::StrCat(where, ": ", why));
}

// The GET `msg_type` for `family` with the string attributes `attrs`.
absl::StatusOr<net::NlMsgPtr> GetRequest(int msg_type, NftFamily family, const Attrs& attrs,
                                         const std::string& what) {
  net::NlMsgPtr msg(nlmsg_alloc_simple((NFNL_SUBSYS_NFTABLES << 8) | msg_type, 0));
  if (!msg) return Failed(what, "out of memory");
  nfgenmsg hdr{.nfgen_family = NftFamilyNumber(family), .version = NFNETLINK_V0, .res_id = 0};
  if (nlmsg_append(msg.get(), &hdr, sizeof(hdr), NLMSG_ALIGNTO) < 0) return Failed(what, "message too long");
  for (const auto& [type, value] : attrs) {
    if (nla_put_string(msg.get(), type, value.c_str()) < 0) return Failed(what, "message too long");
  }
  return msg;
}

// A kernel failure as the nftables functions have always reported it (code
// 999), its errno kept.
absl::Status Refined(const absl::Status& st) {
  return st.ok() ? st : WithErrno(Error(ErrorCode::kInternal, st.message()), ErrnoOf(st));
}

// One dump: `msg_type` for table `family` `table` (and `chain`, for rules),
// every answer's attributes handed to `each` until it returns false (the
// kernel produces a dump as it is read, so the rest is never made). A
// missing table is success with no answers. A dump interrupted by a
// concurrent change is asked again after `restart`, so the listing is
// consistent.
absl::Status Dump(net::NetlinkSocket& nl, int msg_type, NftFamily family, absl::string_view table,
                  absl::string_view chain, const char* what, const std::function<bool(nlattr** tb)>& each,
                  const std::function<void()>& restart) {
  const std::string where = absl::StrCat("nftables: ", what);
  // NFTA_RULE_TABLE == NFTA_CHAIN_TABLE: the dump's table filter; a rule
  // dump also takes a chain (the kernel then walks only that chain).
  Attrs filter = {{NFTA_RULE_TABLE, std::string(table)}};
  if (!chain.empty()) filter.emplace_back(NFTA_RULE_CHAIN, std::string(chain));
  ASSIGN_OR_RETURN(net::NlMsgPtr msg, GetRequest(msg_type, family, filter, where));
  absl::Status st = nl.Exchange(msg.get(),
                                net::NlExchange{.until = net::NlAnswer::kDump,
                                                .each =
                                                    [&each](nlmsghdr* h) {
                                                      std::array<nlattr*, kAttrMax + 1> tb{};
                                                      return nlmsg_parse(h, sizeof(nfgenmsg), tb.data(), kAttrMax,
                                                                         nullptr) != 0 ||
                                                             each(tb.data());
                                                    },
                                                .restart = restart},
                                where);
  if (ErrnoOf(st) == ENOENT) return absl::OkStatus();  // no such table
  return Refined(st);
}

// One object by name (a GET without NLM_F_DUMP): its attributes go to `each`.
// Returns false, and does not call `each`, when the kernel answers ENOENT
// (no such table, or no such object in it).
absl::StatusOr<bool> GetOne(net::NetlinkSocket& nl, int msg_type, NftFamily family, const Attrs& attrs,
                            const char* what, const std::function<void(nlattr** tb)>& each) {
  const std::string where = absl::StrCat("nftables: ", what);
  ASSIGN_OR_RETURN(net::NlMsgPtr msg, GetRequest(msg_type, family, attrs, where));
  bool malformed = false;
  absl::Status st = nl.Exchange(msg.get(),
                                net::NlExchange{.until = net::NlAnswer::kOne,
                                                .each =
                                                    [&](nlmsghdr* h) {
                                                      std::array<nlattr*, kAttrMax + 1> tb{};
                                                      malformed = nlmsg_parse(h, sizeof(nfgenmsg), tb.data(),
                                                                              kAttrMax, nullptr) != 0;
                                                      if (!malformed) each(tb.data());
                                                      return false;
                                                    }},
                                where);
  if (ErrnoOf(st) == ENOENT) return false;
  RETURN_IF_ERROR(Refined(st));
  if (malformed) return Failed(where, "malformed answer");
  return true;
}

// The text of a string attribute, without copying.
absl::string_view StringView(nlattr* a) {
  if (a == nullptr) return "";
  const char* s = static_cast<const char*>(nla_data(a));
  return absl::string_view(s, strnlen(s, nla_len(a)));
}

}  // namespace

std::string CommentFromUserData(const uint8_t* data, size_t len) {
  size_t off = 0;
  while (off + 2 <= len) {
    uint8_t type = data[off];
    uint8_t vlen = data[off + 1];
    if (off + 2 + vlen > len) break;  // truncated: ignore the rest
    if (type == kUdataRuleComment) {
      const char* s = reinterpret_cast<const char*>(data + off + 2);
      return std::string(s, strnlen(s, vlen));
    }
    off += 2 + vlen;
  }
  return "";
}

namespace {
// The chain a rule's verdict jumps or goes to ("" when none): an
// "immediate" expression loading a jump/goto verdict, as `jump x`, `goto x`
// and iptables' `-j x` all compile.
std::string VerdictChain(nlattr* expressions) {
  if (expressions == nullptr) return "";
  nlattr* elem;
  int rem;
  nla_for_each_nested(elem, expressions, rem) {
    std::array<nlattr*, NFTA_EXPR_MAX + 1> expr{};
    if (nla_parse_nested(expr.data(), NFTA_EXPR_MAX, elem, nullptr) != 0) continue;
    if (StringView(expr[NFTA_EXPR_NAME]) != "immediate" || expr[NFTA_EXPR_DATA] == nullptr) continue;
    std::array<nlattr*, NFTA_IMMEDIATE_MAX + 1> imm{};
    if (nla_parse_nested(imm.data(), NFTA_IMMEDIATE_MAX, expr[NFTA_EXPR_DATA], nullptr) != 0 ||
        imm[NFTA_IMMEDIATE_DATA] == nullptr) {
      continue;
    }
    std::array<nlattr*, NFTA_DATA_MAX + 1> data{};
    if (nla_parse_nested(data.data(), NFTA_DATA_MAX, imm[NFTA_IMMEDIATE_DATA], nullptr) != 0 ||
        data[NFTA_DATA_VERDICT] == nullptr) {
      continue;
    }
    std::array<nlattr*, NFTA_VERDICT_MAX + 1> verdict{};
    if (nla_parse_nested(verdict.data(), NFTA_VERDICT_MAX, data[NFTA_DATA_VERDICT], nullptr) != 0 ||
        verdict[NFTA_VERDICT_CODE] == nullptr) {
      continue;
    }
    auto code = static_cast<int32_t>(ntohl(nla_get_u32(verdict[NFTA_VERDICT_CODE])));
    if (code == NFT_JUMP || code == NFT_GOTO) return std::string(StringView(verdict[NFTA_VERDICT_CHAIN]));
  }
  return "";
}

// The raw value of a "cmp" (NFTA_CMP_DATA) or "immediate"
// (NFTA_IMMEDIATE_DATA) expression, when it is 4 or 16 bytes (an address).
void AppendAddressValue(nlattr* expr_name, nlattr* expr_data, std::vector<std::string>& values) {
  const absl::string_view name = StringView(expr_name);
  const bool cmp = name == "cmp";
  if ((!cmp && name != "immediate") || expr_data == nullptr) return;
  std::array<nlattr*, std::max<int>(NFTA_CMP_MAX, NFTA_IMMEDIATE_MAX) + 1> attrs{};
  const int max = cmp ? NFTA_CMP_MAX : NFTA_IMMEDIATE_MAX;
  if (nla_parse_nested(attrs.data(), max, expr_data, nullptr) != 0) return;
  nlattr* value_data = cmp ? attrs[NFTA_CMP_DATA] : attrs[NFTA_IMMEDIATE_DATA];
  std::array<nlattr*, NFTA_DATA_MAX + 1> data{};
  if (value_data == nullptr || nla_parse_nested(data.data(), NFTA_DATA_MAX, value_data, nullptr) != 0 ||
      data[NFTA_DATA_VALUE] == nullptr) {
    return;
  }
  const int len = nla_len(data[NFTA_DATA_VALUE]);
  if (len == 4 || len == 16) values.emplace_back(static_cast<const char*>(nla_data(data[NFTA_DATA_VALUE])), len);
}

// A listed or echoed rule's place, handle, comment and jump (not its family).
NftRule RuleFromAttrs(nlattr** tb) {
  NftRule r;
  r.jump = VerdictChain(tb[NFTA_RULE_EXPRESSIONS]);
  r.table = std::string(StringView(tb[NFTA_RULE_TABLE]));
  r.chain = std::string(StringView(tb[NFTA_RULE_CHAIN]));
  if (tb[NFTA_RULE_HANDLE] != nullptr) r.handle = be64toh(nla_get_u64(tb[NFTA_RULE_HANDLE]));
  if (nlattr* u = tb[NFTA_RULE_USERDATA]; u != nullptr) {
    r.comment = CommentFromUserData(static_cast<const uint8_t*>(nla_data(u)), nla_len(u));
  }
  if (nlattr* list = tb[NFTA_RULE_EXPRESSIONS]; list != nullptr) {
    nlattr* elem;
    int rem;
    nla_for_each_nested(elem, list, rem) {
      ++r.expressions;
      std::array<nlattr*, NFTA_EXPR_MAX + 1> expr{};
      if (nla_parse_nested(expr.data(), NFTA_EXPR_MAX, elem, nullptr) == 0) {
        AppendAddressValue(expr[NFTA_EXPR_NAME], expr[NFTA_EXPR_DATA], r.values);
      }
    }
  }
  return r;
}
}  // namespace

NftRule RuleFromMessage(nlmsghdr* h) {
  std::array<nlattr*, kAttrMax + 1> tb{};
  if (nlmsg_parse(h, sizeof(nfgenmsg), tb.data(), kAttrMax, nullptr) != 0) return NftRule{};
  return RuleFromAttrs(tb.data());
}

absl::StatusOr<std::vector<NftRule>> DumpRules(net::NetlinkSocket& nl, NftFamily family,
                                               absl::string_view table, absl::string_view chain, size_t limit) {
  std::vector<NftRule> rules;
  RETURN_IF_ERROR(Dump(
      nl, NFT_MSG_GETRULE, family, table, chain, "listing rules",
      [&rules, family, table, limit](nlattr** tb) {
        if (StringView(tb[NFTA_RULE_TABLE]) != table) return true;  // older kernels ignore the dump filter
        NftRule r = RuleFromAttrs(tb);
        r.family = family;
        rules.push_back(std::move(r));
        return limit == 0 || rules.size() < limit;
      },
      [&rules] { rules.clear(); }));
  return rules;
}

}  // namespace cni::fw::internal

namespace cni::fw::nft {

absl::StatusOr<std::vector<NftRule>> ListRules(net::NetlinkSocket& nl, NftFamily family,
                                               absl::string_view table, absl::string_view chain) {
  return internal::DumpRules(nl, family, table, chain, 0);
}

absl::StatusOr<std::vector<NftRule>> ListFirstRules(net::NetlinkSocket& nl, NftFamily family,
                                                    absl::string_view table, absl::string_view chain,
                                                    size_t count) {
  if (count == 0) return std::vector<NftRule>{};
  return internal::DumpRules(nl, family, table, chain, count);
}

absl::StatusOr<std::vector<std::string>> ListChains(net::NetlinkSocket& nl, NftFamily family,
                                                    absl::string_view table) {
  std::vector<std::string> chains;
  RETURN_IF_ERROR(internal::Dump(
      nl, NFT_MSG_GETCHAIN, family, table, "", "listing chains",
      [&chains, table](nlattr** tb) {
        // Chain dumps are not filtered by table in the kernel: every table
        // of the family answers.
        if (internal::StringView(tb[NFTA_CHAIN_TABLE]) == table) {
          chains.emplace_back(internal::StringView(tb[NFTA_CHAIN_NAME]));
        }
        return true;
      },
      [&chains] { chains.clear(); }));
  return chains;
}

absl::StatusOr<std::optional<uint64_t>> TableHandle(net::NetlinkSocket& nl, NftFamily family,
                                                    absl::string_view table) {
  std::optional<uint64_t> handle;
  ASSIGN_OR_RETURN(bool found, internal::GetOne(nl, NFT_MSG_GETTABLE, family, {{NFTA_TABLE_NAME, std::string(table)}},
                                                "looking up a table", [&handle](nlattr** tb) {
                                                  handle = tb[NFTA_TABLE_HANDLE] != nullptr
                                                               ? be64toh(nla_get_u64(tb[NFTA_TABLE_HANDLE]))
                                                               : 0;
                                                }));
  (void)found;  // not found: no handle
  return handle;
}

absl::StatusOr<bool> HasChain(net::NetlinkSocket& nl, NftFamily family, absl::string_view table,
                              absl::string_view chain) {
  return internal::GetOne(nl, NFT_MSG_GETCHAIN, family,
                          {{NFTA_CHAIN_TABLE, std::string(table)}, {NFTA_CHAIN_NAME, std::string(chain)}},
                          "looking up a chain", [](nlattr**) {});
}

absl::StatusOr<net::NetlinkSocket> OpenSocket() { return net::NetlinkSocket::Open(net::NetlinkProtocol::kNetfilter); }

}  // namespace cni::fw::nft

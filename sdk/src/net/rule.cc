#include "cni/net/rule.h"

#include <linux/fib_rules.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <netlink/errno.h>
#include <netlink/msg.h>
#include <sys/socket.h>

#include "absl/strings/str_cat.h"
#include "cni/base/status_macros.h"
#include "nl_convert.h"
#include "nl_request.h"

namespace cni::net {
namespace {

using internal::AddressOf;
using internal::AfOf;

std::string What(const RuleSpec& r, RuleOp op) {
  return absl::StrCat(op == RuleOp::kAdd ? "adding" : "deleting", " rule \"", r.ToString(), "\"");
}

// The rule of an RTM_NEWRULE message, when it is a table lookup of `family`.
std::optional<RuleSpec> RuleOf(nlmsghdr* hdr, std::optional<Family> family) {
  if (hdr->nlmsg_type != RTM_NEWRULE) return std::nullopt;
  const auto* frh = static_cast<const fib_rule_hdr*>(nlmsg_data(hdr));
  if (frh->family != AF_INET && frh->family != AF_INET6) return std::nullopt;
  if (frh->action != FR_ACT_TO_TBL) return std::nullopt;
  RuleSpec r;
  r.family = frh->family == AF_INET ? Family::kV4 : Family::kV6;
  if (family && *family != r.family) return std::nullopt;
  nlattr* tb[FRA_MAX + 1] = {};
  if (nlmsg_parse(hdr, sizeof(fib_rule_hdr), tb, FRA_MAX, nullptr) < 0) return std::nullopt;
  r.table = tb[FRA_TABLE] != nullptr ? static_cast<int>(nla_get_u32(tb[FRA_TABLE])) : frh->table;
  if (tb[FRA_PRIORITY] != nullptr) r.priority = nla_get_u32(tb[FRA_PRIORITY]);
  if (tb[FRA_PROTOCOL] != nullptr) r.protocol = nla_get_u8(tb[FRA_PROTOCOL]);
  if (std::optional<IpAddress> src = AddressOf(tb[FRA_SRC], r.family)) r.src = IpPrefix(*src, frh->src_len);
  if (std::optional<IpAddress> dst = AddressOf(tb[FRA_DST], r.family)) r.dst = IpPrefix(*dst, frh->dst_len);
  return r;
}

absl::Status Send(NetlinkSocket& sock, const RuleSpec& r, RuleOp op) {
  ASSIGN_OR_RETURN(NlMsgPtr msg, BuildRuleRequest(r, op));
  return sock.Transact(msg.get(), What(r, op));
}

}  // namespace

std::string RuleSpec::ToString() const {
  std::string s = absl::StrCat("from ", src ? src->ToString() : "all");
  if (dst) absl::StrAppend(&s, " to ", dst->ToString());
  absl::StrAppend(&s, " lookup ", table);
  if (priority) absl::StrAppend(&s, " pref ", *priority);
  return s;
}

absl::StatusOr<NlMsgPtr> BuildRuleRequest(const RuleSpec& r, RuleOp op) {
  std::string what = What(r, op);
  fib_rule_hdr frh{};
  frh.family = static_cast<uint8_t>(AfOf(r.family));
  frh.action = FR_ACT_TO_TBL;
  if (r.src) frh.src_len = static_cast<uint8_t>(r.src->len());
  if (r.dst) frh.dst_len = static_cast<uint8_t>(r.dst->len());
  // Tables below 256 fit the header; FRA_TABLE carries any (as iproute2 sends).
  frh.table = r.table > 0 && r.table < 256 ? static_cast<uint8_t>(r.table) : uint8_t{RT_TABLE_UNSPEC};
  ASSIGN_OR_RETURN(NlMsgPtr msg, internal::RequestWith(op == RuleOp::kAdd ? RTM_NEWRULE : RTM_DELRULE,
                                                       op == RuleOp::kAdd ? NLM_F_CREATE | NLM_F_EXCL : 0, frh, what));
  int rc = 0;
  if (r.table > 0) rc = nla_put_u32(msg.get(), FRA_TABLE, static_cast<uint32_t>(r.table));
  if (rc >= 0 && r.priority) rc = nla_put_u32(msg.get(), FRA_PRIORITY, *r.priority);
  if (rc >= 0 && r.src) rc = internal::PutAddress(msg.get(), FRA_SRC, r.src->addr());
  if (rc >= 0 && r.dst) rc = internal::PutAddress(msg.get(), FRA_DST, r.dst->addr());
  if (rc >= 0 && r.protocol != 0) rc = nla_put_u8(msg.get(), FRA_PROTOCOL, static_cast<uint8_t>(r.protocol));
  if (rc < 0) return NlError(rc, what);
  return msg;
}

absl::Status AddRule(NetlinkSocket& sock, const RuleSpec& rule) { return Send(sock, rule, RuleOp::kAdd); }

absl::Status DeleteRule(NetlinkSocket& sock, const RuleSpec& rule) {
  return Send(sock, rule, RuleOp::kDelete);
}

absl::StatusOr<std::vector<RuleSpec>> ListRules(NetlinkSocket& sock, std::optional<Family> family) {
  const char* what = "listing rules";
  fib_rule_hdr frh{};
  frh.family = static_cast<uint8_t>(family ? AfOf(*family) : AF_UNSPEC);
  ASSIGN_OR_RETURN(NlMsgPtr msg, internal::RequestWith(RTM_GETRULE, 0, frh, what));
  std::vector<RuleSpec> out;
  RETURN_IF_ERROR(sock.Exchange(msg.get(),
                                NlExchange{.until = NlAnswer::kDump,
                                           .each =
                                               [&](nlmsghdr* h) {
                                                 if (std::optional<RuleSpec> r = RuleOf(h, family)) {
                                                   out.push_back(*std::move(r));
                                                 }
                                                 return true;
                                               },
                                           .restart = [&out] { out.clear(); }},
                                what));
  return out;
}

}  // namespace cni::net

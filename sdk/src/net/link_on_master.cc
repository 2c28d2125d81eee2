#include "link_on_master.h"

#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <netlink/errno.h>
#include <netlink/msg.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "link_names.h"
#include "nl_request.h"

namespace cni::net::internal {

absl::StatusOr<NlMsgPtr> BuildKindRequest(absl::string_view kind, const LinkOnMaster& common,
                                          const std::function<int(nl_msg*)>& put_data, absl::string_view what) {
  const unsigned up = common.up ? IFF_UP : 0;
  ASSIGN_OR_RETURN(NlMsgPtr msg, LinkRequest(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, 0, what, AF_UNSPEC, up, up));
  nl_msg* m = msg.get();
  int rc = nla_put_string(m, IFLA_IFNAME, common.name.c_str());
  if (rc >= 0 && common.master_index != 0) rc = nla_put_u32(m, IFLA_LINK, static_cast<uint32_t>(common.master_index));
  if (rc >= 0 && common.mtu > 0) rc = nla_put_u32(m, IFLA_MTU, static_cast<uint32_t>(common.mtu));
  // These links queue nothing themselves (noqueue); the value is what `ip
  // link` shows and the limit a qdisc added later would take.
  if (rc >= 0 && common.txqlen) rc = nla_put_u32(m, IFLA_TXQLEN, static_cast<uint32_t>(*common.txqlen));
  if (rc >= 0 && common.mac != nullptr && common.mac->has_value()) {
    const MacAddress& mac = **common.mac;
    rc = nla_put(m, IFLA_ADDRESS, mac.bytes().size(), mac.bytes().data());
  }
  // Born in the container: it never shows up (or collides) in the host.
  if (rc >= 0 && common.netns != nullptr) rc = nla_put_u32(m, IFLA_NET_NS_FD, static_cast<uint32_t>(common.netns->fd()));
  nlattr* linkinfo = rc >= 0 ? nla_nest_start(m, IFLA_LINKINFO) : nullptr;
  if (rc >= 0 && linkinfo == nullptr) rc = -NLE_NOMEM;
  if (rc >= 0) rc = nla_put_string(m, IFLA_INFO_KIND, std::string(kind).c_str());
  if (rc >= 0 && put_data) {
    nlattr* data = nla_nest_start(m, IFLA_INFO_DATA);
    rc = data == nullptr ? -NLE_NOMEM : put_data(m);
    if (rc >= 0) nla_nest_end(m, data);
  }
  if (rc < 0) return NlError(rc, what);
  nla_nest_end(m, linkinfo);
  return msg;
}

namespace {
const nlattr* Find(const std::string& attrs, int type) {
  const auto* head = reinterpret_cast<const nlattr*>(attrs.data());
  return nla_find(const_cast<nlattr*>(head), static_cast<int>(attrs.size()), type);
}
}  // namespace

std::optional<uint32_t> KindData::U32(int type) const {
  const nlattr* a = Find(data_, type);
  if (a == nullptr || nla_len(a) < 4) return std::nullopt;
  return nla_get_u32(const_cast<nlattr*>(a));
}

std::optional<uint16_t> KindData::U16(int type) const {
  const nlattr* a = Find(data_, type);
  if (a == nullptr || nla_len(a) < 2) return std::nullopt;
  return nla_get_u16(const_cast<nlattr*>(a));
}

absl::StatusOr<KindData> GetKindData(NetlinkSocket& sock, int index, absl::string_view what) {
  ASSIGN_OR_RETURN(NlMsgPtr msg, LinkRequest(RTM_GETLINK, 0, index, what));
  KindData out;
  bool answered = false;
  NlExchange how{.until = NlAnswer::kOne, .each = [&](nlmsghdr* h) {
                   if (h->nlmsg_type != RTM_NEWLINK) return false;
                   nlattr* tb[IFLA_MAX + 1] = {};
                   if (nlmsg_parse(h, sizeof(ifinfomsg), tb, IFLA_MAX, nullptr) < 0) return false;
                   answered = true;
                   nlattr* info[IFLA_INFO_MAX + 1] = {};
                   if (tb[IFLA_LINKINFO] == nullptr ||
                       nla_parse_nested(info, IFLA_INFO_MAX, tb[IFLA_LINKINFO], nullptr) < 0) {
                     return false;
                   }
                   if (info[IFLA_INFO_KIND] != nullptr) {
                     const char* k = static_cast<const char*>(nla_data(info[IFLA_INFO_KIND]));
                     out.kind_.assign(k, strnlen(k, static_cast<size_t>(nla_len(info[IFLA_INFO_KIND]))));
                   }
                   if (info[IFLA_INFO_DATA] != nullptr) {
                     out.data_.assign(static_cast<const char*>(nla_data(info[IFLA_INFO_DATA])),
                                      static_cast<size_t>(nla_len(info[IFLA_INFO_DATA])));
                   }
                   return false;
                 }};
  RETURN_IF_ERROR(sock.Exchange(msg.get(), how, what));
  if (!answered) return absl::InternalError(absl::StrCat(what, ": unreadable answer"));
  return out;
}

absl::Status CreateOnMaster(NetlinkSocket& sock, absl::string_view kind, const MasterLink& link,
                            const std::optional<MacAddress>* mac, const std::function<int(nl_msg*)>& put_data,
                            absl::string_view what) {
  ASSIGN_OR_RETURN(NlMsgPtr msg,
                   BuildKindRequest(kind,
                                    {.name = link.name, .master_index = link.master_index, .mtu = link.mtu,
                                     .mac = mac, .netns = link.netns},
                                    put_data, what));
  return TransactNamingLinks(sock, msg.get(), std::string(what));
}

absl::StatusOr<uint32_t> KindAttribute(NetlinkSocket& sock, int index, absl::string_view kind, int type,
                                       int bytes, std::optional<uint32_t> absent, absl::string_view what) {
  ASSIGN_OR_RETURN(KindData link, GetKindData(sock, index, what));
  std::optional<uint32_t> value = absent;
  std::optional<uint32_t> have = link.U32(type);
  if (bytes == 2) {
    std::optional<uint16_t> v16 = link.U16(type);
    have = v16 ? std::optional<uint32_t>(*v16) : std::nullopt;
  }
  if (have) value = have;
  if (link.kind() != kind || !value) {
    const bool vowel = absl::string_view("aeiou").find(kind.front()) != absl::string_view::npos;
    return Error(ErrorCode::kInternal, absl::StrCat(what, ": not a", vowel ? "n " : " ", kind));
  }
  return *value;
}

}  // namespace cni::net::internal

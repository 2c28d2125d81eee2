#include "cni/net/devconf.h"

#include <linux/if_link.h>
#include <linux/ip.h>
#include <linux/netconf.h>
#include <linux/rtnetlink.h>
#include <netlink/msg.h>

#include <array>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cni/base/status_macros.h"
#include "cni/net/sysctl.h"
#include "link_names.h"
#include "nl_convert.h"
#include "nl_request.h"

namespace cni::net {

using internal::NoMemory;

absl::Status SetIpv4DevConf(NetlinkSocket& sock, int ifindex, int setting, uint32_t value) {
  const std::string what = absl::StrCat("setting IPv4 setting #", setting, " of link #", ifindex);
  ASSIGN_OR_RETURN(NlMsgPtr msg, internal::LinkRequest(RTM_SETLINK, 0, ifindex, what, AF_UNSPEC));
  // IFLA_AF_SPEC { AF_INET { IFLA_INET_CONF { <setting>: u32 } } }
  nlattr* spec = nla_nest_start(msg.get(), IFLA_AF_SPEC);
  nlattr* inet = spec != nullptr ? nla_nest_start(msg.get(), AF_INET) : nullptr;
  nlattr* conf = inet != nullptr ? nla_nest_start(msg.get(), IFLA_INET_CONF) : nullptr;
  if (conf == nullptr || nla_put_u32(msg.get(), setting, value) < 0) return NoMemory(what);
  nla_nest_end(msg.get(), conf);
  nla_nest_end(msg.get(), inet);
  nla_nest_end(msg.get(), spec);
  return internal::TransactNamingLinks(sock, msg.get(), what);
}

namespace {

// An interface's per-family settings array, from RTM_GETLINK's
// IFLA_AF_SPEC { <af> { <conf_attr>: 32-bit[...] } }. NotFound when the
// interface has no such family.
absl::StatusOr<std::vector<uint32_t>> LinkDevConf(NetlinkSocket& sock, int ifindex, int af, int conf_attr,
                                                  const std::string& what) {
  ASSIGN_OR_RETURN(NlMsgPtr msg, internal::LinkRequest(RTM_GETLINK, 0, ifindex, what, AF_UNSPEC));
  std::optional<std::vector<uint32_t>> values;
  NlExchange how{.until = NlAnswer::kOne, .each = [&](nlmsghdr* h) {
                   std::array<nlattr*, IFLA_MAX + 1> tb{};
                   if (h->nlmsg_type != RTM_NEWLINK ||
                       nlmsg_parse(h, sizeof(ifinfomsg), tb.data(), IFLA_MAX, nullptr) != 0 ||
                       tb[IFLA_AF_SPEC] == nullptr) {
                     return false;
                   }
                   nlattr* family;
                   int rem;
                   nla_for_each_nested(family, tb[IFLA_AF_SPEC], rem) {
                     if (nla_type(family) != af) continue;
                     nlattr* conf = nla_find(static_cast<nlattr*>(nla_data(family)), nla_len(family), conf_attr);
                     if (conf == nullptr) continue;
                     values.emplace(nla_len(conf) / sizeof(uint32_t));
                     std::memcpy(values->data(), nla_data(conf), values->size() * sizeof(uint32_t));
                   }
                   return false;
                 }};
  RETURN_IF_ERROR(sock.Exchange(msg.get(), how, what));
  if (!values.has_value()) return absl::NotFoundError(absl::StrCat(what, ": the interface has no such settings"));
  return *std::move(values);
}

// values[index] as T, NotFound past the end (a setting this kernel lacks).
template <typename T>
absl::StatusOr<T> Entry(const std::vector<uint32_t>& values, int index, absl::string_view what) {
  if (index < 0 || index >= static_cast<int>(values.size())) {
    return absl::NotFoundError(absl::StrCat(what, ": this kernel has no such setting"));
  }
  return static_cast<T>(values[index]);
}

}  // namespace

absl::StatusOr<uint32_t> Ipv4DevConf(NetlinkSocket& sock, int ifindex, int setting) {
  const std::string what = absl::StrCat("reading IPv4 setting #", setting, " of interface #", ifindex);
  ASSIGN_OR_RETURN(std::vector<uint32_t> values, LinkDevConf(sock, ifindex, AF_INET, IFLA_INET_CONF, what));
  // IFLA_INET_CONF is indexed from 0 while IPV4_DEVCONF_* count from 1.
  return Entry<uint32_t>(values, setting - 1, what);
}

absl::StatusOr<Ipv6DevConfs> ReadIpv6DevConfs(NetlinkSocket& sock, int ifindex) {
  const std::string what = absl::StrCat("reading the IPv6 settings of interface #", ifindex);
  ASSIGN_OR_RETURN(std::vector<uint32_t> values, LinkDevConf(sock, ifindex, AF_INET6, IFLA_INET6_CONF, what));
  return Ipv6DevConfs(std::move(values), std::move(what));
}

absl::StatusOr<int32_t> Ipv6DevConfs::Get(int setting) const {
  return Entry<int32_t>(values_, setting, absl::StrCat(what_, ", #", setting));
}

absl::StatusOr<int32_t> Ipv6DevConf(NetlinkSocket& sock, int ifindex, int setting) {
  ASSIGN_OR_RETURN(Ipv6DevConfs confs, ReadIpv6DevConfs(sock, ifindex));
  return confs.Get(setting);
}

absl::StatusOr<bool> ForwardingEnabled(NetlinkSocket& sock, Family family) {
  const std::string what = absl::StrCat("reading ", family == Family::kV4 ? "IPv4" : "IPv6", " forwarding");
  netconfmsg ncm{};
  ncm.ncm_family = static_cast<unsigned char>(internal::AfOf(family));
  ASSIGN_OR_RETURN(NlMsgPtr msg, internal::RequestWith(RTM_GETNETCONF, 0, ncm, what));
  if (nla_put_s32(msg.get(), NETCONFA_IFINDEX, NETCONFA_IFINDEX_ALL) < 0) return NoMemory(what);
  std::optional<bool> on;
  NlExchange how{.until = NlAnswer::kOne, .each = [&on](nlmsghdr* h) {
                   std::array<nlattr*, NETCONFA_MAX + 1> tb{};
                   if (h->nlmsg_type == RTM_NEWNETCONF &&
                       nlmsg_parse(h, sizeof(netconfmsg), tb.data(), NETCONFA_MAX, nullptr) == 0 &&
                       tb[NETCONFA_FORWARDING] != nullptr) {
                     on = nla_get_s32(tb[NETCONFA_FORWARDING]) != 0;
                   }
                   return false;
                 }};
  RETURN_IF_ERROR(sock.Exchange(msg.get(), how, what));
  if (!on.has_value()) return absl::InternalError(absl::StrCat(what, ": the kernel's answer has no forwarding value"));
  return *on;
}

absl::Status EnsureForwarding(NetlinkSocket& sock, Family family) {
  const char* key = family == Family::kV4 ? "net/ipv4/ip_forward" : "net/ipv6/conf/all/forwarding";
  absl::StatusOr<bool> on = ForwardingEnabled(sock, family);
  if (!on.ok()) {  // a kernel that cannot tell: ask /proc/sys
    absl::StatusOr<std::string> value = ReadSysctlHere(key);
    on = value.ok() && *value == "1";
  }
  if (*on) return absl::OkStatus();
  return WriteSysctlHere(key, "1");
}

}  // namespace cni::net

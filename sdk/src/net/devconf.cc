#include "cni/net/devconf.h"

#include <linux/ip.h>
#include <linux/netconf.h>
#include <linux/rtnetlink.h>
#include <netlink/msg.h>

#include <array>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "cni/net/sysctl.h"
#include "cni/status_macros.h"
#include "nl_convert.h"

namespace cni::net {
namespace {

absl::Status NoMemory(absl::string_view what) { return absl::ResourceExhaustedError(absl::StrCat(what, ": out of memory")); }

}  // namespace

absl::Status SetIpv4DevConf(NetlinkSocket& sock, int ifindex, int setting, uint32_t value) {
  const std::string what = absl::StrCat("setting IPv4 setting #", setting, " of interface #", ifindex);
  NlMsgPtr msg(nlmsg_alloc_simple(RTM_SETLINK, 0));
  if (!msg) return NoMemory(what);
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  ifi.ifi_index = ifindex;
  if (nlmsg_append(msg.get(), &ifi, sizeof(ifi), NLMSG_ALIGNTO) < 0) return NoMemory(what);
  // IFLA_AF_SPEC { AF_INET { IFLA_INET_CONF { <setting>: u32 } } }
  nlattr* spec = nla_nest_start(msg.get(), IFLA_AF_SPEC);
  nlattr* inet = spec != nullptr ? nla_nest_start(msg.get(), AF_INET) : nullptr;
  nlattr* conf = inet != nullptr ? nla_nest_start(msg.get(), IFLA_INET_CONF) : nullptr;
  if (conf == nullptr || nla_put_u32(msg.get(), setting, value) < 0) return NoMemory(what);
  nla_nest_end(msg.get(), conf);
  nla_nest_end(msg.get(), inet);
  nla_nest_end(msg.get(), spec);
  return sock.Transact(msg.get(), what);
}

absl::StatusOr<bool> ForwardingEnabled(NetlinkSocket& sock, Family family) {
  const std::string what = absl::StrCat("reading ", family == Family::kV4 ? "IPv4" : "IPv6", " forwarding");
  NlMsgPtr msg(nlmsg_alloc_simple(RTM_GETNETCONF, 0));
  if (!msg) return NoMemory(what);
  netconfmsg ncm{};
  ncm.ncm_family = static_cast<unsigned char>(internal::AfOf(family));
  if (nlmsg_append(msg.get(), &ncm, sizeof(ncm), NLMSG_ALIGNTO) < 0 ||
      nla_put_s32(msg.get(), NETCONFA_IFINDEX, NETCONFA_IFINDEX_ALL) < 0) {
    return NoMemory(what);
  }
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

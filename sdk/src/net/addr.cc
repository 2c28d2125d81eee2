#include "cni/net/addr.h"

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netlink/cache.h>
#include <netlink/msg.h>
#include <sys/socket.h>

#include <array>
#include <cstring>
#include <optional>
#include <string>
#include <netlink/route/addr.h>

#include "absl/strings/str_cat.h"
#include "cni/status_macros.h"
#include "nl_convert.h"

namespace cni::net {
namespace {

using internal::AfOf;
using internal::FromNlAddr;
using internal::ToNlAddr;

// A libnl address object for `prefix` on `ifindex`, or null when out of memory.
RtnlAddrPtr Build(int ifindex, const IpPrefix& prefix, NlAddrPtr& local) {
  RtnlAddrPtr addr(rtnl_addr_alloc());
  local = ToNlAddr(prefix);
  if (!addr || !local) return nullptr;
  rtnl_addr_set_ifindex(addr.get(), ifindex);
  rtnl_addr_set_family(addr.get(), AfOf(prefix.family()));
  rtnl_addr_set_local(addr.get(), local.get());
  // set_local derives the prefix length from the nl_addr; set it explicitly so
  // the meaning does not depend on that detail.
  rtnl_addr_set_prefixlen(addr.get(), prefix.len());
  return addr;
}

}  // namespace

absl::Status AddAddress(NetlinkSocket& sock, int ifindex, const IpPrefix& prefix,
                        const AddressOptions& opts) {
  std::string what = absl::StrCat("adding address ", prefix.ToString(), " to link #", ifindex);
  NlAddrPtr local, brd;
  RtnlAddrPtr addr = Build(ifindex, prefix, local);
  if (!addr) return absl::ResourceExhaustedError(absl::StrCat(what, ": out of memory"));
  if (opts.flags != 0) rtnl_addr_set_flags(addr.get(), opts.flags);
  if (opts.auto_broadcast && prefix.is_v4() && prefix.len() < 31) {
    brd = ToNlAddr(prefix.LastAddress());
    if (brd) rtnl_addr_set_broadcast(addr.get(), brd.get());
  }
  nl_msg* raw = nullptr;
  // NLM_F_EXCL: an address that is already there is reported, not silently kept.
  int rc = rtnl_addr_build_add_request(addr.get(), NLM_F_EXCL, &raw);
  NlMsgPtr msg(raw);
  if (rc < 0) return NlError(rc, what);
  return sock.Transact(msg.get(), what);
}

absl::Status DeleteAddress(NetlinkSocket& sock, int ifindex, const IpPrefix& prefix) {
  std::string what = absl::StrCat("deleting address ", prefix.ToString(), " from link #", ifindex);
  NlAddrPtr local;
  RtnlAddrPtr addr = Build(ifindex, prefix, local);
  if (!addr) return absl::ResourceExhaustedError(absl::StrCat(what, ": out of memory"));
  nl_msg* raw = nullptr;
  int rc = rtnl_addr_build_delete_request(addr.get(), 0, &raw);
  NlMsgPtr msg(raw);
  if (rc < 0) return NlError(rc, what);
  return sock.Transact(msg.get(), what);
}

namespace {

// One RTM_NEWADDR as AddressInfo; nullopt for a family we do not know.
std::optional<AddressInfo> ParseAddress(nlmsghdr* hdr) {
  if (hdr->nlmsg_type != RTM_NEWADDR) return std::nullopt;
  auto* ifa = static_cast<ifaddrmsg*>(nlmsg_data(hdr));
  nlattr* tb[IFA_MAX + 1] = {};
  if (nlmsg_parse(hdr, sizeof(ifaddrmsg), tb, IFA_MAX, nullptr) != 0) return std::nullopt;
  // IPv4 puts the interface's own address in IFA_LOCAL (IFA_ADDRESS is the
  // peer's on point-to-point links); IPv6 has only IFA_ADDRESS.
  nlattr* a = tb[IFA_LOCAL] != nullptr ? tb[IFA_LOCAL] : tb[IFA_ADDRESS];
  if (a == nullptr) return std::nullopt;
  AddressInfo info;
  if (ifa->ifa_family == AF_INET && nla_len(a) == 4) {
    std::array<uint8_t, 4> b;
    std::memcpy(b.data(), nla_data(a), 4);
    info.prefix = IpPrefix(IpAddress::V4(b), ifa->ifa_prefixlen);
  } else if (ifa->ifa_family == AF_INET6 && nla_len(a) == 16) {
    std::array<uint8_t, 16> b;
    std::memcpy(b.data(), nla_data(a), 16);
    info.prefix = IpPrefix(IpAddress::V6(b), ifa->ifa_prefixlen);
  } else {
    return std::nullopt;
  }
  info.ifindex = static_cast<int>(ifa->ifa_index);
  info.scope = ifa->ifa_scope;
  // IFA_FLAGS carries the flags that do not fit ifa_flags' 8 bits.
  info.flags = tb[IFA_FLAGS] != nullptr ? nla_get_u32(tb[IFA_FLAGS]) : ifa->ifa_flags;
  return info;
}

// Asks the kernel to validate dump requests strictly, and so to honour their
// filters (here: one link's addresses), while it lives.
class StrictDumps {
 public:
  explicit StrictDumps(NetlinkSocket& sock) : fd_(nl_socket_get_fd(sock.get())) { Set(1); }
  ~StrictDumps() { Set(0); }
  StrictDumps(const StrictDumps&) = delete;
  StrictDumps& operator=(const StrictDumps&) = delete;

 private:
  void Set(int on) { (void)setsockopt(fd_, SOL_NETLINK, NETLINK_GET_STRICT_CHK, &on, sizeof(on)); }
  int fd_;
};

}  // namespace

absl::StatusOr<std::vector<AddressInfo>> ListAddresses(NetlinkSocket& sock, int ifindex,
                                                       std::optional<Family> family) {
  const std::string what = "listing addresses";
  NlMsgPtr msg(nlmsg_alloc_simple(RTM_GETADDR, NLM_F_DUMP));
  if (!msg) return absl::ResourceExhaustedError(absl::StrCat(what, ": out of memory"));
  ifaddrmsg ifa{};
  ifa.ifa_family = family.has_value() ? AfOf(*family) : AF_UNSPEC;
  // With strict checking the kernel walks only this link's addresses: a
  // full dump grows with every container on the node (each veth has its
  // IPv6 link-local address), 6 ms with 1,000 of them.
  ifa.ifa_index = static_cast<uint32_t>(ifindex);
  if (nlmsg_append(msg.get(), &ifa, sizeof(ifa), NLMSG_ALIGNTO) < 0) {
    return absl::ResourceExhaustedError(absl::StrCat(what, ": out of memory"));
  }
  std::vector<AddressInfo> out;
  StrictDumps strict(sock);
  NlExchange how{.until = NlAnswer::kDump,
                 .each =
                     [&](nlmsghdr* h) {
                       std::optional<AddressInfo> info = ParseAddress(h);
                       // Filtered here too: a kernel without strict checking
                       // (before 4.20) sends every address.
                       if (info.has_value() && (ifindex == 0 || info->ifindex == ifindex) &&
                           (!family.has_value() || info->prefix.family() == *family)) {
                         out.push_back(*info);
                       }
                       return true;
                     },
                 .restart = [&] { out.clear(); }};
  RETURN_IF_ERROR(sock.Exchange(msg.get(), how, what));
  return out;
}

}  // namespace cni::net

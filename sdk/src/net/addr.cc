#include "cni/net/addr.h"

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netlink/msg.h>
#include <sys/socket.h>

#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "cni/base/quoted.h"
#include "cni/base/status_macros.h"
#include "link_names.h"
#include "nl_convert.h"
#include "nl_request.h"

namespace cni::net {
namespace {

using internal::AfOf;

// The link in a failure's message: by name, else by ifindex.
std::string LinkLabel(NetlinkSocket& sock, int ifindex) {
  std::optional<std::string> name = internal::LinkName(sock, ifindex);
  return name ? Quoted(*name) : absl::StrCat("link #", ifindex);
}

// RTM_NEWADDR / RTM_DELADDR for `prefix` on `ifindex`, written here as
// libnl's address builder writes it (IFA_LOCAL and IFA_ADDRESS both the
// address, universe scope but for IPv4 loopback, flags above the header's
// eight bits in IFA_FLAGS), without its rtnl_addr objects (see link.cc).
absl::StatusOr<NlMsgPtr> AddressRequest(int type, int msg_flags, int ifindex, const IpPrefix& prefix,
                                        uint32_t ifa_flags, const std::optional<IpAddress>& broadcast,
                                        absl::string_view what) {
  const IpAddress& ip = prefix.addr();
  ifaddrmsg ifa{};
  ifa.ifa_family = static_cast<unsigned char>(AfOf(prefix.family()));
  ifa.ifa_prefixlen = static_cast<unsigned char>(prefix.len());
  ifa.ifa_flags = static_cast<unsigned char>(ifa_flags & 0xff);
  ifa.ifa_scope = ip.is_v4() && ip.data()[0] == 127 ? RT_SCOPE_HOST : RT_SCOPE_UNIVERSE;
  ifa.ifa_index = static_cast<uint32_t>(ifindex);
  ASSIGN_OR_RETURN(NlMsgPtr msg, internal::RequestWith(type, msg_flags, ifa, what));
  nl_msg* m = msg.get();
  int rc = internal::PutAddress(m, IFA_LOCAL, ip);
  if (rc >= 0) rc = internal::PutAddress(m, IFA_ADDRESS, ip);
  if (rc >= 0 && broadcast) rc = internal::PutAddress(m, IFA_BROADCAST, *broadcast);
  if (rc >= 0 && (ifa_flags & ~0xffu) != 0) rc = nla_put_u32(m, IFA_FLAGS, ifa_flags);
  if (rc < 0) return NlError(rc, what);
  return msg;
}

}  // namespace

absl::Status AddAddress(NetlinkSocket& sock, int ifindex, const IpPrefix& prefix,
                        const AddressOptions& opts) {
  auto describe = [&](absl::string_view link) { return absl::StrCat("adding address ", prefix.ToString(), " to ", link); };
  const std::string what = describe(absl::StrCat("link #", ifindex));
  std::optional<IpAddress> broadcast;
  if (opts.auto_broadcast && prefix.is_v4() && prefix.len() < 31) broadcast = prefix.LastAddress();
  // NLM_F_EXCL: an address that is already there is reported, not silently kept.
  ASSIGN_OR_RETURN(NlMsgPtr msg, AddressRequest(RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL, ifindex, prefix, opts.flags,
                                                broadcast, what));
  return internal::NameLinks(sock.Transact(msg.get(), what), what,
                             [&] { return describe(LinkLabel(sock, ifindex)); });
}

absl::Status DeleteAddress(NetlinkSocket& sock, int ifindex, const IpPrefix& prefix) {
  auto describe = [&](absl::string_view link) {
    return absl::StrCat("deleting address ", prefix.ToString(), " from ", link);
  };
  const std::string what = describe(absl::StrCat("link #", ifindex));
  ASSIGN_OR_RETURN(NlMsgPtr msg, AddressRequest(RTM_DELADDR, 0, ifindex, prefix, 0, std::nullopt, what));
  return internal::NameLinks(sock.Transact(msg.get(), what), what,
                             [&] { return describe(LinkLabel(sock, ifindex)); });
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
  if (ifa->ifa_family != AF_INET && ifa->ifa_family != AF_INET6) return std::nullopt;
  std::optional<IpAddress> ip = internal::AddressOf(a, ifa->ifa_family == AF_INET ? Family::kV4 : Family::kV6);
  if (!ip) return std::nullopt;
  AddressInfo info;
  info.prefix = IpPrefix(*ip, ifa->ifa_prefixlen);
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
  ifaddrmsg ifa{};
  ifa.ifa_family = family.has_value() ? AfOf(*family) : AF_UNSPEC;
  // With strict checking the kernel walks only this link's addresses: a
  // full dump grows with every container on the node (each veth has its
  // IPv6 link-local address), 6 ms with 1,000 of them.
  ifa.ifa_index = static_cast<uint32_t>(ifindex);
  ASSIGN_OR_RETURN(NlMsgPtr msg, internal::RequestWith(RTM_GETADDR, NLM_F_DUMP, ifa, what));
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

#include "client6.h"

#include <linux/if_addr.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "cni/net/addr.h"
#include "cni/net/netlink.h"
#include "cni/net/netns.h"
#include "cni/net/route.h"
#include "cni/net/sysctl.h"

namespace cni::dhcp {
namespace {

constexpr uint16_t kClientPort = 546;
constexpr uint16_t kServerPort = 547;
constexpr int kRtprotRa = 9;  // RTPROT_RA: a route the kernel learnt from an RA
constexpr absl::Duration kSolicitInterval = absl::Seconds(4);  // RFC 4861 RTR_SOLICITATION_INTERVAL

uint32_t U32(absl::string_view s, size_t at) {
  return (static_cast<uint32_t>(static_cast<uint8_t>(s[at])) << 24) |
         (static_cast<uint32_t>(static_cast<uint8_t>(s[at + 1])) << 16) |
         (static_cast<uint32_t>(static_cast<uint8_t>(s[at + 2])) << 8) | static_cast<uint8_t>(s[at + 3]);
}

net::IpAddress V6Of(const uint8_t* bytes) {
  std::array<uint8_t, 16> b{};
  std::memcpy(b.data(), bytes, 16);
  return net::IpAddress::V6(b);
}

sockaddr_in6 SockAddr(const net::IpAddress& ip, uint16_t port, int ifindex) {
  sockaddr_in6 sa{};
  sa.sin6_family = AF_INET6;
  sa.sin6_port = htons(port);
  std::memcpy(&sa.sin6_addr, ip.data(), 16);
  sa.sin6_scope_id = static_cast<uint32_t>(ifindex);
  return sa;
}

bool IsLinkLocal(const net::IpAddress& ip) { return ip.is_v6() && ip.data()[0] == 0xfe && (ip.data()[1] & 0xc0) == 0x80; }

double Jitter() {
  uint32_t r = 0;
  if (getrandom(&r, sizeof(r), 0) != sizeof(r)) return 0;
  return static_cast<double>(r) / 4294967295.0 * 2.0 - 1.0;  // [-1, 1]
}

int PollMs(absl::Time until) {
  absl::Duration left = until - absl::Now();
  if (left <= absl::ZeroDuration()) return 0;
  return static_cast<int>(std::min<int64_t>(absl::ToInt64Milliseconds(absl::Ceil(left, absl::Milliseconds(1))),
                                            60 * 60 * 1000));
}

ifreq IfReq(const std::string& name) {
  ifreq ifr{};
  std::memcpy(ifr.ifr_name, name.data(), std::min(name.size(), sizeof(ifr.ifr_name) - 1));
  return ifr;
}

// The interface's link-local address once duplicate address detection has
// passed; nullopt while it is tentative (or not there yet).
absl::StatusOr<std::optional<net::IpAddress>> UsableLinkLocal(net::NetlinkSocket& sock, int ifindex,
                                                              const std::string& ifname) {
  ASSIGN_OR_RETURN(std::vector<net::AddressInfo> list, net::ListAddresses(sock, ifindex, net::Family::kV6));
  for (const net::AddressInfo& a : list) {
    if (!IsLinkLocal(a.prefix.addr())) continue;
    if (a.flags & IFA_F_DADFAILED) {
      return Error(ErrorCode::kInternal, absl::StrCat("the link-local address ", a.prefix.addr().ToString(), " of \"",
                                                      ifname, "\" failed duplicate address detection"));
    }
    if (!(a.flags & IFA_F_TENTATIVE)) return std::optional<net::IpAddress>(a.prefix.addr());
  }
  return std::optional<net::IpAddress>();
}

}  // namespace

Json RouterAdvert::ToJson() const {
  Json p = Json::array(), r = Json::array();
  for (const Prefix& x : prefixes) p.push_back({{"prefix", x.prefix.ToString()}, {"onLink", x.on_link}});
  for (const RouteInfo& x : routes) r.push_back({{"prefix", x.prefix.ToString()}, {"lifetime", x.lifetime}});
  return {{"router", router.ToString()}, {"routerLifetime", router_lifetime}, {"prefixes", p}, {"routes", r}};
}

absl::StatusOr<RouterAdvert> RouterAdvert::FromJson(const Json& j) {
  try {
    RouterAdvert ra;
    ASSIGN_OR_RETURN(ra.router, net::IpAddress::Parse(j.at("router").get<std::string>()));
    ra.router_lifetime = j.at("routerLifetime").get<uint32_t>();
    for (const Json& x : j.at("prefixes")) {
      ASSIGN_OR_RETURN(net::IpPrefix p, net::IpPrefix::Parse(x.at("prefix").get<std::string>()));
      ra.prefixes.push_back({p, x.at("onLink").get<bool>()});
    }
    for (const Json& x : j.at("routes")) {
      ASSIGN_OR_RETURN(net::IpPrefix p, net::IpPrefix::Parse(x.at("prefix").get<std::string>()));
      ra.routes.push_back({p, x.at("lifetime").get<uint32_t>()});
    }
    return ra;
  } catch (const Json::exception& e) {
    return Error(ErrorCode::kDecodingFailure, absl::StrCat("router advertisement record: ", e.what()));
  }
}

std::optional<RouterAdvert> ParseRouterAdvert(absl::string_view icmp, const net::IpAddress& from) {
  // Type, code, checksum, hop limit, flags, router lifetime, reachable time, retrans timer.
  if (icmp.size() < 16 || static_cast<uint8_t>(icmp[0]) != ND_ROUTER_ADVERT || icmp[1] != 0) return std::nullopt;
  RouterAdvert ra;
  ra.router = from;
  ra.router_lifetime = (static_cast<uint32_t>(static_cast<uint8_t>(icmp[6])) << 8) | static_cast<uint8_t>(icmp[7]);
  for (size_t at = 16; at < icmp.size();) {
    if (icmp.size() - at < 2) return std::nullopt;
    const uint8_t type = static_cast<uint8_t>(icmp[at]);
    const size_t len = static_cast<size_t>(static_cast<uint8_t>(icmp[at + 1])) * 8;
    if (len == 0 || icmp.size() - at < len) return std::nullopt;  // RFC 4861 4.6: discard the RA
    absl::string_view o = icmp.substr(at, len);
    const auto* b = reinterpret_cast<const uint8_t*>(o.data());
    if (type == ND_OPT_PREFIX_INFORMATION && len == 32 && b[2] <= 128) {
      ra.prefixes.push_back({net::IpPrefix(V6Of(b + 16), b[2]).Network(), (b[3] & 0x80) != 0});
    } else if (type == 24 && len <= 24 && b[2] <= 128 && (len > 8 || b[2] == 0) && (len > 16 || b[2] <= 64)) {
      // RFC 4191 2.3: the prefix field holds only as many 8-octet units as needed.
      std::array<uint8_t, 16> prefix{};
      std::memcpy(prefix.data(), b + 8, len - 8);
      ra.routes.push_back({net::IpPrefix(net::IpAddress::V6(prefix), b[2]).Network(), U32(o, 4)});
    }
    at += len;
  }
  return ra;
}

std::string RouterSolicitation(const net::MacAddress& mac) {
  std::string rs(8, '\0');
  rs[0] = static_cast<char>(ND_ROUTER_SOLICIT);  // checksum: the kernel fills it in
  rs.push_back(static_cast<char>(ND_OPT_SOURCE_LINKADDR));
  rs.push_back(1);  // 8 octets
  rs.append(reinterpret_cast<const char*>(mac.bytes().data()), 6);
  return rs;
}

absl::StatusOr<Conn6> Conn6::Open(const std::string& netns_path, const std::string& ifname, bool solicit,
                                  absl::Time deadline, int cancel_fd) {
  ASSIGN_OR_RETURN(net::Netns ns, net::Netns::Open(netns_path));
  Conn6 c;
  c.ifname_ = ifname;
  RETURN_IF_ERROR(ns.Run([&]() -> absl::Status {
    c.udp_.reset(socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!c.udp_.valid()) return ErrnoError(errno, "opening an IPv6 datagram socket");
    if (solicit) {
      c.icmp_.reset(socket(AF_INET6, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, IPPROTO_ICMPV6));
      if (!c.icmp_.valid()) return ErrnoError(errno, "opening an ICMPv6 socket");
    }
    c.events_.reset(socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE));
    if (!c.events_.valid()) return ErrnoError(errno, "opening a netlink socket");
    sockaddr_nl nl{};
    nl.nl_family = AF_NETLINK;
    nl.nl_groups = RTMGRP_IPV6_IFADDR;
    if (bind(c.events_.get(), reinterpret_cast<sockaddr*>(&nl), sizeof(nl)) != 0) {
      return ErrnoError(errno, "subscribing to address notifications");
    }
    return absl::OkStatus();
  }));
  ifreq ifr = IfReq(ifname);
  if (ioctl(c.udp_.get(), SIOCGIFINDEX, &ifr) != 0) {
    int err = errno;
    absl::Status st = ErrnoError(err, absl::StrCat("looking up \"", ifname, "\" in ", netns_path));
    return err == ENODEV ? WithCode(st, ErrorCode::kUnknownContainer) : st;
  }
  c.ifindex_ = ifr.ifr_ifindex;
  ifr = IfReq(ifname);
  if (ioctl(c.udp_.get(), SIOCGIFHWADDR, &ifr) != 0) {
    return ErrnoError(errno, absl::StrCat("reading the link address of \"", ifname, "\""));
  }
  std::array<uint8_t, 6> mac{};
  std::memcpy(mac.data(), ifr.ifr_hwaddr.sa_data, 6);
  c.mac_ = net::MacAddress(mac);
  ASSIGN_OR_RETURN(net::NetlinkSocket sock, net::NetlinkSocket::OpenIn(ns));
  if (solicit) {
    // Before the link comes up, where it is still down: the kernel then
    // never acts on an RA of this link (see client6.h for why).
    // And IPv6 on, which the configuration asks for: a namespace whose
    // default is disable_ipv6 = 1 (as some runtimes make them) gives its
    // new interfaces no link-local address to talk from.
    for (const char* key : {"accept_ra", "autoconf", "disable_ipv6"}) {
      std::string path = absl::StrCat("net/ipv6/conf/", ifname, "/", key);
      absl::StatusOr<std::string> v = net::ReadSysctl(ns, path);
      if (!v.ok() || *v != "0") RETURN_IF_ERROR(net::WriteSysctl(ns, path, "0"));
    }
    // A link that was up already may have learnt a default route from an
    // RA: the result's own route would collide with it.
    ASSIGN_OR_RETURN(std::vector<net::RouteSpec> routes,
                     net::ListRoutes(sock, {.family = net::Family::kV6, .ifindex = c.ifindex_}));
    for (const net::RouteSpec& r : routes) {
      if (r.protocol == kRtprotRa) (void)net::DeleteRoute(sock, r);
    }
  }
  ifr = IfReq(ifname);
  if (ioctl(c.udp_.get(), SIOCGIFFLAGS, &ifr) != 0) {
    return ErrnoError(errno, absl::StrCat("reading the flags of \"", ifname, "\""));
  }
  if (!(ifr.ifr_flags & IFF_UP)) {
    ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP);
    if (ioctl(c.udp_.get(), SIOCSIFFLAGS, &ifr) != 0) {
      return ErrnoError(errno, absl::StrCat("setting \"", ifname, "\" up"));
    }
  }
  // The link-local address: once it has passed DAD (about 1-2 s after the
  // link came up). Every change of its flags is an RTM_NEWADDR.
  std::optional<net::IpAddress> local;
  for (;;) {
    ASSIGN_OR_RETURN(local, UsableLinkLocal(sock, c.ifindex_, ifname));
    if (local) break;
    pollfd fds[2] = {{c.events_.get(), POLLIN, 0}, {cancel_fd, POLLIN, 0}};
    int r = poll(fds, cancel_fd >= 0 ? 2 : 1, PollMs(deadline));
    if (r < 0 && errno != EINTR) return ErrnoError(errno, "waiting for the link-local address");
    if (cancel_fd >= 0 && (fds[1].revents & POLLIN)) return absl::CancelledError("lease stopped");
    if (r == 0 && absl::Now() >= deadline) {
      return Error(ErrorCode::kTryAgainLater,
                   absl::StrCat("no usable IPv6 link-local address on \"", ifname, "\" (still tentative?)"));
    }
    char buf[8192];
    while (recv(c.events_.get(), buf, sizeof(buf), MSG_DONTWAIT) > 0) {
    }
  }
  int one = 1;
  setsockopt(c.udp_.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  int index = c.ifindex_;
  setsockopt(c.udp_.get(), IPPROTO_IPV6, IPV6_MULTICAST_IF, &index, sizeof(index));
  int zero = 0;
  setsockopt(c.udp_.get(), IPPROTO_IPV6, IPV6_MULTICAST_LOOP, &zero, sizeof(zero));
  sockaddr_in6 local_sa = SockAddr(*local, kClientPort, c.ifindex_);
  if (bind(c.udp_.get(), reinterpret_cast<sockaddr*>(&local_sa), sizeof(local_sa)) != 0) {
    return ErrnoError(errno, absl::StrCat("binding [", local->ToString(), "%", ifname, "]:546"));
  }
  if (solicit) {
    icmp6_filter filter;
    ICMP6_FILTER_SETBLOCKALL(&filter);
    ICMP6_FILTER_SETPASS(ND_ROUTER_ADVERT, &filter);
    setsockopt(c.icmp_.get(), IPPROTO_ICMPV6, ICMP6_FILTER, &filter, sizeof(filter));
    if (setsockopt(c.icmp_.get(), SOL_SOCKET, SO_BINDTODEVICE, ifname.c_str(),
                   static_cast<socklen_t>(ifname.size())) != 0) {
      return ErrnoError(errno, absl::StrCat("binding an ICMPv6 socket to \"", ifname, "\""));
    }
    int hops = 255;  // RFC 4861: neighbour discovery is sent with 255, and only such is believed
    setsockopt(c.icmp_.get(), IPPROTO_IPV6, IPV6_MULTICAST_HOPS, &hops, sizeof(hops));
    setsockopt(c.icmp_.get(), IPPROTO_IPV6, IPV6_MULTICAST_IF, &index, sizeof(index));
    setsockopt(c.icmp_.get(), IPPROTO_IPV6, IPV6_RECVHOPLIMIT, &one, sizeof(one));
    RETURN_IF_ERROR(c.Solicit());
  }
  c.nl_.emplace(std::move(sock));
  return c;
}

absl::StatusOr<bool> Conn6::Duplicate(const net::IpAddress& addr, absl::Time deadline, int cancel_fd) {
  const net::IpPrefix host(addr, 128);
  absl::Status added = net::AddAddress(*nl_, ifindex_, host, {.flags = IFA_F_NOPREFIXROUTE});
  if (absl::IsAlreadyExists(added)) return false;  // configured already (an ADD repeated)
  RETURN_IF_ERROR(added);
  absl::StatusOr<bool> duplicate;
  for (;;) {
    absl::StatusOr<std::vector<net::AddressInfo>> list = net::ListAddresses(*nl_, ifindex_, net::Family::kV6);
    if (!list.ok()) {
      duplicate = list.status();
      break;
    }
    std::optional<uint32_t> flags;
    for (const net::AddressInfo& a : *list) {
      if (a.prefix.addr() == addr) flags = a.flags;
    }
    if (!flags) {
      duplicate = Error(ErrorCode::kInternal, absl::StrCat(addr.ToString(), " vanished from \"", ifname_, "\""));
      break;
    }
    if (*flags & IFA_F_DADFAILED) {
      duplicate = true;
      break;
    }
    if (!(*flags & IFA_F_TENTATIVE)) {
      duplicate = false;
      break;
    }
    pollfd fds[2] = {{events_.get(), POLLIN, 0}, {cancel_fd, POLLIN, 0}};
    int r = poll(fds, cancel_fd >= 0 ? 2 : 1, PollMs(deadline));
    if (cancel_fd >= 0 && (fds[1].revents & POLLIN)) {
      duplicate = absl::CancelledError("lease stopped");
      break;
    }
    if (r == 0 && absl::Now() >= deadline) {
      duplicate = Error(ErrorCode::kTryAgainLater,
                        absl::StrCat("duplicate address detection of ", addr.ToString(), " did not end in time"));
      break;
    }
    char buf[8192];
    while (recv(events_.get(), buf, sizeof(buf), MSG_DONTWAIT) > 0) {
    }
  }
  // The interface plugin configures the address from the result.
  (void)net::DeleteAddress(*nl_, ifindex_, host);
  return duplicate;
}

absl::Status Conn6::Solicit() {
  std::string rs = RouterSolicitation(mac_);
  sockaddr_in6 to = SockAddr(*net::IpAddress::Parse("ff02::2"), 0, ifindex_);
  if (sendto(icmp_.get(), rs.data(), rs.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof(to)) < 0) {
    return ErrnoError(errno, absl::StrCat("sending a router solicitation on \"", ifname_, "\""));
  }
  return absl::OkStatus();
}

void Conn6::DrainIcmp() {
  if (!icmp_.valid()) return;
  char buf[2048];
  alignas(cmsghdr) char control[256];
  for (;;) {
    sockaddr_in6 from{};
    iovec iov{buf, sizeof(buf)};
    msghdr mh{};
    mh.msg_name = &from;
    mh.msg_namelen = sizeof(from);
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = control;
    mh.msg_controllen = sizeof(control);
    ssize_t n = recvmsg(icmp_.get(), &mh, MSG_DONTWAIT);
    if (n < 0) return;
    int hop_limit = -1;
    for (cmsghdr* cm = CMSG_FIRSTHDR(&mh); cm != nullptr; cm = CMSG_NXTHDR(&mh, cm)) {
      if (cm->cmsg_level == IPPROTO_IPV6 && cm->cmsg_type == IPV6_HOPLIMIT) {
        std::memcpy(&hop_limit, CMSG_DATA(cm), sizeof(hop_limit));
      }
    }
    net::IpAddress src = V6Of(reinterpret_cast<const uint8_t*>(&from.sin6_addr));
    if (hop_limit != 255 || !IsLinkLocal(src)) continue;  // RFC 4861 6.1.2: not from a router on this link
    std::optional<RouterAdvert> ra = ParseRouterAdvert(absl::string_view(buf, static_cast<size_t>(n)), src);
    if (!ra) continue;
    // A default router wins over one that is not; the same router's newer
    // RA replaces its older one.
    if (!ra_ || ra_->router == ra->router || (ra_->router_lifetime == 0 && ra->router_lifetime > 0)) ra_ = *ra;
  }
}

absl::Status Conn6::Send(const v6::Message& msg) {
  std::string wire = msg.Encode();
  sockaddr_in6 to = SockAddr(*net::IpAddress::Parse("ff02::1:2"), kServerPort, ifindex_);
  if (sendto(udp_.get(), wire.data(), wire.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof(to)) < 0) {
    return ErrnoError(errno, absl::StrCat("sending a DHCPv6 message on \"", ifname_, "\""));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<v6::Message>> Conn6::Receive(absl::Time deadline,
                                                          const std::function<bool(const v6::Message&)>& match,
                                                          int cancel_fd) {
  char buf[65536];
  for (;;) {
    pollfd fds[3] = {{udp_.get(), POLLIN, 0}, {cancel_fd, POLLIN, 0}, {icmp_.valid() ? icmp_.get() : -1, POLLIN, 0}};
    int r = poll(fds, 3, PollMs(deadline));
    if (r < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, "waiting for a DHCPv6 reply");
    }
    if (fds[1].revents & POLLIN) return absl::CancelledError("lease stopped");
    if (fds[2].revents & POLLIN) DrainIcmp();
    if (fds[0].revents & POLLIN) {
      ssize_t n = recv(udp_.get(), buf, sizeof(buf), MSG_DONTWAIT);
      if (n > 0) {
        absl::StatusOr<v6::Message> msg = v6::Message::Decode(absl::string_view(buf, static_cast<size_t>(n)));
        if (msg.ok() && match(*msg)) return std::optional<v6::Message>(*std::move(msg));
      }
    }
    if (r == 0 && absl::Now() >= deadline) return std::optional<v6::Message>();
  }
}

absl::Status Conn6::WaitRouter(absl::Time deadline, int cancel_fd) {
  const absl::Time start = absl::Now();
  absl::Time next_solicit = start + kSolicitInterval;
  for (;;) {
    DrainIcmp();
    if (ra_) return absl::OkStatus();
    absl::Time now = absl::Now();
    if (now >= deadline) {
      return Error(ErrorCode::kTryAgainLater, absl::StrCat("no IPv6 router advertisement on \"", ifname_, "\""));
    }
    if (now >= next_solicit) {
      (void)Solicit();
      next_solicit = now + kSolicitInterval;
    }
    pollfd fds[2] = {{icmp_.get(), POLLIN, 0}, {cancel_fd, POLLIN, 0}};
    int r = poll(fds, 2, PollMs(std::min(deadline, next_solicit)));
    if (r < 0 && errno != EINTR) return ErrnoError(errno, "waiting for a router advertisement");
    if (fds[1].revents & POLLIN) return absl::CancelledError("lease stopped");
  }
}

absl::StatusOr<v6::Message> Exchange6(Conn6& conn, v6::Message msg,
                                      const std::function<bool(const v6::Message&)>& match, absl::Time deadline,
                                      const Timing& timing, absl::Duration irt, absl::Duration mrt, int cancel_fd,
                                      absl::string_view what,
                                      const std::function<std::optional<v6::Message>()>& on_timeout) {
  const absl::Time start = absl::Now();
  const absl::Duration cap = std::min({mrt, timing.resend_max, timing.timeout});
  absl::Duration rt = std::min(irt * (1 + 0.1 * Jitter()), cap);
  for (;;) {
    v6::Message m = msg;
    int64_t centis = std::min<int64_t>(absl::ToInt64Milliseconds(absl::Now() - start) / 10, 0xffff);
    std::string elapsed = {static_cast<char>(centis >> 8), static_cast<char>(centis & 0xff)};
    m.Add(v6::opt::kElapsedTime, elapsed);
    RETURN_IF_ERROR(conn.Send(m));
    ASSIGN_OR_RETURN(std::optional<v6::Message> reply, conn.Receive(std::min(deadline, absl::Now() + rt), match, cancel_fd));
    if (reply) return *std::move(reply);
    if (on_timeout) {
      if (std::optional<v6::Message> chosen = on_timeout()) return *std::move(chosen);
    }
    if (absl::Now() >= deadline) {
      return Error(ErrorCode::kTryAgainLater,
                   absl::StrCat("no DHCPv6 reply to ", what, " on \"", conn.ifname(), "\" within ",
                                absl::FormatDuration(absl::Trunc(absl::Now() - start, absl::Milliseconds(100)))));
    }
    rt = std::min(2 * rt * (1 + 0.1 * Jitter()), cap);
  }
}

}  // namespace cni::dhcp

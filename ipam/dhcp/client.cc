#include "client.h"

#include <arpa/inet.h>
#include <linux/filter.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <linux/sockios.h>
#include <net/if_arp.h>
#include <netinet/in.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "cni/net/netns.h"

namespace cni::dhcp {
namespace {

// Classic BPF on an IPv4 packet (SOCK_DGRAM: offset 0 is the IP header):
// accept unfragmented UDP to port 68, drop everything else.
constexpr sock_filter kFilter[] = {
    BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 9),                 // protocol
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_UDP, 0, 5),
    BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 6),                 // flags + fragment offset
    BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x1fff, 3, 0),
    BPF_STMT(BPF_LDX | BPF_B | BPF_MSH, 0),                // X = header length
    BPF_STMT(BPF_LD | BPF_H | BPF_IND, 2),                 // UDP destination port
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 68, 0, 1),
    BPF_STMT(BPF_RET | BPF_K, 0x40000),
    BPF_STMT(BPF_RET | BPF_K, 0),
};

ifreq IfReq(const std::string& name) {
  ifreq ifr{};
  std::memcpy(ifr.ifr_name, name.data(), std::min(name.size(), sizeof(ifr.ifr_name) - 1));
  return ifr;
}

double Jitter() {
  uint32_t r = 0;
  if (getrandom(&r, sizeof(r), 0) != sizeof(r)) return 0;
  return static_cast<double>(r) / 4294967295.0 * 2.0 - 1.0;  // [-1, 1]
}

}  // namespace

net::IpAddress Broadcast() { return net::IpAddress::V4({255, 255, 255, 255}); }
net::MacAddress BroadcastMac() { return net::MacAddress({0xff, 0xff, 0xff, 0xff, 0xff, 0xff}); }

absl::StatusOr<Conn> Conn::Open(const std::string& netns_path, const std::string& ifname) {
  ASSIGN_OR_RETURN(net::Netns ns, net::Netns::Open(netns_path));
  Conn c;
  c.ifname_ = ifname;
  RETURN_IF_ERROR(ns.Run([&]() -> absl::Status {
    // Protocol 0: the socket receives nothing until bind() names ETH_P_IP
    // below, after the filter is attached (and binding a socket that is
    // already receiving waits for an RCU grace period, ~10 ms).
    c.packet_.reset(socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (!c.packet_.valid()) return ErrnoError(errno, "opening a packet socket");
    c.inet_.reset(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (!c.inet_.valid()) return ErrnoError(errno, "opening a datagram socket");
    c.udp_.reset(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!c.udp_.valid()) return ErrnoError(errno, "opening a datagram socket");
    return absl::OkStatus();
  }));
  // From here on the sockets act in the container namespace, whichever thread uses them.
  ifreq ifr = IfReq(ifname);
  if (ioctl(c.inet_.get(), SIOCGIFINDEX, &ifr) != 0) {
    int err = errno;
    absl::Status st = ErrnoError(err, absl::StrCat("looking up \"", ifname, "\" in ", netns_path));
    return err == ENODEV ? WithCode(st, ErrorCode::kUnknownContainer) : st;
  }
  c.ifindex_ = ifr.ifr_ifindex;
  ifr = IfReq(ifname);
  if (ioctl(c.inet_.get(), SIOCGIFHWADDR, &ifr) != 0) {
    return ErrnoError(errno, absl::StrCat("reading the link address of \"", ifname, "\""));
  }
  std::array<uint8_t, 6> mac{};
  std::memcpy(mac.data(), ifr.ifr_hwaddr.sa_data, 6);
  c.mac_ = net::MacAddress(mac);
  ifr = IfReq(ifname);
  if (ioctl(c.inet_.get(), SIOCGIFFLAGS, &ifr) != 0) {
    return ErrnoError(errno, absl::StrCat("reading the flags of \"", ifname, "\""));
  }
  if (!(ifr.ifr_flags & IFF_UP)) {
    ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP);
    if (ioctl(c.inet_.get(), SIOCSIFFLAGS, &ifr) != 0) {
      return ErrnoError(errno, absl::StrCat("setting \"", ifname, "\" up"));
    }
  }
  sock_fprog prog{static_cast<unsigned short>(std::size(kFilter)), const_cast<sock_filter*>(kFilter)};
  if (setsockopt(c.packet_.get(), SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) != 0) {
    return ErrnoError(errno, "attaching the DHCP filter");
  }
  sockaddr_ll sll{};
  sll.sll_family = AF_PACKET;
  sll.sll_protocol = htons(ETH_P_IP);
  sll.sll_ifindex = c.ifindex_;
  if (bind(c.packet_.get(), reinterpret_cast<sockaddr*>(&sll), sizeof(sll)) != 0) {
    return ErrnoError(errno, absl::StrCat("binding a packet socket to \"", ifname, "\""));
  }
  return c;
}

void Conn::CloseInBackground(Conn conn) {
  std::thread([c = std::move(conn)]() mutable { Conn drop = std::move(c); }).detach();
}

absl::Status Conn::Send(const Message& msg, const net::IpAddress& src, const net::IpAddress& dst,
                        const net::MacAddress& dst_mac) {
  std::string frame = FrameUdp(src, dst, msg.Encode());
  sockaddr_ll sll{};
  sll.sll_family = AF_PACKET;
  sll.sll_protocol = htons(ETH_P_IP);
  sll.sll_ifindex = ifindex_;
  sll.sll_halen = 6;
  std::memcpy(sll.sll_addr, dst_mac.bytes().data(), 6);
  ssize_t n = sendto(packet_.get(), frame.data(), frame.size(), 0, reinterpret_cast<sockaddr*>(&sll), sizeof(sll));
  if (n < 0) return ErrnoError(errno, absl::StrCat("sending DHCP ", Describe(msg), " on \"", ifname_, "\""));
  return absl::OkStatus();
}

absl::StatusOr<bool> Conn::SendUnicast(const Message& msg, const net::IpAddress& src, int prefix_len,
                                       const net::IpAddress& dst, const net::MacAddress& fallback_mac) {
  auto kernel_path = [&]() -> bool {
    if (!udp_bound_) {
      // Only from an address the interface has: a socket bound to the
      // device binds to any address and, with none configured, the kernel
      // sends from 0.0.0.0 (which a server ignores).
      if (!HasAddress(src)) return false;
      // Out of this interface only, from the lease's address and the
      // client port (a server answers a renewal there). Another client of
      // the container on port 68 is no reason to fail: share the port.
      int one = 1;
      setsockopt(udp_.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
      if (setsockopt(udp_.get(), SOL_SOCKET, SO_BINDTODEVICE, ifname_.c_str(),
                     static_cast<socklen_t>(ifname_.size())) != 0) {
        return false;
      }
      sockaddr_in local{};
      local.sin_family = AF_INET;
      local.sin_port = htons(68);
      std::memcpy(&local.sin_addr, src.data(), 4);
      // EADDRNOTAVAIL: the address is not (or no longer) on the interface.
      if (bind(udp_.get(), reinterpret_cast<sockaddr*>(&local), sizeof(local)) != 0) return false;
      udp_bound_ = true;
    }
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(67);
    std::memcpy(&to.sin_addr, dst.data(), 4);
    std::string payload = msg.Encode();
    return sendto(udp_.get(), payload.data(), payload.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof(to)) ==
           static_cast<ssize_t>(payload.size());
  };
  if (kernel_path()) return true;
  bool on_link = net::IpPrefix(src, prefix_len).Contains(dst);
  RETURN_IF_ERROR(Send(msg, src, dst, on_link ? BroadcastMac() : fallback_mac));
  return false;
}

bool Conn::HasAddress(const net::IpAddress& ip) const {
  std::vector<ifreq> reqs(64);
  ifconf conf{};
  conf.ifc_len = static_cast<int>(reqs.size() * sizeof(ifreq));
  conf.ifc_req = reqs.data();
  if (ioctl(inet_.get(), SIOCGIFCONF, &conf) != 0) return true;  // cannot tell: let the kernel try
  for (size_t i = 0; i < static_cast<size_t>(conf.ifc_len) / sizeof(ifreq); ++i) {
    // An address's label is the interface's name, or "<name>:<suffix>".
    std::string label(reqs[i].ifr_name, strnlen(reqs[i].ifr_name, IFNAMSIZ));
    if (label != ifname_ && label.rfind(ifname_ + ":", 0) != 0) continue;
    const auto* sin = reinterpret_cast<const sockaddr_in*>(&reqs[i].ifr_addr);
    if (std::memcmp(&sin->sin_addr, ip.data(), 4) == 0) return true;
  }
  return false;
}

void Conn::ForgetNeighbour(const net::IpAddress& ip) {
  arpreq req{};
  auto* pa = reinterpret_cast<sockaddr_in*>(&req.arp_pa);
  pa->sin_family = AF_INET;
  std::memcpy(&pa->sin_addr, ip.data(), 4);
  std::memcpy(req.arp_dev, ifname_.data(), std::min(ifname_.size(), sizeof(req.arp_dev) - 1));
  if (ioctl(inet_.get(), SIOCGARP, &req) != 0 || (req.arp_flags & ATF_PERM)) return;
  (void)ioctl(inet_.get(), SIOCDARP, &req);
}

bool Conn::WaitSent(absl::Time deadline) {
  for (;;) {
    int queued = 0;
    if (ioctl(udp_.get(), SIOCOUTQ, &queued) != 0 || queued == 0) return true;
    if (absl::Now() >= deadline) return false;
    absl::SleepFor(absl::Milliseconds(5));
  }
}

absl::StatusOr<std::optional<Reply>> Conn::Receive(absl::Time deadline,
                                                   const std::function<bool(const Message&)>& match,
                                                   int cancel_fd) {
  std::string buf(65536, '\0');
  for (;;) {
    absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) return std::optional<Reply>();
    pollfd fds[2] = {{packet_.get(), POLLIN, 0}, {cancel_fd, POLLIN, 0}};
    int ms = static_cast<int>(std::min<int64_t>(absl::ToInt64Milliseconds(absl::Ceil(left, absl::Milliseconds(1))),
                                                 60 * 60 * 1000));
    int r = poll(fds, cancel_fd >= 0 ? 2 : 1, ms);
    if (r < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, "waiting for a DHCP reply");
    }
    if (cancel_fd >= 0 && (fds[1].revents & POLLIN)) return absl::CancelledError("lease stopped");
    if (!(fds[0].revents & POLLIN)) continue;
    sockaddr_ll from{};
    socklen_t from_len = sizeof(from);
    ssize_t n = recvfrom(packet_.get(), buf.data(), buf.size(), MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&from),
                         &from_len);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return ErrnoError(errno, absl::StrCat("receiving on \"", ifname_, "\""));
    }
    std::optional<UdpDatagram> udp = UnframeUdp(absl::string_view(buf.data(), static_cast<size_t>(n)));
    if (!udp) continue;
    absl::StatusOr<Message> msg = Message::Decode(udp->payload);
    if (!msg.ok() || msg->op != 2 || !match(*msg)) continue;
    std::array<uint8_t, 6> mac{};
    if (from.sll_halen == 6) std::memcpy(mac.data(), from.sll_addr, 6);
    return std::optional<Reply>(Reply{*std::move(msg), udp->src, net::MacAddress(mac)});
  }
}

absl::Status Conn::SetDown() {
  ifreq ifr = IfReq(ifname_);
  if (ioctl(inet_.get(), SIOCGIFFLAGS, &ifr) != 0) return ErrnoError(errno, "reading link flags");
  ifr.ifr_flags = static_cast<short>(ifr.ifr_flags & ~IFF_UP);
  if (ioctl(inet_.get(), SIOCSIFFLAGS, &ifr) != 0) return ErrnoError(errno, "setting the link down");
  return absl::OkStatus();
}

absl::Duration RetransmitDelay(int n, const Timing& timing) {
  absl::Duration base = absl::Seconds(2);
  if (n >= 4) {
    base = absl::Seconds(4);
    for (int i = 4; i < n && base < timing.resend_max; ++i) base *= 2;
    base = std::min(base, timing.resend_max);
  }
  absl::Duration d = base + absl::Seconds(Jitter());
  return std::max(absl::Milliseconds(500), std::min(d, timing.timeout));
}

absl::StatusOr<Reply> Exchange(Conn& conn, Message msg, const std::function<absl::Status(const Message&)>& send,
                               const std::function<bool(const Message&)>& match, absl::Time deadline,
                               const Timing& timing, int cancel_fd, absl::string_view what) {
  absl::Time start = absl::Now();
  for (int n = 0;; ++n) {
    absl::Time now = absl::Now();
    if (now >= deadline) {
      return Error(ErrorCode::kTryAgainLater,
                   absl::StrCat("no DHCP reply to ", what, " on \"", conn.ifname(), "\" within ",
                                absl::FormatDuration(absl::Trunc(now - start, absl::Milliseconds(100))), " (", n,
                                " sent)"));
    }
    msg.secs = static_cast<uint16_t>(std::min<int64_t>(absl::ToInt64Seconds(now - start), 65535));
    RETURN_IF_ERROR(send(msg));
    absl::Time wait_until = std::min(deadline, absl::Now() + RetransmitDelay(n, timing));
    ASSIGN_OR_RETURN(std::optional<Reply> reply, conn.Receive(wait_until, match, cancel_fd));
    if (reply) return *std::move(reply);
  }
}

}  // namespace cni::dhcp

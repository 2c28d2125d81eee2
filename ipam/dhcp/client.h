// The DHCP client's transport: a packet socket on one interface of a container
// namespace (opened on a short-lived thread that enters the namespace; the
// socket is then driven from any thread), and one request/reply exchange with
// RFC 2131's retransmission back-off.
//
// A packet socket (AF_PACKET, SOCK_DGRAM, IPv4) sends and receives before the
// interface has an address, sees the server's reply whether it is broadcast or
// unicast to the offered address, and tells the server's link address, to
// which renewals are then unicast. A classic BPF filter passes only UDP to
// port 68.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cni/base/fs.h"
#include "cni/base/ip.h"
#include "packet.h"

namespace cni::dhcp {

// The daemon's flags that shape every exchange.
struct Timing {
  absl::Duration timeout = absl::Seconds(10);          // -timeout: longest wait for the reply to one transmission
  absl::Duration resend_max = absl::Seconds(62);       // -resendmax: longest back-off between transmissions
  absl::Duration resend_timeout = absl::Seconds(208);  // -resendtimeout: give up an exchange after this
  bool broadcast = false;                              // -broadcast: ask servers to broadcast their replies
};

// A reply and where it came from.
struct Reply {
  Message msg;
  net::IpAddress from_ip;
  net::MacAddress from_mac;
};

// A packet socket on `ifname` in the namespace at `netns_path`.
class Conn {
 public:
  // Opens the namespace and, on a thread inside it, the sockets; brings the
  // link up when it is down (as upstream does). A missing namespace or
  // interface is NotFound (code 3).
  static absl::StatusOr<Conn> Open(const std::string& netns_path, const std::string& ifname);

  const net::MacAddress& mac() const { return mac_; }
  const std::string& ifname() const { return ifname_; }

  // Sends `msg` in an IPv4/UDP frame from `src` to `dst`, link address `dst_mac`.
  absl::Status Send(const Message& msg, const net::IpAddress& src, const net::IpAddress& dst,
                    const net::MacAddress& dst_mac);
  // Sends `msg` from `src`, the lease's address, port 68 to the server `dst`
  // port 67 through the container's own UDP stack: its routes and neighbour
  // resolution find the server's current link address (a bridge's MAC
  // changes with its ports, a failover server has its own). When that path
  // is closed (the address is no longer configured, no route), the frame
  // goes through the packet socket instead: link broadcast when `dst` is
  // on-link per `prefix_len` (every host sees it, the server takes it), else
  // to `fallback_mac`, the last known next hop. Returns whether the kernel
  // took it (then WaitSent applies).
  absl::StatusOr<bool> SendUnicast(const Message& msg, const net::IpAddress& src, int prefix_len,
                                   const net::IpAddress& dst, const net::MacAddress& fallback_mac);
  // Forgets the interface's learnt (not permanent) neighbour entry for
  // `ip`, so that the next datagram to it resolves its link address anew:
  // an entry still thought reachable may hold a MAC the server (or router)
  // no longer has, and a RELEASE gets no second chance.
  void ForgetNeighbour(const net::IpAddress& ip);
  // Whether `ip` is one of the interface's IPv4 addresses.
  bool HasAddress(const net::IpAddress& ip) const;
  // Waits until what SendUnicast gave the kernel has left the container
  // (resolved and sent, or dropped) or `deadline` passes (false): the
  // kernel queues a datagram while it resolves the next hop, and deleting
  // the interface right after would drop it unsent.
  bool WaitSent(absl::Time deadline);
  // Waits for a DHCP reply that `match` accepts until `deadline`. nullopt at
  // the deadline; Cancelled when `cancel_fd` (an eventfd, -1 for none) becomes readable.
  absl::StatusOr<std::optional<Reply>> Receive(absl::Time deadline, const std::function<bool(const Message&)>& match,
                                               int cancel_fd);
  // Closes `conn` on a short-lived thread: closing a packet socket waits for
  // an RCU grace period (~10 ms), which an ADD or DEL need not wait for.
  static void CloseInBackground(Conn conn);
  // Takes the link down (a lease that expired unrenewed, as upstream).
  absl::Status SetDown();

 private:
  Conn() = default;
 public:
  Conn(Conn&&) noexcept = default;
  Conn& operator=(Conn&&) noexcept = default;

 private:
  UniqueFd packet_;  // AF_PACKET on the interface
  UniqueFd inet_;    // AF_INET datagram socket of the namespace, for interface ioctls
  UniqueFd udp_;     // AF_INET datagram socket of the namespace, for unicast to the server
  bool udp_bound_ = false;
  int ifindex_ = 0;
  std::string ifname_;
  net::MacAddress mac_;
};

// The address every broadcast goes to, and its link address.
net::IpAddress Broadcast();
net::MacAddress BroadcastMac();

// The wait after the n-th transmission (0-based): 2 s four times (fast
// retries), then 4 s doubling up to resend_max, each +/- up to 1 s of jitter,
// never more than `timeout`.
absl::Duration RetransmitDelay(int n, const Timing& timing);

// Sends `msg` with `send` and resends it (same xid, growing "secs") on
// the RetransmitDelay schedule until a reply `match` accepts arrives. Fails
// with code 11 when `deadline` passes first (the message names `what`), and
// Cancelled when `cancel_fd` fires.
absl::StatusOr<Reply> Exchange(Conn& conn, Message msg, const std::function<absl::Status(const Message&)>& send,
                               const std::function<bool(const Message&)>& match, absl::Time deadline,
                               const Timing& timing, int cancel_fd, absl::string_view what);

}  // namespace cni::dhcp

// The DHCPv6 client's transport (RFC 8415) and the router advertisements
// (RFC 4861, 4191) that give an IPv6 lease its routes, on one interface of a
// container namespace.
//
// DHCPv6 carries no gateway: the router, the default route, the on-link
// prefix and RFC 4191 routes come from the link's router advertisements,
// which the client reads itself from a raw ICMPv6 socket. The kernel is told
// not to act on them (accept_ra = 0, autoconf = 0 on the interface): the CNI
// result is then the one source of the interface's IPv6 routes, the plugin
// that applies it does not collide with a kernel-learnt default route, and
// no SLAAC address appears beside the leased one.
//
// Messages go from the interface's link-local address, port 546, to
// All_DHCP_Relay_Agents_and_Servers (ff02::1:2) port 547, through the
// container's own UDP stack. The link-local address must have finished
// duplicate address detection first (a tentative address neither sends nor
// receives): Open waits for that on the namespace's address notifications.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client.h"
#include "cni/base/fs.h"
#include "cni/base/ip.h"
#include "cni/base/json.h"
#include "cni/net/netlink.h"
#include "packet6.h"

namespace cni::dhcp {

// What a router advertisement tells a host.
struct RouterAdvert {
  net::IpAddress router;         // its link-local source
  uint32_t router_lifetime = 0;  // seconds; 0: not a default router
  struct Prefix {
    net::IpPrefix prefix;
    bool on_link = false;     // L flag
  };
  std::vector<Prefix> prefixes;  // prefix information options (type 3)
  struct RouteInfo {
    net::IpPrefix prefix;
    uint32_t lifetime = 0;       // seconds; 0: withdrawn
  };
  std::vector<RouteInfo> routes;  // route information options (RFC 4191, type 24)

  Json ToJson() const;
  static absl::StatusOr<RouterAdvert> FromJson(const Json& j);
};

// Parses an ICMPv6 router advertisement (from its ICMPv6 header on) sent by
// `from`. nullopt for anything else or a malformed one (an option whose
// length runs past the end, a zero-length option).
std::optional<RouterAdvert> ParseRouterAdvert(absl::string_view icmp, const net::IpAddress& from);

// A router solicitation with the source link-layer address option.
std::string RouterSolicitation(const net::MacAddress& mac);

// DHCPv6's and the router solicitation's sockets on `ifname` in a namespace.
class Conn6 {
 public:
  // Opens the namespace and the sockets, brings the link up if it is down,
  // turns the kernel's own RA processing off on the interface (and drops the
  // routes it already learnt from RAs), and waits (until `deadline`, or
  // `cancel_fd`) until the interface's link-local address is usable. With
  // `solicit`, a router solicitation goes out at once and RAs are collected
  // from then on (ra()). A missing namespace or interface is code 3; no
  // usable link-local address by the deadline is code 11.
  static absl::StatusOr<Conn6> Open(const std::string& netns_path, const std::string& ifname, bool solicit,
                                    absl::Time deadline, int cancel_fd);

  const net::MacAddress& mac() const { return mac_; }
  const std::string& ifname() const { return ifname_; }
  // The first router advertisement with a non-zero router lifetime, else
  // the latest one, seen so far.
  const std::optional<RouterAdvert>& ra() const { return ra_; }

  // Sends `msg` to ff02::1:2 port 547.
  absl::Status Send(const v6::Message& msg);
  // Waits for a DHCPv6 message `match` accepts until `deadline`, reading
  // RAs meanwhile. nullopt at the deadline; Cancelled when `cancel_fd` fires.
  absl::StatusOr<std::optional<v6::Message>> Receive(absl::Time deadline,
                                                     const std::function<bool(const v6::Message&)>& match,
                                                     int cancel_fd);
  // Duplicate address detection of `addr` before it is handed out: added
  // to the interface (/128, no prefix route) for the kernel to probe, and
  // removed again once DAD has its answer (true: another node has it).
  // An address the interface has already is not probed (false).
  absl::StatusOr<bool> Duplicate(const net::IpAddress& addr, absl::Time deadline, int cancel_fd);
  // Waits until an RA from a default router has arrived (soliciting again
  // every 4 s, RFC 4861's interval), or `deadline`: code 11 then.
  absl::Status WaitRouter(absl::Time deadline, int cancel_fd);

  Conn6(Conn6&&) noexcept = default;
  Conn6& operator=(Conn6&&) noexcept = default;

 private:
  Conn6() = default;
  // Reads what the ICMPv6 socket holds, keeping RAs.
  void DrainIcmp();
  absl::Status Solicit();

  UniqueFd udp_;   // AF_INET6 datagram socket bound to [link-local%if]:546
  UniqueFd icmp_;  // raw ICMPv6 socket (RAs only), or none without `solicit`
  UniqueFd events_;  // the namespace's IPv6 address notifications
  std::optional<net::NetlinkSocket> nl_;
  int ifindex_ = 0;
  std::string ifname_;
  net::MacAddress mac_;
  std::optional<RouterAdvert> ra_;
};

// RFC 8415's retransmission for one exchange: the first wait `irt`, then
// doubling (+/- 10 % jitter) up to `mrt` (and never more than the daemon's
// -resendmax), until `deadline` (code 11 naming `what`). The elapsed time
// option is added to every transmission. `on_timeout`, if given, is asked
// whenever a transmission's wait ends without a match (and at the
// deadline): a message it returns ends the exchange as the answer.
absl::StatusOr<v6::Message> Exchange6(Conn6& conn, v6::Message msg,
                                      const std::function<bool(const v6::Message&)>& match, absl::Time deadline,
                                      const Timing& timing, absl::Duration irt, absl::Duration mrt, int cancel_fd,
                                      absl::string_view what,
                                      const std::function<std::optional<v6::Message>()>& on_timeout = nullptr);

}  // namespace cni::dhcp

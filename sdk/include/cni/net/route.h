// Routes through an rtnetlink socket: add, replace, delete, list.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cni/base/ip.h"
#include "cni/net/netlink.h"

namespace cni::net {

// One path of a multipath (ECMP) route.
struct Nexthop {
  std::optional<IpAddress> gw;  // gateway; none: a device path
  int ifindex = 0;              // output device (0: none)
  int weight = 1;  // 1..256 (sent as rtnh_hops = weight - 1)
  friend bool operator==(const Nexthop&, const Nexthop&) = default;
};

// A route. Unset optional fields are left to the kernel (add) or match
// anything (delete).
struct RouteSpec {
  IpPrefix dst;                      // 0.0.0.0/0 or ::/0 for a default route
  std::optional<IpAddress> gw;       // single-path gateway
  int ifindex = 0;                   // single-path output device (0: none)
  std::vector<Nexthop> multipath;    // when non-empty, replaces gw/ifindex
  // RT_SCOPE_*. On add, unset means: link scope when no path has a gateway
  // (what `ip route` does), else universe.
  std::optional<int> scope;
  int table = 0;                     // 0: main table (254)
  std::optional<uint32_t> priority;  // metric
  std::optional<IpAddress> src;      // preferred source (RTA_PREFSRC)
  std::optional<int> mtu;            // RTAX_MTU
  std::optional<int> advmss;         // RTAX_ADVMSS
  // RTPROT_*. On add, unset means RTPROT_BOOT, as upstream's netlink library
  // sends. On delete, unset matches any protocol (so a "proto kernel" subnet
  // route can be removed).
  std::optional<int> protocol;
  int type = 0;                      // RTN_*; 0: unicast
  // RTNH_F_ONLINK on the single path: the gateway is on the link even though
  // no route says so.
  bool onlink = false;

  std::string ToString() const;  // "10.0.0.0/8 via 10.1.1.1 dev #3 table 100 metric 100"; failures of the
                                 // calls below name the devices: "dev eth0"
  // Field-wise equality (unset and explicit defaults differ).
  friend bool operator==(const RouteSpec&, const RouteSpec&) = default;
};

// Whether one of the paths of `route` (its single path, or any of its
// multipath nexthops) goes via `gw` (when given) and out of `ifindex` (when
// not 0). IPv6 routes to one destination through two devices are one
// multipath route, so a check for "default via X" must look at every path.
bool HasPath(const RouteSpec& route, const std::optional<IpAddress>& gw, int ifindex = 0);

// The paths of `routes` through link `ifindex`, each as a single-path route
// (gw and ifindex set, multipath empty; every other field kept). A multipath
// route gives only its paths through `ifindex`: the others belong to other
// links (an IPv6 default route of a container on two networks is one route
// with a path through each). Routes with no path through it are left out.
std::vector<RouteSpec> PathsThrough(const std::vector<RouteSpec>& routes, int ifindex);

// Adds a route; an identical one already present is absl::AlreadyExists.
absl::Status AddRoute(NetlinkSocket& sock, const RouteSpec& route);
// Adds a route even when another one to the same destination and metric
// exists (through another device or gateway): the kernel keeps both (IPv4:
// the newer first; IPv6: joined as paths of one multipath route when both
// have a gateway). Only an identical route is absl::AlreadyExists. This is
// how an IPAM result is applied (upstream sends the same request), so a
// container on two networks keeps a default route through each.
absl::Status AddRouteAlongside(NetlinkSocket& sock, const RouteSpec& route);
// Adds or replaces the route with the same destination/table/metric.
absl::Status ReplaceRoute(NetlinkSocket& sock, const RouteSpec& route);
// Deletes a route; a missing one is absl::NotFound ("No such process", ESRCH).
absl::Status DeleteRoute(NetlinkSocket& sock, const RouteSpec& route);

// Which request BuildRouteRequest builds: RTM_NEWROUTE with NLM_F_EXCL (add),
// with neither NLM_F_EXCL nor NLM_F_REPLACE (add alongside), or with
// NLM_F_REPLACE (replace); or RTM_DELROUTE (delete).
enum class RouteOp { kAdd, kAddAlongside, kReplace, kDelete };
// The RTM_NEWROUTE / RTM_DELROUTE request the calls above send (for tests and
// tools; no I/O).
absl::StatusOr<NlMsgPtr> BuildRouteRequest(const RouteSpec& route, RouteOp op);

// Which routes ListRoutes returns.
struct RouteFilter {
  std::optional<Family> family;    // nullopt: IPv4 and IPv6
  std::optional<int> table = 254;  // default: main; nullopt: every table
  int ifindex = 0;                 // 0: any; else routes with a path through it
};
// Unicast-or-other routes as the kernel reports them (protocol, scope, table
// filled in). Cached IPv6 clones are not included.
absl::StatusOr<std::vector<RouteSpec>> ListRoutes(NetlinkSocket& sock,
                                                  const RouteFilter& filter = {});

// The interface the kernel would send a packet to `dst` out of (a route
// lookup, as `ip route get DST`: rules and tables applied, one answer
// whatever the size of the tables). 0 when the answer names no interface;
// an error with the kernel's errno (ENETUNREACH, ...) when there is no route.
absl::StatusOr<int> RouteOutputInterface(NetlinkSocket& sock, const IpAddress& dst);

}  // namespace cni::net

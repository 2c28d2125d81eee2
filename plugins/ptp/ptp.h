// The ptp plugin: a veth pair per container, routed (not bridged) through the
// host. The container reaches everything, even its own subnet, via the host
// end, which holds the gateway address as a /32 (or /128); the host reaches
// the container through a host route on that veth.
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "cni/base/ip.h"
#include "cni/net/route.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"
#include "config.h"

namespace cni::ptp {

// The command table: ADD, DEL, GC and STATUS (ptp.cc), CHECK (check.cc),
// each given the configuration skel parsed once before it runs.
PluginFuncs Funcs();
absl::Status Check(const CmdArgs& args, const Config& config);

// Result layout: interfaces[kHostIndex] is the host veth,
// interfaces[kContainerIndex] the container end; every ips[] entry points at
// the container end.
enum ResultIndex : int { kHostIndex, kContainerIndex };

// ---- Shared by ADD (ptp.cc) and CHECK (check.cc) ----

// The routes ptp puts in the container for one address, instead of the
// kernel's subnet route: `gw/32 dev <if> scope link src ip` and
// `subnet via gw dev <if> src ip`. The second is left out when the address
// is a host prefix (/32, /128): there is no subnet to reach then.
// `ip.gateway` must be set (ADD checks that every address has one).
std::vector<net::RouteSpec> ContainerRoutes(const IpConfig& ip, int ifindex);

// The host route to the container address: `ip/32 dev <host veth> scope host`
// (upstream's scope; IPv6 ignores route scopes).
net::RouteSpec HostRoute(const IpConfig& ip, int host_ifindex);

// The gateway address ptp gives the host veth: gw/32 or gw/128.
net::IpPrefix HostGatewayAddress(const IpConfig& ip);

}  // namespace cni::ptp

// route-example: a chained CNI plugin that adds the routes of its configuration
// to the container interface set up by the previous plugin in the chain.
//
//   {"cniVersion": "1.0.0", "name": "net", "type": "route-example",
//    "routes": [{"dst": "192.0.2.0/24", "gw": "10.1.0.1"}, {"dst": "198.51.100.0/24"}],
//    "prevResult": {...}}
//
// ADD adds each route (via "gw", or on-link when it has none) on CNI_IFNAME in
// CNI_NETNS and returns prevResult with the routes appended; CHECK verifies they
// are there; DEL removes them (missing netns, link or route is success); GC has
// no state to collect; STATUS validates the configuration.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cni/base/ip.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"

namespace route_example {

// One entry of "routes".
struct RouteEntry {
  cni::net::IpPrefix dst;               // network form (host bits cleared)
  std::optional<cni::net::IpAddress> gw;
};

// The plugin's configuration: its own keys and the previous plugin's result,
// parsed and validated once, by skel, before any handler runs (DESIGN rule 3).
// A wrong JSON type is code 6; a bad prefix, a gateway of the other family or
// a missing "dst" is code 7.
struct Config {
  std::vector<RouteEntry> routes;
  std::optional<cni::Result> prev_result;  // absent for DEL/GC/STATUS without one

  static absl::StatusOr<Config> Parse(const cni::CmdArgs& args);
};

absl::StatusOr<cni::Result> Add(const cni::CmdArgs& args, const Config& config);
absl::Status Del(const cni::CmdArgs& args, const Config& config);
absl::Status Check(const cni::CmdArgs& args, const Config& config);

// The command table for cni::PluginMain. GC and STATUS have no handler: the
// plugin keeps no state outside the container, and is ready whenever the
// configuration parses (which skel checks for every command).
cni::PluginFuncs Funcs();

// Chaining (prevResult) exists from CNI 0.3.0 on: the versions we accept.
std::vector<std::string> SupportedVersions();

}  // namespace route_example

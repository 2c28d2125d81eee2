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
#include "cni/net/ip.h"
#include "cni/skel.h"
#include "cni/types.h"

namespace route_example {

// One entry of "routes".
struct RouteEntry {
  cni::net::IpPrefix dst;               // network form (host bits cleared)
  std::optional<cni::net::IpAddress> gw;
};

// The plugin's configuration (the plugin-specific keys of the NetConf).
struct Config {
  std::vector<RouteEntry> routes;
};

// Parses and validates "routes" before anything is changed (DESIGN rule 3).
// A wrong JSON type is code 6; a bad prefix, a gateway of the other family or
// a missing "dst" is code 7.
absl::StatusOr<Config> ParseConfig(const cni::NetConf& conf);

absl::StatusOr<cni::Result> Add(const cni::CmdArgs& args);
absl::Status Del(const cni::CmdArgs& args);
absl::Status Check(const cni::CmdArgs& args);
absl::Status Gc(const cni::CmdArgs& args);
absl::Status Status(const cni::CmdArgs& args);

// The command table for cni::PluginMain.
cni::PluginFuncs Funcs();

// Chaining (prevResult) exists from CNI 0.3.0 on: the versions we accept.
std::vector<std::string> SupportedVersions();

}  // namespace route_example

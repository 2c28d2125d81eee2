// route-example: a chained CNI plugin that adds the routes of its configuration
// to the container interface set up by the previous plugin in the chain.
//
//   {"cniVersion": "1.0.0", "name": "net", "type": "route-example",
//    "routes": [{"dst": "192.0.2.0/24", "gw": "10.1.0.1"}, {"dst": "198.51.100.0/24"}],
//    "prevResult": {...}}
//
// ADD adds each route (via "gw", or on-link without one) on CNI_IFNAME in
// CNI_NETNS, records them, and returns prevResult with the routes appended;
// CHECK verifies they are there; DEL removes the recorded routes (missing
// netns, link or route is success), even when the configuration's "routes"
// no longer parse; GC drops the records of attachments the runtime no longer
// has; STATUS validates the configuration.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"
#include "cni/protocol/version.h"

namespace route_example {

// The plugin's configuration, parsed and validated once, by skel, before any
// handler runs (docs/DESIGN.md, rule 3). A wrong JSON type is code 6; a bad
// prefix, a gateway of the other family or a missing "dst" is code 7.
struct Config {
  std::vector<cni::Route> routes;  // "routes"

  static absl::StatusOr<Config> Parse(const cni::CmdArgs& args);
};

// What DEL and GC read of the configuration (cni::TypedWithTeardown). It
// judges nothing, so a "routes" key that Config refuses (a typo, or a rule
// added since ADD) does not keep DEL from removing what ADD recorded.
struct Teardown {
  std::vector<cni::Route> routes;  // the configuration's, when they parse; else none

  static absl::StatusOr<Teardown> Parse(const cni::CmdArgs& args);
};

absl::StatusOr<cni::Result> Add(const cni::CmdArgs& args, const Config& config);
absl::Status Check(const cni::CmdArgs& args, const Config& config);
absl::Status Del(const cni::CmdArgs& args, const Teardown& teardown);
absl::Status Gc(const cni::CmdArgs& args, const Teardown& teardown);

// The command table for cni::PluginMain. STATUS has no handler: the plugin is
// ready whenever the configuration parses (which skel checks for every command).
cni::PluginFuncs Funcs();

// The versions the plugin accepts: chaining (prevResult) exists from CNI
// 0.3.0 on.
inline std::vector<std::string> SupportedVersions() { return cni::VersionsFrom("0.3.0"); }

}  // namespace route_example

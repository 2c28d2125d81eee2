// What is under test: the plugin's configuration and, for a chained plugin,
// the plugins that run before it.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/runtime/conf.h"

namespace conformance {

// The configuration file, read as one of:
//  - a network configuration (a .conf: "type" at the top level);
//  - one entry of a conflist's "plugins" (no "name" needed);
//  - a configuration list (with "plugins"): its last plugin is the one under
//    test and the ones before it run first, from CNI_PATH, to make the
//    attachment it chains onto (its prevResult).
struct Subject {
  std::string network;                               // "name" ("conformance" when absent)
  std::vector<cni::runtime::PluginConfig> before;    // the predecessors, in order
  cni::runtime::PluginConfig plugin;                 // the plugin under test
};

// Parses the configuration file's bytes. Errors name what is wrong.
absl::StatusOr<Subject> LoadSubject(absl::string_view bytes);

// A configuration list of the predecessors at `version`, for the runtime.
cni::runtime::NetworkConfigList PredecessorList(const Subject& s, const std::string& version);

}  // namespace conformance

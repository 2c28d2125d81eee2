// Test helpers of this project's own suite: the kit's process helpers
// (cni/testing/process.h) under the suite's names, and running a plugin of
// this build through the CNI protocol.
#pragma once

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "cni/testing/process.h"

namespace cni::test {

using cni::testing::kTestPath;
using cni::testing::RunProcess;
using cni::testing::RunResult;
using cni::testing::TempDir;

// The directory the build puts every plugin binary in (CNI_TEST_PLUGIN_DIR in
// the environment overrides it).
std::string PluginDir();

// One CNI invocation of a built plugin. Empty fields are not set in the
// environment (so tests can leave variables out on purpose).
struct PluginCall {
  std::string command;
  std::string container_id;
  std::string netns;
  std::string ifname;
  std::string args;
  std::string path;  // CNI_PATH; defaults to PluginDir() when `set_path` is true
  bool set_path = true;
  std::string config;
  std::vector<std::string> extra_env;
};

// Runs plugin `name` from PluginDir() (or from `dir` when given).
RunResult RunPlugin(absl::string_view name, const PluginCall& call, absl::string_view dir = {});

}  // namespace cni::test

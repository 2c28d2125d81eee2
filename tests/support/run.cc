#include "support/run.h"

#include <stdlib.h>

#include "cni/testing/call.h"

namespace cni::test {

std::string PluginDir() {
  if (const char* dir = getenv("CNI_TEST_PLUGIN_DIR")) return dir;
  return CNI_TEST_PLUGIN_DIR;
}

RunResult RunPlugin(absl::string_view name, const PluginCall& call, absl::string_view dir) {
  std::string base = dir.empty() ? PluginDir() : std::string(dir);
  cni::testing::Invocation inv;
  inv.command = call.command;
  inv.container_id = call.container_id;
  inv.netns = call.netns;
  inv.ifname = call.ifname;
  inv.args = call.args;
  inv.path = !call.set_path ? "" : call.path.empty() ? base : call.path;
  inv.config = call.config;
  inv.env = call.extra_env;
  return cni::testing::Plugin::Binary(base + "/" + std::string(name)).Run(inv);
}

}  // namespace cni::test

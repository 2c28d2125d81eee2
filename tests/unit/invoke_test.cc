// Delegation's plugin names: a type no plugin can have is refused by every
// command but DEL, whose success lets a runtime finish after the refused ADD.
#include <catch2/catch.hpp>

#include "cni/base/error.h"
#include "cni/protocol/invoke.h"
#include "support/run.h"

TEST_CASE("invoke: a type no plugin can have is refused, and its DEL has nothing to undo", "[unit][invoke]") {
  for (const char* bad : {"", ".", "..", "../host-local", "a/b", "/usr/bin/true"}) {
    INFO(bad);
    CHECK_FALSE(cni::IsValidPluginName(bad));
    cni::CmdArgs args;
    args.plugin_dirs = {cni::test::PluginDir()};
    CHECK(cni::CodeOf(cni::FindPlugin(bad, args.plugin_dirs).status()) == 7);
    CHECK(cni::CodeOf(cni::DelegateAdd(bad, args, "{}").status()) == 7);
    CHECK(cni::DelegateDel(bad, args, "{}").ok());
  }
  CHECK(cni::IsValidPluginName("host-local"));
  // A valid name that is not installed: DEL fails (it may have state to undo
  // once the plugin is back).
  cni::CmdArgs args;
  args.plugin_dirs = {cni::test::PluginDir()};
  CHECK(cni::CodeOf(cni::DelegateDel("no-such-plugin", args, "{}")) == 7);
}

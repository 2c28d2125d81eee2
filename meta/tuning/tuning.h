// The tuning plugin (chained): sets network sysctls inside the container
// namespace and changes the container interface's MAC, MTU, promiscuous and
// all-multicast modes and transmit queue length. Link attributes are saved to
// a backup file before anything changes, and DEL puts them back.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"
#include "config.h"

namespace cni::tuning {

// The command table for PluginMain: ADD, DEL, CHECK, GC and STATUS, whose
// handlers are file-local in tuning.cc.
PluginFuncs Funcs();

// The allowlist file: $CNI_TUNING_ALLOWLIST from the runtime's environment, or
// /etc/cni/tuning/allowlist.conf.
std::string AllowlistPath(const CmdArgs& args);

// CHECK compares sysctl values field by field: the kernel prints some with tabs
// ("4096\t131072\t6291456") where a config uses spaces.
bool SameSysctlValue(absl::string_view configured, absl::string_view current);

}  // namespace cni::tuning

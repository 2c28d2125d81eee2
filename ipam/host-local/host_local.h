// The host-local IPAM plugin: command handlers.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"
#include "config.h"

namespace cni::hostlocal {

// The command table for PluginMain: ADD, DEL, CHECK, GC and STATUS, whose
// handlers are file-local in host_local.cc.
PluginFuncs Funcs();

}  // namespace cni::hostlocal

// The dhcp IPAM plugin role: every command is a request to the daemon
// ("dhcp daemon", daemon.h), which runs the DHCP clients.
#pragma once

#include "absl/status/statusor.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"
#include "config.h"

namespace cni::dhcp {

// The command table for PluginMain: ADD, DEL, CHECK, GC and STATUS, whose
// handlers are file-local in dhcp.cc.
PluginFuncs Funcs();

}  // namespace cni::dhcp

// The bandwidth plugin (chained after a veth plugin such as ptp or bridge):
// shapes traffic to the container with a TBF on the host-side veth, and
// traffic from it by redirecting the veth's ingress to an ifb device that
// carries a TBF. Everything through rtnetlink; no `tc` process.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"
#include "config.h"

namespace cni::bandwidth {

// The command table for PluginMain: ADD, DEL, CHECK, GC and STATUS, whose
// handlers are file-local in bandwidth.cc.
PluginFuncs Funcs();

// prevResult exists from 0.3.0: the versions where chaining is possible.
std::vector<std::string> SupportedVersions();

// The alias our ifb devices carry, so GC can tell whose they are:
// "cni-bandwidth <network> <containerID>" (names and IDs have no spaces).
std::string IfbAlias(const std::string& network, const std::string& container_id);

}  // namespace cni::bandwidth

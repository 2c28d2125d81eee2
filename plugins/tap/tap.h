// The tap plugin: a persistent tap device in the container namespace, named
// CNI_IFNAME, optionally enslaved to a bridge there, with the IPAM result's
// addresses (or layer 2 only). A process in the container (a VM monitor)
// opens it later with TUNSETIFF.
#pragma once

#include "cni/protocol/skel.h"

namespace cni::tap {

// The command table (cni/plugin/container_link.h's shape, with a tap).
PluginFuncs Funcs();

}  // namespace cni::tap

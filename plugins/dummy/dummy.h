// The dummy plugin: a dummy link in the container namespace, named
// CNI_IFNAME, carrying the IPAM result's addresses and routes.
#pragma once

#include "cni/protocol/skel.h"

namespace cni::dummy {

// The command table (cni/plugin/container_link.h's shape, with a dummy link).
PluginFuncs Funcs();

}  // namespace cni::dummy

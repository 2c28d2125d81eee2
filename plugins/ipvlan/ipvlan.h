// The ipvlan plugin: an ipvlan link on a master interface, created inside
// the container namespace under a temporary name and renamed to CNI_IFNAME.
#pragma once

#include "cni/protocol/skel.h"

namespace cni::ipvlan {

// The command table (cni/plugin/sublink.h's shape, with this link kind).
PluginFuncs Funcs();

}  // namespace cni::ipvlan

// The host-device plugin: moves an existing link of the host namespace into
// the container, renamed to CNI_IFNAME, remembering its original name in the
// link's alias (IFLA_IFALIAS, as upstream), and moves it back under that
// name on DEL. A PCI device bound to a userspace (DPDK) driver is not moved:
// the result only names it.
#pragma once

#include "cni/protocol/skel.h"

namespace cni::host_device {

// The command table (cni/plugin/container_link.h's shape; DEL moves the
// device back instead of deleting it).
PluginFuncs Funcs();

}  // namespace cni::host_device

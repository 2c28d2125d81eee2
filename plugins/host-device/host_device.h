// The host-device plugin: moves an existing link of the host namespace into
// the container, renamed to CNI_IFNAME, remembering its original name in the
// link's alias (IFLA_IFALIAS, as upstream), and moves it back under that
// name on DEL. A PCI device bound to a userspace (DPDK) driver is not moved:
// the result only names it.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"
#include "config.h"

namespace cni::host_device {

absl::StatusOr<Result> Add(const CmdArgs& args, const Config& config);
absl::Status Del(const CmdArgs& args, const Config& config);
absl::Status Check(const CmdArgs& args, const Config& config);
// The command table: skel parses Config once, then calls the handler.
PluginFuncs Funcs();

// Result layout: interfaces[0] is the device in the container.
inline constexpr int kContainerIndex = 0;

}  // namespace cni::host_device

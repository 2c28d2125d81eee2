// The macvlan plugin: a macvlan link on a master interface, created inside
// the container namespace under a temporary name and renamed to CNI_IFNAME.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cni/skel.h"
#include "cni/types.h"

namespace cni::macvlan {

absl::StatusOr<Result> Add(const CmdArgs& args);
absl::Status Del(const CmdArgs& args);
absl::Status Check(const CmdArgs& args);
absl::Status Gc(const CmdArgs& args);
absl::Status Status(const CmdArgs& args);
PluginFuncs Funcs();

// Result layout: interfaces[0] is the macvlan in the container.
inline constexpr int kContainerIndex = 0;

}  // namespace cni::macvlan

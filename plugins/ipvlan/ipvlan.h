// The ipvlan plugin: an ipvlan link on a master interface, created inside
// the container namespace under a temporary name and renamed to CNI_IFNAME.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"
#include "config.h"

namespace cni::ipvlan {

absl::StatusOr<Result> Add(const CmdArgs& args, const Config& config);
absl::Status Check(const CmdArgs& args, const Config& config);
// The command table: skel parses Config once, then calls the handler;
// DEL, GC and STATUS are cni/sublink.h's.
PluginFuncs Funcs();

// Result layout: interfaces[0] is the ipvlan in the container.
inline constexpr int kContainerIndex = 0;

}  // namespace cni::ipvlan

// The dummy plugin: a dummy link in the container namespace, named
// CNI_IFNAME, carrying the IPAM result's addresses and routes.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"
#include "config.h"

namespace cni::dummy {

absl::StatusOr<Result> Add(const CmdArgs& args, const Config& config);
absl::Status Del(const CmdArgs& args, const Config& config);
absl::Status Check(const CmdArgs& args, const Config& config);
// The command table: skel parses Config once, then calls the handler.
PluginFuncs Funcs();

// Result layout: interfaces[0] is the dummy link in the container.
inline constexpr int kContainerIndex = 0;

}  // namespace cni::dummy

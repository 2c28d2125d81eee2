// The loopback plugin: brings "lo" up in the container (ADD) and down again
// (DEL). CNI_IFNAME is ignored, as upstream does: this only ever means "lo".
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cni/skel.h"
#include "cni/types.h"

namespace cni::loopback {

absl::StatusOr<Result> Add(const CmdArgs& args);
absl::Status Del(const CmdArgs& args);
absl::Status Check(const CmdArgs& args);
PluginFuncs Funcs();  // no GC / STATUS: loopback holds no state

}  // namespace cni::loopback

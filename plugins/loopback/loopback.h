// The loopback plugin: brings "lo" up in the container (ADD) and down again
// (DEL). CNI_IFNAME is ignored, as upstream does: this only ever means "lo".
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"
#include "config.h"

namespace cni::loopback {

// ADD and CHECK get the configuration Config::Parse read.
absl::StatusOr<Result> Add(const CmdArgs& args, const Config& config);
absl::Status Check(const CmdArgs& args, const Config& config);
// DEL reads no configuration: lo goes down whatever the configuration says
// (a malformed prevResult must not block a teardown), as upstream's does.
absl::Status Del(const CmdArgs& args);
PluginFuncs Funcs();  // no GC / STATUS: loopback holds no state

}  // namespace cni::loopback

// The host-local IPAM plugin: command handlers.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"
#include "config.h"

namespace cni::hostlocal {

absl::StatusOr<Result> Add(const CmdArgs& args, const Config& cfg);
absl::Status Del(const CmdArgs& args, const Config& cfg);
absl::Status Check(const CmdArgs& args, const Config& cfg);
absl::Status Gc(const CmdArgs& args, const Config& cfg);
absl::Status Status(const CmdArgs& args, const Config& cfg);

PluginFuncs Funcs();

}  // namespace cni::hostlocal

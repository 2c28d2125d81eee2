// The host-local IPAM plugin: command handlers.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/skel.h"
#include "cni/types.h"

namespace cni::hostlocal {

absl::StatusOr<Result> Add(const CmdArgs& args);
absl::Status Del(const CmdArgs& args);
absl::Status Check(const CmdArgs& args);
absl::Status Gc(const CmdArgs& args);
absl::Status Status(const CmdArgs& args);

PluginFuncs Funcs();

}  // namespace cni::hostlocal

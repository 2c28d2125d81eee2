// The static IPAM plugin: hands out exactly the addresses it is configured with.
// It owns no state, so DEL, GC and STATUS only validate.
#pragma once

#include "absl/status/statusor.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"
#include "config.h"

namespace cni::static_ipam {

absl::StatusOr<Result> Add(const CmdArgs& args, const Config& config);
absl::Status Check(const CmdArgs& args, const Config& config);
// Untyped: DEL succeeds even for a configuration Config::Parse refuses.
absl::Status Del(const CmdArgs& args);
absl::Status Status(const CmdArgs& args, const Config& config);
// The command table: skel parses Config once for ADD, CHECK and STATUS.
PluginFuncs Funcs();

}  // namespace cni::static_ipam

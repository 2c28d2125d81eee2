// The static IPAM plugin: hands out exactly the addresses it is configured with.
// It owns no state, so DEL, GC and STATUS only validate.
#pragma once

#include "absl/status/statusor.h"
#include "cni/skel.h"
#include "cni/types.h"

namespace cni::static_ipam {

absl::StatusOr<Result> Add(const CmdArgs& args);
absl::Status Check(const CmdArgs& args);
absl::Status Del(const CmdArgs& args);
absl::Status Status(const CmdArgs& args);
PluginFuncs Funcs();

}  // namespace cni::static_ipam

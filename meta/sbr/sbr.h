// The sbr plugin (chained): source-based routing inside the container. For
// every address of CNI_IFNAME a rule "from ADDRESS lookup TABLE", and the
// interface's routes (the default route included) moved from the main table
// into TABLE, so that replies leave through the interface their request came
// in on. DEL removes the rules and the routes it put into those tables.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"
#include "config.h"

namespace cni::sbr {

// Sets up the rules and tables; a failure undoes every step (rules, table
// routes, main-table routes) and leaves the namespace as it was.
absl::StatusOr<Result> Add(const CmdArgs& args, const Config& config);
// Removes the rules whose source is an address of CNI_IFNAME (on the link, or
// in prevResult when the link is gone), and, without a fixed `table`, the
// link's routes in their tables. A namespace or link that is gone is success.
absl::Status Del(const CmdArgs& args, const Config& config);
// Every address of CNI_IFNAME has its rule; without a fixed `table`, its
// table has routes through the link, the default route among them when
// there is a gateway.
absl::Status Check(const CmdArgs& args, const Config& config);
PluginFuncs Funcs();

}  // namespace cni::sbr

#include "cni/plugin/chained.h"

#include <optional>
#include <utility>

#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "cni/plugin/check.h"

namespace cni {

absl::StatusOr<Result> RequirePrevResult(const CmdArgs& args, absl::string_view plugin) {
  CNI_ASSIGN_OR_RETURN(std::optional<Result> prev, ParsePrevResult(args.conf), plugin);
  if (!prev) return InvalidConfig(plugin, "must be chained after an interface plugin: prevResult missing");
  return *std::move(prev);
}

absl::StatusOr<PrevInterface> RequirePrevInterface(const CmdArgs& args, absl::string_view plugin) {
  PrevInterface out;
  CNI_ASSIGN_OR_RETURN(out.result, RequirePrevResult(args, plugin));
  CNI_ASSIGN_OR_RETURN(out.index, net::FindPrevInterface(out.result, args.ifname, args.netns), plugin);
  return out;
}

}  // namespace cni

#include "cni/plugin/chained.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/quoted.h"
#include "cni/base/status_macros.h"

namespace cni {

absl::StatusOr<Result> RequirePrevResult(const CmdArgs& args, absl::string_view plugin) {
  CNI_ASSIGN_OR_RETURN(std::optional<Result> prev, ParsePrevResult(args.conf), plugin);
  if (!prev) return InvalidConfig(plugin, "must be chained after an interface plugin: prevResult missing");
  return *std::move(prev);
}

absl::StatusOr<PrevInterface> RequirePrevInterface(const CmdArgs& args, absl::string_view plugin) {
  CNI_ASSIGN_OR_RETURN(Result prev, RequirePrevResult(args, plugin));
  std::optional<size_t> index;
  for (size_t i = 0; i < prev.interfaces.size(); ++i) {
    if (prev.interfaces[i].name == args.ifname && !prev.interfaces[i].sandbox.empty()) index = i;
  }
  if (!index) return InvalidConfig(plugin, absl::StrCat("prevResult has no container interface ", Quoted(args.ifname)));
  return PrevInterface{std::move(prev), *index};
}

}  // namespace cni

// The first step of a chained plugin's ADD and CHECK: the previous plugin's
// result, and in it the container interface the command is about.
//
//   ASSIGN_OR_RETURN(cni::PrevInterface prev, cni::RequirePrevInterface(args, "my-plugin"));
//   // prev.result is prevResult (1.1.0 model), prev.result.interfaces[prev.index] is CNI_IFNAME
//
// Both failures are the configuration's (prevResult is part of it): code 7,
// with the plugin's name, never 999.
#pragma once

#include <cstddef>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"

namespace cni {

// The configuration's prevResult (ParsePrevResult: at the configuration's
// version). None: code 7 "<plugin>: must be chained after an interface
// plugin: prevResult missing". Malformed: ParsePrevResult's code 6 or 1.
absl::StatusOr<Result> RequirePrevResult(const CmdArgs& args, absl::string_view plugin);

// prevResult and the container interface in it.
struct PrevInterface {
  Result result;     // the previous plugin's result
  size_t index = 0;  // result.interfaces[index] is the container interface CNI_IFNAME
};

// RequirePrevResult, then the container interface CNI_IFNAME in it: the
// last interface of that name with a sandbox. Code 7 "<plugin>: prevResult
// has no container interface "eth0"" when there is none. The sandbox is not
// compared with CNI_NETNS: a runtime may name one namespace by two paths,
// and the kernel, not the path, says whether the link is there (opening it
// in CNI_NETNS does; cni/net/container_link.h). An interface plugin's CHECK
// compares them (FindPrevInterface, cni/plugin/check.h).
absl::StatusOr<PrevInterface> RequirePrevInterface(const CmdArgs& args, absl::string_view plugin);

}  // namespace cni

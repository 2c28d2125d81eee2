#include "cni/plugin/teardown.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/net/link.h"
#include "cni/protocol/invoke.h"

namespace cni::net {

absl::Status DeleteContainerLinkAndAddress(const CmdArgs& args, absl::string_view ipam_type,
                                           absl::string_view plugin) {
  std::vector<absl::Status> failures;
  if (!ipam_type.empty()) {
    if (absl::Status st = DelegateDel(ipam_type, args); !st.ok()) {
      failures.push_back(Annotate(st, absl::StrCat(plugin, ": releasing the IPAM address")));
    }
  }
  if (!args.netns.empty()) {
    if (absl::Status st = DeleteLinkInNetns(args.netns, args.ifname); !st.ok()) {
      failures.push_back(Annotate(st, plugin));
    }
  }
  return JoinErrors(failures);
}

}  // namespace cni::net

#include "cni/net/teardown.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "cni/error.h"
#include "cni/invoke.h"
#include "cni/net/link.h"

namespace cni::net {

absl::Status DeleteContainerLinkAndAddress(const CmdArgs& args, absl::string_view ipam_type,
                                           absl::string_view plugin) {
  std::vector<absl::Status> failures;
  if (!ipam_type.empty()) {
    if (absl::Status st = DelegateDel(ipam_type, args); !st.ok()) {
      // The retry's IPAM DEL may need the link (see IpamDelMayFinishOnRetry).
      if (IpamDelMayFinishOnRetry(st)) return Annotate(st, absl::StrCat(plugin, ": releasing the IPAM address"));
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

#include "cni/plugin/teardown.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "cni/net/link.h"
#include "cni/net/netlink.h"
#include "cni/net/netns.h"
#include "cni/protocol/invoke.h"

namespace cni::net {
namespace {

// CNI_IFNAME in CNI_NETNS, and the temporary name when `temp_prefix` is set,
// through one socket; a namespace that is gone took its links with it.
absl::Status DeleteLinks(const CmdArgs& args, absl::string_view temp_prefix) {
  absl::StatusOr<Netns> netns = Netns::Open(args.netns);
  if (absl::IsNotFound(netns.status())) return absl::OkStatus();
  RETURN_IF_ERROR(netns.status());
  ASSIGN_OR_RETURN(NetlinkSocket sock, NetlinkSocket::OpenIn(*netns));
  std::vector<absl::Status> failures = {DeleteLinkByNameIfExists(sock, args.ifname)};
  if (!temp_prefix.empty()) {
    failures.push_back(
        DeleteLinkByNameIfExists(sock, TemporaryLinkName(temp_prefix, args.container_id, args.ifname)));
  }
  return JoinErrors(failures);
}

}  // namespace

absl::Status DeleteContainerLinkAndAddress(const CmdArgs& args, absl::string_view ipam_type,
                                           absl::string_view plugin, absl::string_view temp_prefix) {
  std::vector<absl::Status> failures;
  if (!ipam_type.empty()) {
    if (absl::Status st = DelegateDel(ipam_type, args); !st.ok()) {
      // The retry's IPAM DEL may need the link (see IpamDelMayFinishOnRetry).
      if (IpamDelMayFinishOnRetry(st)) return Annotate(st, absl::StrCat(plugin, ": releasing the IPAM address"));
      failures.push_back(Annotate(st, absl::StrCat(plugin, ": releasing the IPAM address")));
    }
  }
  if (!args.netns.empty()) {
    if (absl::Status st = DeleteLinks(args, temp_prefix); !st.ok()) failures.push_back(Annotate(st, plugin));
  }
  return JoinErrors(failures);
}

}  // namespace cni::net

#include "cni/plugin/locked_netns.h"

#include <optional>
#include <string>

#include "cni/base/fs.h"
#include "cni/base/status_macros.h"
#include "cni/net/netns.h"

namespace cni::locked_netns {

absl::Status Teardown(const CmdArgs& args, absl::string_view plugin,
                      const std::function<absl::Status(net::NetlinkSocket& csock)>& del) {
  ASSIGN_OR_RETURN(std::optional<net::Netns> ns, net::OpenNetnsForTeardown(args.netns));
  if (!ns) return absl::OkStatus();
  ASSIGN_OR_RETURN(UniqueFd lock, LockFile(args.netns), plugin);
  ASSIGN_OR_RETURN(net::NetlinkSocket csock, net::NetlinkSocket::OpenIn(*ns));
  return del(csock);
}

}  // namespace cni::locked_netns

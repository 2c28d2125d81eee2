// Chained plugins that change shared objects of the container's namespace
// (sbr's and vrf's routing tables) run there one at a time: each holds the
// lock on the namespace's file (cni/base/fs.h LockFile, as upstream's sbr)
// while it works.
#pragma once

#include <functional>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "cni/net/netlink.h"
#include "cni/protocol/skel.h"

namespace cni::locked_netns {

// DEL: nothing to undo when CNI_NETNS is empty or names a namespace that is
// gone; else `del` runs through a socket in it, under the lock (a failure to
// take it is prefixed with `plugin`).
absl::Status Teardown(const CmdArgs& args, absl::string_view plugin,
                      const std::function<absl::Status(net::NetlinkSocket& csock)>& del);

}  // namespace cni::locked_netns

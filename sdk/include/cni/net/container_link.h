// The target of most plugin commands in one call: the container's network
// namespace, a netlink socket bound in it, and the interface by name.
//
//   ASSIGN_OR_RETURN(net::ContainerLink target, net::OpenContainerLink(args.netns, args.ifname));
//   RETURN_IF_ERROR(net::AddRoute(target.sock, {.dst = dst, .ifindex = target.link.index}));
#pragma once

#include <optional>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/net/link.h"
#include "cni/net/netlink.h"

namespace cni::net {

// A socket in the container's namespace and the link the command is about.
// The namespace stays open as long as the socket (sock.netns(), for sysctls).
struct ContainerLink {
  NetlinkSocket sock;  // rtnetlink, bound in the container's namespace
  LinkInfo link;       // the interface, as the kernel reported it when opened
};

// Netns::Open(netns_path), NetlinkSocket::OpenIn, LinkByName(ifname). A
// missing namespace is code 3 and a missing link absl::NotFound (`looking
// up link "eth0": No such device`), both absl::IsNotFound.
absl::StatusOr<ContainerLink> OpenContainerLink(absl::string_view netns_path, absl::string_view ifname);

// DEL's way to the same (OpenNetnsForTeardown): nullopt when `netns_path` is
// empty, the namespace is gone or the link is not in it, since then there is
// nothing left to undo on it. Any other failure is an error.
absl::StatusOr<std::optional<ContainerLink>> OpenContainerLinkForTeardown(absl::string_view netns_path,
                                                                          absl::string_view ifname);

}  // namespace cni::net

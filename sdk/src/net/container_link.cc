#include "cni/net/container_link.h"

#include <utility>

#include "cni/base/status_macros.h"
#include "cni/net/netns.h"

namespace cni::net {

absl::StatusOr<ContainerLink> OpenContainerLink(absl::string_view netns_path, absl::string_view ifname) {
  CNI_ASSIGN_OR_RETURN(Netns ns, Netns::Open(netns_path));
  CNI_ASSIGN_OR_RETURN(NetlinkSocket sock, NetlinkSocket::OpenIn(ns));
  CNI_ASSIGN_OR_RETURN(LinkInfo link, LinkByName(sock, ifname));
  return ContainerLink{std::move(sock), std::move(link)};
}

absl::StatusOr<std::optional<ContainerLink>> OpenContainerLinkForTeardown(absl::string_view netns_path,
                                                                          absl::string_view ifname) {
  CNI_ASSIGN_OR_RETURN(std::optional<Netns> ns, OpenNetnsForTeardown(netns_path));
  if (!ns) return std::optional<ContainerLink>();
  CNI_ASSIGN_OR_RETURN(NetlinkSocket sock, NetlinkSocket::OpenIn(*ns));
  absl::StatusOr<LinkInfo> link = LinkByName(sock, ifname);
  if (absl::IsNotFound(link.status())) return std::optional<ContainerLink>();
  CNI_RETURN_IF_ERROR(link);
  return std::optional<ContainerLink>(ContainerLink{std::move(sock), *std::move(link)});
}

}  // namespace cni::net

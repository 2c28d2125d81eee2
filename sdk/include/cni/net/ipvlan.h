// ipvlan links through an rtnetlink socket.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/net/netlink.h"
#include "cni/net/netns.h"

namespace cni::net {

// IPVLAN_MODE_* (linux/if_link.h).
enum class IpvlanMode { kL2 = 0, kL3 = 1, kL3s = 2 };

// "l2", "l3", "l3s" (the names upstream's config uses); "" means l2, as
// upstream defaults. Anything else: code 7.
absl::StatusOr<IpvlanMode> ParseIpvlanMode(absl::string_view name);
// The config name of `mode` ("l2", ...); "unknown" for a value outside the enum.
std::string IpvlanModeName(IpvlanMode mode);

// The ipvlan CreateIpvlan creates. It shares its master's MAC.
struct IpvlanSpec {
  std::string name;                  // the new link's name
  int master_index = 0;              // in the socket's namespace
  IpvlanMode mode = IpvlanMode::kL2;  // IFLA_IPVLAN_MODE
  int mtu = 0;                       // 0: inherit the master's
  // Where the link is born (IFLA_NET_NS_FD, in the same request). nullptr:
  // next to its master.
  const Netns* netns = nullptr;
};

// Creates the ipvlan (down). The socket must be in the master's namespace.
// EEXIST (the name is taken in the target namespace) is absl::AlreadyExists;
// a kernel without ipvlan answers EOPNOTSUPP.
absl::Status CreateIpvlan(NetlinkSocket& sock, const IpvlanSpec& spec);
// The request CreateIpvlan sends (for tests; no I/O).
absl::StatusOr<NlMsgPtr> BuildIpvlanRequest(const IpvlanSpec& spec);

// The mode of ipvlan link `index`; not an ipvlan is an error (code 999), no
// such link is absl::NotFound.
absl::StatusOr<IpvlanMode> IpvlanModeOf(NetlinkSocket& sock, int index);

}  // namespace cni::net

// ipvlan links through an rtnetlink socket.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/net/link.h"
#include "cni/net/master_link.h"
#include "cni/net/netlink.h"

namespace cni::net {

// IPVLAN_MODE_* (linux/if_link.h).
enum class IpvlanMode { kL2 = 0, kL3 = 1, kL3s = 2 };

// "l2", "l3", "l3s" (the names upstream's config uses); "" means l2, as
// upstream defaults. Anything else: code 7.
absl::StatusOr<IpvlanMode> ParseIpvlanMode(absl::string_view name);
// The config name of `mode` ("l2", ...); "unknown" for a value outside the enum.
std::string IpvlanModeName(IpvlanMode mode);

// Creates `link` as an ipvlan (down) in `mode` (IFLA_IPVLAN_MODE); it
// shares its master's MAC. The socket must be in the master's namespace.
// EEXIST (the name is taken in the target namespace) is absl::AlreadyExists;
// a kernel without ipvlan answers EOPNOTSUPP.
absl::Status CreateIpvlan(NetlinkSocket& sock, const MasterLink& link, IpvlanMode mode);

// The mode of ipvlan `link` (read by its index, named by its name in
// errors); not an ipvlan is an error (code 999), no such link is
// absl::NotFound.
absl::StatusOr<IpvlanMode> IpvlanModeOf(NetlinkSocket& sock, const LinkInfo& link);

}  // namespace cni::net

// 802.1Q VLAN links through an rtnetlink socket.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cni/net/link.h"
#include "cni/net/master_link.h"
#include "cni/net/netlink.h"

namespace cni::net {

// Creates `link` as an 802.1Q VLAN link (down) with VLAN ID `vlan_id`
// (IFLA_VLAN_ID, 0 ... 4094). The socket must be in the master's namespace.
// EEXIST (the name is taken in the target namespace) is absl::AlreadyExists;
// a kernel without 802.1Q answers EOPNOTSUPP.
absl::Status CreateVlan(NetlinkSocket& sock, const MasterLink& link, int vlan_id);

// The VLAN ID of vlan `link` (read by its index, named by its name in
// errors); not a vlan is an error (code 999), no such link is absl::NotFound.
absl::StatusOr<int> VlanIdOf(NetlinkSocket& sock, const LinkInfo& link);

}  // namespace cni::net

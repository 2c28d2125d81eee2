// 802.1Q VLAN links through an rtnetlink socket.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cni/net/netlink.h"
#include "cni/net/netns.h"

namespace cni::net {

// The VLAN link CreateVlan creates (protocol 802.1Q).
struct VlanSpec {
  std::string name;      // the new link's name
  int master_index = 0;  // in the socket's namespace
  int vlan_id = 0;       // IFLA_VLAN_ID, 0 ... 4094
  int mtu = 0;           // 0: inherit the master's
  // Where the link is born (IFLA_NET_NS_FD, in the same request). nullptr:
  // next to its master.
  const Netns* netns = nullptr;
};

// Creates the VLAN link (down). The socket must be in the master's
// namespace. EEXIST (the name is taken in the target namespace) is
// absl::AlreadyExists; a kernel without 802.1Q answers EOPNOTSUPP.
absl::Status CreateVlan(NetlinkSocket& sock, const VlanSpec& spec);
// The request CreateVlan sends (for tests; no I/O).
absl::StatusOr<NlMsgPtr> BuildVlanRequest(const VlanSpec& spec);

// The VLAN ID of vlan link `index`; not a vlan is an error (code 999), no
// such link is absl::NotFound.
absl::StatusOr<int> VlanIdOf(NetlinkSocket& sock, int index);

}  // namespace cni::net

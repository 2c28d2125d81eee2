// The links the SDK makes on a master interface (macvlan, ipvlan and vlan:
// cni/net/macvlan.h, ipvlan.h, vlan.h): what each of their create requests
// carries besides its kind's own data.
#pragma once

#include <string>

#include "cni/net/netns.h"

namespace cni::net {

// One link to create on a master: CreateMacvlan, CreateIpvlan, CreateVlan.
struct MasterLink {
  std::string name;      // the new link's name
  int master_index = 0;  // the master, in the creating socket's namespace
  int mtu = 0;           // 0: inherit the master's
  // Where the link is born (IFLA_NET_NS_FD, in the same request). nullptr:
  // next to its master.
  const Netns* netns = nullptr;
};

}  // namespace cni::net

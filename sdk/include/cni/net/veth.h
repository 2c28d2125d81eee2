// The veth pair of ptp and bridge: container end named CNI_IFNAME inside the
// container, host end "veth" + 8 random hex digits in the host namespace.
#pragma once

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/net/ip.h"
#include "cni/net/netlink.h"
#include "cni/net/netns.h"
#include "cni/types.h"

namespace cni::net {

// The pair SetupVeth made: both ends, as they go into a Result.
struct VethPair {
  Interface host;        // name, mac (sandbox empty)
  Interface container;   // name, mac, sandbox = container netns path
  int host_index = 0;    // in the host namespace
  int container_index = 0;  // in the container namespace
};

// "veth" + 8 random lower-case hex digits.
std::string RandomVethName();

// Creates the pair from the container side, through `container` (a socket
// in the container namespace; the host end is born in the namespace of
// `host` through IFLA_NET_NS_FD) and brings both ends up. The container end gets
// `mtu` (0: default) on both ends and `mac` if given. A taken host name is
// retried with a new random one; an existing `ifname` in the container is an
// error (`container veth name "eth0" already exists`, absl::AlreadyExists).
// On a failure after creation the pair is deleted again.
absl::StatusOr<VethPair> SetupVeth(NetlinkSocket& container, NetlinkSocket& host, absl::string_view ifname,
                                   int mtu, const std::optional<MacAddress>& mac);
// Same, opening a NETLINK_ROUTE socket in each namespace for the call (two
// helper threads): callers that hold sockets already should pass them.
absl::StatusOr<VethPair> SetupVeth(const Netns& container, absl::string_view ifname, int mtu,
                                   const std::optional<MacAddress>& mac, const Netns& host);

}  // namespace cni::net

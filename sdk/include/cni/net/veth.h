// The veth pair of ptp and bridge: container end named CNI_IFNAME inside the
// container, host end "veth" + 8 random hex digits in the host namespace.
#pragma once

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/base/ip.h"
#include "cni/net/netlink.h"
#include "cni/net/netns.h"

namespace cni::net {

// One end of a veth pair, as a result lists it.
struct VethEnd {
  std::string name;     // the link's name in its namespace
  std::string mac;      // its hardware address ("0a:58:...")
  std::string sandbox;  // the container's netns path; empty for the host end
};

// The pair SetupVeth made: both ends, as they go into a Result.
struct VethPair {
  VethEnd host;          // name, mac (sandbox empty)
  VethEnd container;     // name, mac, sandbox = container netns path
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
// `host_skips_dad`: the host end's IPv6 link-local address is made without
// duplicate address detection (accept_dad 0 before it comes up), for a host
// end that routes (ptp): while that address is tentative, 1-2 s after the
// link comes up, the host sends no neighbour solicitation on the link, so
// nothing it forwards reaches the container. The host end's only neighbour
// is the container end, whose address is its own, so DAD has nothing to
// find. Best effort: a kernel without IPv6 has nothing to skip.
absl::StatusOr<VethPair> SetupVeth(NetlinkSocket& container, NetlinkSocket& host, absl::string_view ifname,
                                   int mtu, const std::optional<MacAddress>& mac, bool host_skips_dad = false);
// Same, opening a NETLINK_ROUTE socket in each namespace for the call (two
// helper threads): callers that hold sockets already should pass them.
absl::StatusOr<VethPair> SetupVeth(const Netns& container, absl::string_view ifname, int mtu,
                                   const std::optional<MacAddress>& mac, const Netns& host);

}  // namespace cni::net

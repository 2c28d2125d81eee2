// MAC spoof checking for bridge ports (upstream pkg/link/spoofcheck.go):
// table bridge nat, base chain PREROUTING (filter, priority -300); per port
// a chain cni-br-iface-<refID> entered for iifname, jumping to
// cni-br-iface-<refID>-mac that returns for the container's MAC and drops the
// rest. Rules carry the comment "macspoofchk-<refID>".
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "cni/net/netlink.h"

namespace cni::fw {

// refID is upstream's "<containerID>-<ifname>". One transaction; repeated
// calls replace (never duplicate) the port's rules.
// Through `nf`, a NETLINK_NETFILTER socket (nft::OpenSocket) of the host
// namespace.
absl::Status SetupSpoofCheck(net::NetlinkSocket& nf, absl::string_view host_iface, absl::string_view mac,
                             absl::string_view ref_id);
// Same, with a NETLINK_NETFILTER socket of its own in the calling thread's namespace.
absl::Status SetupSpoofCheck(absl::string_view host_iface, absl::string_view mac, absl::string_view ref_id);
// Removes the port's rules and chains; missing is fine.
absl::Status TeardownSpoofCheck(net::NetlinkSocket& nf, absl::string_view ref_id);
// Same, with a NETLINK_NETFILTER socket of its own.
absl::Status TeardownSpoofCheck(absl::string_view ref_id);

}  // namespace cni::fw

// VRF (virtual routing and forwarding) devices through an rtnetlink socket:
// an L3 master whose enslaved links route through its own table.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/net/link.h"
#include "cni/net/netlink.h"

namespace cni::net {

// Creates VRF `name` bound to routing table `table` (IFLA_VRF_TABLE, not 0)
// in the socket's namespace, down. EEXIST (the name is taken) is
// absl::AlreadyExists; a kernel without the vrf type answers EOPNOTSUPP.
absl::Status CreateVrf(NetlinkSocket& sock, absl::string_view name, uint32_t table);
// The request CreateVrf sends (for tests; no I/O).
absl::StatusOr<NlMsgPtr> BuildVrfRequest(absl::string_view name, uint32_t table);

// The routing table of VRF `link` (read by its index, named by its name in
// errors); a link that is not a VRF is an error (code 999), no such link is
// absl::NotFound.
absl::StatusOr<uint32_t> VrfTableOf(NetlinkSocket& sock, const LinkInfo& link);

}  // namespace cni::net

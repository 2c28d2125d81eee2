// Persistent tap devices (what `ip tuntap add mode tap` makes).
//
// The kernel refuses to create tun/tap links over rtnetlink ("tun/tap creation
// via rtnetlink is not supported": tun's rtnl_link_ops only report
// IFLA_TUN_* attributes, their validate hook answers EOPNOTSUPP), so a tap is
// made the one way the kernel offers: open /dev/net/tun, TUNSETIFF, set owner
// and group, TUNSETPERSIST, close. Everything after creation (MTU, MAC,
// master, addresses) goes through rtnetlink as for any link.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "cni/net/netns.h"

namespace cni::net {

struct TapSpec {
  std::string name;               // at most 15 bytes
  bool multi_queue = false;       // IFF_MULTI_QUEUE: openers must ask for it too
  std::optional<uint32_t> owner;  // uid allowed to open it; none: only CAP_NET_ADMIN
  std::optional<uint32_t> group;  // gid allowed to open it
};

// Creates the persistent tap `spec.name` inside `ns` (down, kernel MAC). The
// device belongs to the namespace /dev/net/tun was opened in, so the open
// happens on a helper thread in `ns`. The name must be free: an existing
// device is absl::AlreadyExists (IFF_TUN_EXCL; without it TUNSETIFF would
// attach to an existing tap instead of failing). A failure before the device
// is made persistent leaves nothing (it dies with the descriptor).
absl::Status CreateTap(const Netns& ns, const TapSpec& spec);

}  // namespace cni::net

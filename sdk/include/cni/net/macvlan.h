// macvlan links through an rtnetlink socket.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/base/ip.h"
#include "cni/net/link.h"
#include "cni/net/master_link.h"
#include "cni/net/netlink.h"

namespace cni::net {

// MACVLAN_MODE_* (linux/if_link.h).
enum class MacvlanMode { kPrivate = 1, kVepa = 2, kBridge = 4, kPassthru = 8 };

// "bridge", "private", "vepa", "passthru" (the names upstream's config uses);
// "" means bridge, as upstream defaults. Anything else: code 7.
absl::StatusOr<MacvlanMode> ParseMacvlanMode(absl::string_view name);
// The config name of `mode` ("bridge", ...); "unknown" for a value outside the enum.
std::string MacvlanModeName(MacvlanMode mode);

// What a macvlan is made with besides its MasterLink.
struct MacvlanOptions {
  MacvlanMode mode = MacvlanMode::kBridge;  // IFLA_MACVLAN_MODE
  std::optional<MacAddress> mac;            // none: random, chosen by the kernel
  // IFLA_MACVLAN_BC_QUEUE_LEN: the length of the queue that carries the
  // master's broadcast and multicast frames to its macvlans (the kernel uses
  // the largest any macvlan of the master asks for). 0: not sent, the
  // kernel's default (1000). Kernels before 5.11 ignore the attribute.
  uint32_t bc_queue_len = 0;
};

// Creates `link` as a macvlan (down). The socket must be in the master's
// namespace. EEXIST (the name is taken in the target namespace) is
// absl::AlreadyExists.
absl::Status CreateMacvlan(NetlinkSocket& sock, const MasterLink& link, const MacvlanOptions& options);

// The mode of macvlan `link` (read by its index, named by its name in
// errors); not a macvlan is an error (code 999), no such link is
// absl::NotFound.
absl::StatusOr<MacvlanMode> MacvlanModeOf(NetlinkSocket& sock, const LinkInfo& link);

}  // namespace cni::net

// Which packet-filter backend a plugin drives (ipMasq, portmap, ...).
// Selection follows upstream: the configured one, else iptables when its
// binary exists, else nftables.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cni::fw {

// A packet-filter backend: iptables (iptables-restore) or nftables (netlink).
enum class Backend { kIptables, kNftables };

// "iptables" or "nftables"; "" picks DefaultBackend(). Anything else: code 7.
absl::StatusOr<Backend> SelectBackend(absl::string_view configured);
// iptables when an iptables binary is installed, else nftables.
Backend DefaultBackend();
// "iptables" or "nftables" (a static string), for messages and configs.
const char* BackendName(Backend b);

}  // namespace cni::fw

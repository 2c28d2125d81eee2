// The subnet file flanneld writes for its node (/run/flannel/subnet.env):
// KEY=value lines naming the cluster network(s), this node's subnet, the MTU
// and whether flanneld masquerades itself.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/base/ip.h"

namespace cni::flannel {

inline constexpr absl::string_view kDefaultSubnetFile = "/run/flannel/subnet.env";

struct SubnetEnv {
  std::vector<net::IpPrefix> networks;       // FLANNEL_NETWORK (comma-separated, duplicates dropped)
  std::optional<net::IpPrefix> subnet;       // FLANNEL_SUBNET, host bits cleared
  std::vector<net::IpPrefix> ip6_networks;   // FLANNEL_IPV6_NETWORK
  std::optional<net::IpPrefix> ip6_subnet;   // FLANNEL_IPV6_SUBNET, host bits cleared
  std::optional<uint32_t> mtu;               // FLANNEL_MTU
  std::optional<bool> ipmasq;                // FLANNEL_IPMASQ: flanneld masquerades itself
};

// Parses the file's text (`name` is used in messages). As upstream: lines are
// split at the first '=', unknown keys are ignored, a later line replaces an
// earlier one, and CIDRs are read with their host bits cleared (networks
// given twice are kept once). Required: a network (v4 or v6), a subnet (v4 or
// v6), FLANNEL_MTU and FLANNEL_IPMASQ. Code 7 for a value that does not parse
// (a CIDR, an MTU that is not a 32-bit unsigned number, an IPMASQ other than
// "true"/"false", a known key without '=') or missing keys, naming them.
absl::StatusOr<SubnetEnv> ParseSubnetEnv(absl::string_view text, absl::string_view name);

// Reads and parses the file at `path`. A missing file is code 11 (try again
// later: flanneld has not written it yet); other read errors code 5.
absl::StatusOr<SubnetEnv> LoadSubnetEnv(const std::string& path);

}  // namespace cni::flannel

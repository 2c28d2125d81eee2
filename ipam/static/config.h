// Configuration of the static IPAM plugin: the "ipam" object of the network
// configuration plus the address sources that may override it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"

namespace cni::static_ipam {

struct Address {
  net::IpPrefix address;                 // interface address with prefix length
  std::optional<net::IpAddress> gateway;
};

struct Config {
  std::vector<Address> addresses;
  std::vector<Route> routes;
  Dns dns;

  // Loads the configuration from args.conf and CNI_ARGS, applying the
  // sources as upstream does:
  //   1. ipam.addresses;
  //   2. CNI_ARGS IP (comma-separated CIDRs) is appended, and CNI_ARGS GATEWAY
  //      (comma-separated) becomes the gateway of every address whose subnet holds it;
  //   3. args.cni.ips replaces all of the above;
  //   4. runtimeConfig.ips replaces all of the above (highest precedence).
  // Addresses from 3 and 4 carry no gateway (they are bare CIDRs), as upstream.
  // Validation failures are code 7; bad CNI_ARGS is code 4; more than one address
  // per family for cniVersion < 0.3.0 is code 1.
  static absl::StatusOr<Config> Parse(const CmdArgs& args);
};

}  // namespace cni::static_ipam

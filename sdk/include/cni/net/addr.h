// Interface addresses (IPv4 and IPv6) through an rtnetlink socket.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cni/base/ip.h"
#include "cni/net/netlink.h"

namespace cni::net {

// One address as the kernel lists it.
struct AddressInfo {
  int ifindex = 0;       // the link it is on
  IpPrefix prefix;       // the address with its prefix length ("10.1.2.3/24")
  int scope = 0;         // RT_SCOPE_*: 0 universe, 253 link, 254 host
  uint32_t flags = 0;    // IFA_F_* (IFA_F_TENTATIVE, IFA_F_DADFAILED, IFA_F_NODAD...)
};

// How AddAddress adds an address.
struct AddressOptions {
  // IFA_F_* flags to add with, e.g. IFA_F_NODAD to skip IPv6 duplicate address
  // detection (the address is usable at once, never "tentative").
  uint32_t flags = 0;
  // IPv4 only: set the broadcast address (host bits all ones) for prefixes
  // shorter than /31, as upstream's netlink library does.
  bool auto_broadcast = true;
};

// Adds `prefix` to link `ifindex`. An address already present is
// absl::AlreadyExists: `adding address 10.1.2.3/24 to "eth0": File exists`
// (the link by name, or "link #4" when it cannot be looked up).
absl::Status AddAddress(NetlinkSocket& sock, int ifindex, const IpPrefix& prefix,
                        const AddressOptions& opts = {});

// Removes `prefix` from link `ifindex`; a missing address is absl::NotFound.
absl::Status DeleteAddress(NetlinkSocket& sock, int ifindex, const IpPrefix& prefix);

// Addresses on link `ifindex` (0: every link), optionally of one family.
absl::StatusOr<std::vector<AddressInfo>> ListAddresses(NetlinkSocket& sock, int ifindex = 0,
                                                       std::optional<Family> family = {});

}  // namespace cni::net

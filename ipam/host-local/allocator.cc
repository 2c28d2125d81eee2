#include "allocator.h"

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"

namespace cni::hostlocal {
using ipam::MakeIpConfig;

absl::StatusOr<IpConfig> Allocator::GetRequested(absl::string_view id, absl::string_view ifname,
                                                 const net::IpAddress& ip) {
  const Range* r = RangeFor(set_, ip);
  if (r == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(ip.ToString(), " not in range set ", RangeSetToString(set_)));
  }
  if (ip == r->gateway) {
    return absl::InvalidArgumentError(
        absl::StrCat("requested ip ", ip.ToString(), " is subnet's gateway"));
  }
  ASSIGN_OR_RETURN(bool reserved, store_.Reserve(id, ifname, ip, range_id_));
  if (!reserved) {
    return absl::UnavailableError(absl::StrCat("requested IP address ", ip.ToString(),
                                               " is not available in range set ",
                                               RangeSetToString(set_)));
  }
  return MakeIpConfig(ip, *r);
}

absl::StatusOr<IpConfig> Allocator::Get(absl::string_view id, absl::string_view ifname,
                                        std::optional<net::IpAddress> requested) {
  if (requested) return GetRequested(id, ifname, *requested);

  // The spec forbids two addresses from one range set for one attachment.
  ASSIGN_OR_RETURN(std::vector<net::IpAddress> mine, store_.GetByAttachment(id, ifname));
  for (const net::IpAddress& ip : mine) {
    if (RangeSetContains(set_, ip)) {
      return absl::AlreadyExistsError(absl::StrCat(ip.ToString(), " has been allocated to ", id,
                                                   ", duplicate allocation is not allowed"));
    }
  }

  // Probe candidates with O_EXCL creates: after the last reserved address the
  // pool is usually free, so this touches a handful of files whatever the
  // pool's size. If the candidates keep being taken (a nearly full pool), one
  // directory listing tells which are free instead of a create per address.
  RangeIter iter(set_, store_.LastReservedIp(range_id_));
  int misses = 0;
  std::optional<IpAddressSet> taken;
  while (auto candidate = iter.Next()) {
    const auto& [ip, range] = *candidate;
    if (taken && taken->contains(ip)) continue;
    ASSIGN_OR_RETURN(bool reserved, store_.Reserve(id, ifname, ip, range_id_));
    if (reserved) return MakeIpConfig(ip, *range);
    if (!taken && ++misses >= kProbeLimit) {
      ASSIGN_OR_RETURN(taken, store_.ReservedAddresses());
    }
  }
  return absl::ResourceExhaustedError(
      absl::StrCat("no IP addresses available in range set: ", RangeSetToString(set_)));
}

}  // namespace cni::hostlocal

// Address allocation from one range set: round-robin after the last reserved
// address, as upstream's IPAllocator does, but without reading the store.
#pragma once

#include <optional>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/base/ip.h"
#include "cni/protocol/types.h"
#include "config.h"
#include "store.h"

namespace cni::hostlocal {

using ipam::RangeIter;

class Allocator {
 public:
  // Consecutive taken candidates after which the allocator stops probing file
  // by file and lists the directory once instead (a nearly full pool).
  static constexpr int kProbeLimit = 64;

  Allocator(const RangeSet& set, Store& store, int range_id)
      : set_(set), store_(store), range_id_(range_id) {}

  // Reserves `requested` (must lie in the set) or the next free address.
  // The store must be locked.
  absl::StatusOr<IpConfig> Get(absl::string_view id, absl::string_view ifname,
                               std::optional<net::IpAddress> requested);

 private:
  absl::StatusOr<IpConfig> GetRequested(absl::string_view id, absl::string_view ifname,
                                        const net::IpAddress& ip);

  const RangeSet& set_;
  Store& store_;
  int range_id_;
};

}  // namespace cni::hostlocal

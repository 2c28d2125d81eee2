// Address allocation from one range set: round-robin after the last reserved
// address, as upstream's IPAllocator does, but without reading the store.
#pragma once

#include <optional>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/net/ip.h"
#include "cni/types.h"
#include "config.h"
#include "store.h"

namespace cni::hostlocal {

// Walks a range set starting just after `last_reserved` (when it lies in the
// set), wrapping through every range, skipping gateways, and ending after the
// last reserved address itself has been offered. Same order as upstream.
class RangeIter {
 public:
  RangeIter(const RangeSet& set, std::optional<net::IpAddress> last_reserved);
  // The next candidate and its range, or nullopt once every address was offered.
  std::optional<std::pair<net::IpAddress, const Range*>> Next();

 private:
  const RangeSet& set_;
  size_t range_idx_ = 0;
  std::optional<net::IpAddress> cur_;
  std::optional<net::IpAddress> start_;
};

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

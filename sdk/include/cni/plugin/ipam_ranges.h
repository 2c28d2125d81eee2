// Address ranges for IPAM plugins: host-local's "ranges" configuration (range
// sets of {subnet, rangeStart, rangeEnd, gateway}, the legacy single range,
// runtimeConfig.ipRanges), its routes, resolv.conf parsing, the requested IPs
// (CNI_ARGS IP, args.cni.ips, runtimeConfig.ips) and the round-robin walk over
// a range set. Shared by every allocator that reads upstream's keys
// (host-local, etcd-ipam), so they parse and hand out addresses the same way.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/base/ip.h"
#include "cni/base/json.h"
#include "cni/protocol/types.h"

namespace cni::ipam {

// One allocatable range inside a subnet. After Canonicalize() every field is set.
struct Range {
  net::IpPrefix subnet;       // network address (no host bits) and prefix length
  net::IpAddress range_start;  // first address handed out
  net::IpAddress range_end;    // last address handed out
  net::IpAddress gateway;      // never handed out; the result's gateway

  // Fills defaults (gateway = network+1, rangeStart = network+1, rangeEnd = last
  // usable address) and validates (a given gateway must lie in the subnet). `has_*` say which fields the user gave.
  // Errors are code 7 with upstream's wording.
  absl::Status Canonicalize(bool has_start, bool has_end, bool has_gateway);

  // In the subnet and within [range_start, range_end].
  bool Contains(const net::IpAddress& ip) const;
  // Shares an address with `other` (same family).
  bool Overlaps(const Range& other) const;
  std::string ToString() const;  // "start-end", as upstream prints it
};

// Addresses from one RangeSet go to one interface address: an allocator takes
// exactly one IP per set.
using RangeSet = std::vector<Range>;

// Some range of `set` contains `ip`.
bool RangeSetContains(const RangeSet& set, const net::IpAddress& ip);
// The range of `set` that contains `ip`, nullptr if none.
const Range* RangeFor(const RangeSet& set, const net::IpAddress& ip);
// Some range of `a` overlaps some range of `b`.
bool RangeSetsOverlap(const RangeSet& a, const RangeSet& b);
// "start-end,start-end", as upstream prints a range set.
std::string RangeSetToString(const RangeSet& set);

// Upstream canonicalises with Go's To4(): an IPv4-mapped IPv6 address
// ("::ffff:10.0.0.1") is the IPv4 address.
net::IpAddress CanonicalIp(const net::IpAddress& ip);

// The "ipam" object of a network configuration `raw`: absent or null is code 7
// ("IPAM config missing 'ipam' key", upstream's words), not an object code 6.
absl::StatusOr<const Json*> IpamObject(const Json& raw);

// What every allocator of host-local's kind reads from the configuration.
struct RangeKeys {
  std::vector<RangeSet> ranges;               // ParseRangeSets
  std::vector<Route> routes;                  // ParseRoutes
  std::vector<net::IpAddress> requested_ips;  // RequestedIps
};

// RequestedIps, ParseRangeSets and ParseRoutes in that order (the first error wins).
absl::StatusOr<RangeKeys> ParseRangeKeys(const Json& raw, const Json& ipam,
                                         absl::string_view cni_args,
                                         absl::string_view cni_version);

// The configuration keys ParseRangeKeys reads, for an IPAM plugin's KeyNames:
// those of the ipam object by name ("ranges", the legacy single range's
// "subnet", "rangeStart", "rangeEnd", "gateway", and "routes"), the others
// by their path ("runtimeConfig.ipRanges", "args.cni.ips", "runtimeConfig.ips").
// CNI_ARGS IP is not a configuration key.
std::vector<std::string> RangeKeyNames();

// Range sets: runtimeConfig.ipRanges (from `raw`, the whole network
// configuration), then the legacy single range at the ipam level, then
// "ranges"; each validated, none overlapping another. More than one set per
// family needs cniVersion >= 0.3.0 (code 1).
absl::StatusOr<std::vector<RangeSet>> ParseRangeSets(const Json& raw, const Json& ipam,
                                                     absl::string_view cni_version);

// Requested IPs, in upstream's order: CNI_ARGS IP, args.cni.ips,
// runtimeConfig.ips; "<ip>[/<len>]"; duplicates dropped.
absl::StatusOr<std::vector<net::IpAddress>> RequestedIps(const Json& raw,
                                                         absl::string_view cni_args);

// The ipam object's "routes" (absent or null: none).
absl::StatusOr<std::vector<Route>> ParseRoutes(const Json& ipam);

// Parses resolv.conf text into DNS settings (nameserver, domain, search, options),
// the way upstream's parseResolvConf does.
Dns ParseResolvConf(absl::string_view text);

// Takes the first requested address that lies in `set` out of `requested`.
std::optional<net::IpAddress> TakeRequested(const RangeSet& set,
                                            std::vector<net::IpAddress>& requested);

// The error for requested addresses no range set took (upstream's wording).
absl::Status UnusedRequestedIps(const std::vector<net::IpAddress>& requested);

// The result entry for `ip` allocated from range `r`.
IpConfig MakeIpConfig(const net::IpAddress& ip, const Range& r);

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

}  // namespace cni::ipam

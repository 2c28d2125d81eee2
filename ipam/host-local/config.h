// host-local configuration: parsing, validation and defaults.
//
// Mirrors upstream's allocator.LoadIPAMConfig: the legacy single range at the
// ipam level and runtimeConfig.ipRanges are prepended to "ranges"; every range is
// canonicalised (defaults filled in) and checked before anything touches the disk.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/json.h"
#include "cni/net/ip.h"
#include "cni/skel.h"
#include "cni/types.h"

namespace cni::hostlocal {

inline constexpr absl::string_view kDefaultDataDir = "/var/lib/cni/networks";

// One allocatable range inside a subnet. After Canonicalize() every field is set.
struct Range {
  net::IpPrefix subnet;  // network address (no host bits) and prefix length
  net::IpAddress range_start;
  net::IpAddress range_end;
  net::IpAddress gateway;

  // Fills defaults (gateway = network+1, rangeStart = network+1, rangeEnd = last
  // usable address) and validates (a given gateway must lie in the subnet). `has_*` say which fields the user gave.
  // Errors are code 7 with upstream's wording.
  absl::Status Canonicalize(bool has_start, bool has_end, bool has_gateway);

  // In the subnet and within [range_start, range_end].
  bool Contains(const net::IpAddress& ip) const;
  bool Overlaps(const Range& other) const;
  std::string ToString() const;  // "start-end", as upstream prints it
};

// Addresses from one RangeSet go to one interface address: the allocator takes
// exactly one IP per set.
using RangeSet = std::vector<Range>;

bool RangeSetContains(const RangeSet& set, const net::IpAddress& ip);
const Range* RangeFor(const RangeSet& set, const net::IpAddress& ip);
bool RangeSetsOverlap(const RangeSet& a, const RangeSet& b);
std::string RangeSetToString(const RangeSet& set);

struct Config {
  std::string name;  // network name: the store directory under data_dir
  std::string cni_version;
  std::string data_dir = std::string(kDefaultDataDir);
  std::string resolv_conf;  // "" when absent
  std::vector<RangeSet> ranges;
  std::vector<Route> routes;
  // Requested IPs: CNI_ARGS IP, then args.cni.ips, then runtimeConfig.ips
  // (upstream concatenates them in this order); duplicates removed.
  std::vector<net::IpAddress> requested_ips;

  // <data_dir>/<name>
  std::string StoreDir() const;

  // Parses the whole network configuration (args.conf, as received on stdin)
  // and the raw CNI_ARGS. Never touches the filesystem (resolvConf is read by
  // ADD, the only command that needs it).
  static absl::StatusOr<Config> Parse(const CmdArgs& args);
};

// Parses resolv.conf text into DNS settings (nameserver, domain, search, options),
// the way upstream's parseResolvConf does.
Dns ParseResolvConf(absl::string_view text);

}  // namespace cni::hostlocal

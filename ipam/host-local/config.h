// host-local configuration: parsing, validation and defaults.
//
// Mirrors upstream's allocator.LoadIPAMConfig (the range parsing itself is
// cni/plugin/ipam_ranges.h): the legacy single range at the
// ipam level and runtimeConfig.ipRanges are prepended to "ranges"; every range is
// canonicalised (defaults filled in) and checked before anything touches the disk.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/base/ip.h"
#include "cni/base/json.h"
#include "cni/plugin/ipam_ranges.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"

namespace cni::hostlocal {

inline constexpr absl::string_view kDefaultDataDir = "/var/lib/cni/networks";

// The range types are the SDK's (cni/plugin/ipam_ranges.h), shared with etcd-ipam.
using ipam::Range;
using ipam::RangeFor;
using ipam::RangeSet;
using ipam::RangeSetContains;
using ipam::RangeSetsOverlap;
using ipam::RangeSetToString;
using ipam::ParseResolvConf;

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
  // The configuration keys Parse reads: those of the ipam object by name,
  // the others by their path ("runtimeConfig.ips"). The README's key table
  // lists exactly these (tests/unit/readme_keys).
  static std::vector<std::string> KeyNames();
};

}  // namespace cni::hostlocal

// Fuzz target: the range-based IPAM keys (cni/plugin/ipam_ranges.h) that host-local
// and etcd-ipam read from untrusted configurations: range sets, the legacy
// range, runtimeConfig.ipRanges, routes, requested IPs from the configuration
// and from CNI_ARGS, and a walk over every parsed range set. Must never crash,
// hang or leak, whatever the bytes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "cni/base/json.h"
#include "cni/plugin/ipam_ranges.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  // The first line is CNI_ARGS, the rest the configuration.
  size_t nl = bytes.find('\n');
  absl::string_view cni_args = nl == absl::string_view::npos ? absl::string_view() : bytes.substr(0, nl);
  absl::StatusOr<cni::Json> raw =
      cni::ParseJson(nl == absl::string_view::npos ? bytes : bytes.substr(nl + 1));
  if (!raw.ok()) return 0;
  absl::StatusOr<const cni::Json*> ipam = cni::ipam::IpamObject(*raw);
  if (!ipam.ok()) return 0;
  absl::StatusOr<cni::ipam::RangeKeys> keys =
      cni::ipam::ParseRangeKeys(*raw, **ipam, cni_args, "1.1.0");
  if (!keys.ok()) return 0;
  std::vector<cni::net::IpAddress> requested = keys->requested_ips;
  for (const cni::ipam::RangeSet& set : keys->ranges) {
    (void)cni::ipam::TakeRequested(set, requested);
    (void)cni::ipam::RangeSetToString(set);
    // A bounded walk: the first candidates after the first range's end.
    cni::ipam::RangeIter iter(set, set.front().range_end);
    for (int i = 0; i < 64; ++i) {
      auto c = iter.Next();
      if (!c) break;
      (void)cni::ipam::MakeIpConfig(c->first, *c->second);
    }
  }
  (void)cni::ipam::UnusedRequestedIps(requested);
  return 0;
}

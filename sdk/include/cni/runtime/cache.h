// The runtime side, part 2: libcni's result cache, byte for byte, so a node can
// move between a libcni runtime and one built on us without losing the results
// that CHECK and DEL need.
//
// File: <cacheDir>/results/<network>-<containerID>-<ifname>, mode 0600, in a
// directory made with mode 0700. Contents (libcni's cachedInfo, keys in this
// order, empty optional ones left out as Go's omitempty does):
//   {"kind":"cniCacheV1","containerId":..,"config":<base64 of the list bytes>,
//    "ifName":..,"networkName":..,"netns":..,"cniArgs":[["K","V"],..],
//    "capabilityArgs":{..},"result":{..}}
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/base/json.h"

namespace cni::runtime {

// libcni's default cache directory.
inline constexpr absl::string_view kDefaultCacheDir = "/var/lib/cni";
// The "kind" of the current cache format.
inline constexpr absl::string_view kCacheKindV1 = "cniCacheV1";

// One cached attachment (libcni's cachedInfo).
struct CacheEntry {
  std::string container_id;  // "containerId"
  std::string config;        // the list's bytes ("config", base64 on disk)
  std::string ifname;        // "ifName"
  std::string network;       // "networkName"
  std::string netns;         // "netns" (omitted when empty)
  std::vector<std::pair<std::string, std::string>> cni_args;  // "cniArgs" (omitted when empty)
  Json capability_args;      // "capabilityArgs" (omitted when null or empty)
  Json result;               // "result" (omitted when null)
};

// <cache_dir>/results/<network>-<container_id>-<ifname>. Code 7 when any of the
// three is empty (libcni refuses too).
absl::StatusOr<std::string> CacheFilePath(absl::string_view cache_dir, absl::string_view network,
                                          absl::string_view container_id, absl::string_view ifname);

// The file contents, exactly as Go's encoding/json writes them.
std::string EncodeCacheEntry(const CacheEntry& entry);
// Parses a cache file. Not JSON, or a kind other than cniCacheV1: code 6.
absl::StatusOr<CacheEntry> DecodeCacheEntry(absl::string_view bytes);

// Writes `entry` to its file (atomically: a temp file renamed over it).
absl::Status WriteCacheEntry(absl::string_view cache_dir, const CacheEntry& entry);

// Go's json.Marshal output for a value nlohmann holds: compact, object keys
// sorted (nlohmann already sorts), and '<', '>', '&', U+2028, U+2029 escaped
// as \u003c etc. (Go's HTML-safe default). Keeps our cache and the "config"
// bytes of an upconverted .conf identical to libcni's.
std::string GoMarshal(const Json& value);

}  // namespace cni::runtime

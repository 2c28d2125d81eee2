// libcni's result cache format (libcni/api.go, cachedInfo), byte-compatible.
#include "cni/runtime/cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "cni/base/error.h"
#include "cni/base/fs.h"
#include "cni/base/status_macros.h"

namespace cni::runtime {
namespace {

namespace fs = std::filesystem;

// One "key":value member in Go's compact form.
void Member(std::string& out, absl::string_view key, const std::string& value_json) {
  if (out.size() > 1) out += ',';
  absl::StrAppend(&out, GoMarshal(Json(std::string(key))), ":", value_json);
}

}  // namespace

std::string GoMarshal(const Json& value) {
  // Inside JSON text these characters can only occur in strings, so a plain
  // replacement is exactly Go's escaping.
  return absl::StrReplaceAll(value.dump(), {{"<", "\\u003c"},
                                            {">", "\\u003e"},
                                            {"&", "\\u0026"},
                                            {"\xE2\x80\xA8", "\\u2028"},
                                            {"\xE2\x80\xA9", "\\u2029"}});
}

absl::StatusOr<std::string> CacheFilePath(absl::string_view cache_dir, absl::string_view network,
                                          absl::string_view container_id, absl::string_view ifname) {
  if (network.empty() || container_id.empty() || ifname.empty()) {
    return Error(ErrorCode::kInvalidNetworkConfig,
                 absl::StrCat("cache file path requires network name (\"", network, "\"), container ID (\"",
                              container_id, "\"), and interface name (\"", ifname, "\")"));
  }
  return (fs::path(std::string(cache_dir)) / "results" /
          absl::StrCat(network, "-", container_id, "-", ifname)).string();
}

std::string EncodeCacheEntry(const CacheEntry& e) {
  // Field order and omitempty exactly as Go marshals libcni's cachedInfo.
  std::string out = "{";
  Member(out, "kind", GoMarshal(Json(std::string(kCacheKindV1))));
  Member(out, "containerId", GoMarshal(Json(e.container_id)));
  // Go encodes []byte as standard, padded base64 (and null when nil).
  Member(out, "config", GoMarshal(Json(absl::Base64Escape(e.config))));
  Member(out, "ifName", GoMarshal(Json(e.ifname)));
  Member(out, "networkName", GoMarshal(Json(e.network)));
  if (!e.netns.empty()) Member(out, "netns", GoMarshal(Json(e.netns)));
  if (!e.cni_args.empty()) {
    Json args = Json::array();
    for (const auto& [k, v] : e.cni_args) args.push_back(Json::array({k, v}));
    Member(out, "cniArgs", GoMarshal(args));
  }
  if (e.capability_args.is_object() && !e.capability_args.empty()) {
    Member(out, "capabilityArgs", GoMarshal(e.capability_args));
  }
  if (!e.result.is_null() && !(e.result.is_object() && e.result.empty())) {
    Member(out, "result", GoMarshal(e.result));
  }
  out += '}';
  return out;
}

absl::StatusOr<CacheEntry> DecodeCacheEntry(absl::string_view bytes) {
  ASSIGN_OR_RETURN(Json doc, ParseJson(bytes));
  auto bad = [](absl::string_view what) {
    return Error(ErrorCode::kDecodingFailure, absl::StrCat("cache entry: ", what));
  };
  if (!doc.is_object()) return bad("not an object");
  auto str = [&](const char* key, std::string& out) -> bool {
    auto it = doc.find(key);
    if (it == doc.end() || it->is_null()) return true;
    if (!it->is_string()) return false;
    out = it->get<std::string>();
    return true;
  };
  std::string kind, config_b64;
  CacheEntry e;
  if (!str("kind", kind) || !str("containerId", e.container_id) || !str("config", config_b64) ||
      !str("ifName", e.ifname) || !str("networkName", e.network) || !str("netns", e.netns)) {
    return bad("a field has the wrong type");
  }
  if (kind != kCacheKindV1) return bad(absl::StrCat("wrong kind \"", kind, "\""));
  if (!absl::Base64Unescape(config_b64, &e.config)) return bad("config is not base64");
  if (auto it = doc.find("cniArgs"); it != doc.end() && !it->is_null()) {
    if (!it->is_array()) return bad("cniArgs is not a list");
    for (const Json& pair : *it) {
      if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string() || !pair[1].is_string()) {
        return bad("cniArgs entry is not a [key, value] pair");
      }
      e.cni_args.emplace_back(pair[0].get<std::string>(), pair[1].get<std::string>());
    }
  }
  if (auto it = doc.find("capabilityArgs"); it != doc.end() && !it->is_null()) {
    if (!it->is_object()) return bad("capabilityArgs is not an object");
    e.capability_args = *it;
  }
  if (auto it = doc.find("result"); it != doc.end() && !it->is_null()) {
    if (!it->is_object()) return bad("result is not an object");
    e.result = *it;
  }
  return e;
}

absl::Status WriteCacheEntry(absl::string_view cache_dir, const CacheEntry& entry) {
  ASSIGN_OR_RETURN(std::string path,
                   CacheFilePath(cache_dir, entry.network, entry.container_id, entry.ifname));
  // libcni: os.MkdirAll(dir, 0700), the file 0600.
  const std::string dir = fs::path(path).parent_path().string();
  RETURN_IF_ERROR(MkdirAll(dir, 0700));
  ::chmod(dir.c_str(), 0700);
  return WriteFileAtomic(path, EncodeCacheEntry(entry), {.mode = 0600});
}

}  // namespace cni::runtime

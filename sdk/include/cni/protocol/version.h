// CNI versions: the supported set, comparison, result conversion between every
// pair of versions, and the VERSION command's answer.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/base/json.h"
#include "cni/protocol/types.h"

namespace cni {

// The newest CNI version: what the in-memory Result models and VERSION reports.
inline constexpr absl::string_view kCurrentVersion = "1.1.0";

// Every version this SDK speaks, oldest first.
const std::vector<std::string>& AllVersions();

// The supported versions from `oldest` on (a plugin whose upstream starts
// later, e.g. firewall at 0.4.0, vrf at 0.3.1), oldest first.
std::vector<std::string> VersionsFrom(absl::string_view oldest);

// A CNI version number.
struct SemVer {
  int major = 0, minor = 0, patch = 0;  // "major.minor.patch"
  // Orders by major, then minor, then patch.
  friend auto operator<=>(const SemVer&, const SemVer&) = default;
};
// Parses "major.minor.patch"; "" means "0.1.0" as the spec says. Code 1 if malformed.
absl::StatusOr<SemVer> ParseVersion(absl::string_view v);

// Compares two version strings; malformed ones sort first.
int CompareVersions(absl::string_view a, absl::string_view b);
// True if a >= b (both must be well formed; otherwise false).
bool VersionAtLeast(absl::string_view a, absl::string_view b);

// The VERSION answer: {"cniVersion": <config version or current>, "supportedVersions": [...]}.
Json VersionInfoJson(absl::string_view cni_version, const std::vector<std::string>& supported);

// Parses a result document of any supported version (the version is taken from
// its "cniVersion"; if absent, `default_version`). 0.1.0/0.2.0 "ip4"/"ip6" shapes
// and the 0.3.x/0.4.0 per-IP "version" field are understood. Code 6 for malformed
// JSON or wrong types, code 1 for an unsupported version.
absl::StatusOr<Result> ParseResult(const Json& j, absl::string_view default_version = {});
// ParseResult for unparsed text (malformed JSON: code 6).
absl::StatusOr<Result> ParseResult(absl::string_view bytes, absl::string_view default_version = {});

// Prints `result` as the JSON of `version`, with upstream's conversion semantics:
// 0.1.0/0.2.0 take the first IP of each family (routes grouped by family) and fail
// with code 1 ("cannot convert: no valid IP addresses") when there is none;
// 0.3.x/0.4.0 add the per-IP "version"; 1.1-only fields are dropped below 1.1.0.
absl::StatusOr<Json> ResultToJson(const Result& result, absl::string_view version);

// ADD's early check: fails (code 1, as ResultToJson) when `result` cannot be
// printed at the configuration's version (0.1.0 when it names none). skel
// prints only after the handler returns, when a rollback can no longer run.
// Plugins need not call it: skel refuses a version it cannot print at, and
// a result without an address at 0.1.0/0.2.0, before the handler runs
// (RequireResultPrintable); a result with an address prints at every
// version; IpamLease::Commit checks the final result.
absl::Status CheckPrintableAt(const Result& result, const NetConf& conf);

// Converts a result document from its own version to `to_version`.
absl::StatusOr<Json> ConvertResult(const Json& result_json, absl::string_view to_version);

}  // namespace cni

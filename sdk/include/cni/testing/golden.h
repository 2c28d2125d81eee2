// cni::testing (the plugin author's test kit): golden results. A result is
// printed at every CNI version the plugin supports (as skel would print it for
// a configuration of that version) and compared with files kept beside the
// test, one per version: <dir>/<name>@<version>.json. A version the result
// cannot be printed at (0.1.0/0.2.0 without an address) is recorded as
// {"error": {"code": N, "msg": "..."}}, so that failure is pinned too.
//
// To write or refresh the files, run the test with CNI_UPDATE_GOLDEN=1 in the
// environment, then review the diff.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "cni/base/json.h"
#include "cni/protocol/types.h"

namespace cni::testing {

// Which versions CompareGolden prints at, and whether it writes the files.
struct GoldenOptions {
  // The versions to print at; empty: every version the SDK speaks
  // (AllVersions(); pass VersionsFrom("0.3.0") or the plugin's list to narrow).
  std::vector<std::string> versions;
  // Write the files instead of comparing. Default: CNI_UPDATE_GOLDEN=1.
  bool update = UpdateGoldenRequested();

  // True when the environment has CNI_UPDATE_GOLDEN=1.
  static bool UpdateGoldenRequested();
};

// What the golden file for `version` holds for `result`.
Json GoldenDocument(const Result& result, const std::string& version);

// Compares (or, in update mode, writes) the golden files of `result`. Returns
// one line per file that is missing, unreadable or different (with both
// documents); empty when all match or were written.
std::vector<std::string> CompareGolden(const Result& result, const std::filesystem::path& dir,
                                       const std::string& name, const GoldenOptions& options = {});

}  // namespace cni::testing

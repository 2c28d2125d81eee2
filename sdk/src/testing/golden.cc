#include "cni/testing/golden.h"

#include <stdlib.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/protocol/version.h"

namespace cni::testing {

bool GoldenOptions::UpdateGoldenRequested() {
  const char* v = getenv("CNI_UPDATE_GOLDEN");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

Json GoldenDocument(const Result& result, const std::string& version) {
  absl::StatusOr<Json> printed = ResultToJson(result, version);
  if (printed.ok()) return *printed;
  return {{"error", {{"code", CodeOf(printed.status())}, {"msg", std::string(printed.status().message())}}}};
}

std::vector<std::string> CompareGolden(const Result& result, const std::filesystem::path& dir,
                                       const std::string& name, const GoldenOptions& options) {
  const std::vector<std::string>& versions = options.versions.empty() ? AllVersions() : options.versions;
  std::vector<std::string> problems;
  for (const std::string& version : versions) {
    const std::filesystem::path file = dir / absl::StrCat(name, "@", version, ".json");
    const Json want = GoldenDocument(result, version);
    if (options.update) {
      std::error_code ec;
      std::filesystem::create_directories(dir, ec);
      std::ofstream out(file, std::ios::trunc);
      out << want.dump(2) << "\n";
      if (!out.flush()) problems.push_back(absl::StrCat(file.string(), ": cannot write"));
      continue;
    }
    std::ifstream in(file);
    if (!in) {
      problems.push_back(absl::StrCat(file.string(), ": missing (run with CNI_UPDATE_GOLDEN=1 to write it)"));
      continue;
    }
    std::stringstream text;
    text << in.rdbuf();
    Json golden = Json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
    if (golden.is_discarded()) {
      problems.push_back(absl::StrCat(file.string(), ": not JSON"));
    } else if (golden != want) {
      problems.push_back(absl::StrCat(file.string(), ": differs\n  golden: ", golden.dump(),
                                      "\n  result: ", want.dump()));
    }
  }
  return problems;
}

}  // namespace cni::testing

// cni-conformance's command line.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runner.h"

namespace conformance {

// The usage text (--help).
extern const char kUsage[];

// Parses argv without the program name; `env` supplies CNI_PATH when
// --cni-path is not given (else the plugin's own directory is used). A
// request for help is returned as absl::CancelledError.
absl::StatusOr<Options> ParseOptions(const std::vector<std::string>& args,
                                     const std::map<std::string, std::string>& env);

}  // namespace conformance

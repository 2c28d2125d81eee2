// cnitool's logic, apart from main() so the pieces can be read (and tested)
// on their own. Behaviour follows upstream's cnitool (containernetworking/cni,
// cnitool/cmd): same commands, environment variables, container ID and output.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/base/json.h"

namespace cnitool {

// CNI_ARGS "K1=V1;K2=V2": every pair needs exactly one '=' with both sides
// non-empty (upstream's parseArgs).
absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ParseCniArgs(absl::string_view s);

// filepath.Abs: made absolute against the working directory, then cleaned.
std::string AbsPath(absl::string_view path);

// "cnitool-" + the first 10 bytes of sha512(netns path), in hex.
std::string ContainerIdFor(absl::string_view abs_netns);

// A result printed as Go's json.MarshalIndent(result, "", "    ") prints the
// typed result: fields in struct order, 4-space indent, HTML-safe escaping.
std::string PrettyResult(const cni::Json& result);

// Runs the tool: argv without the program name, `env` the environment.
// Returns the exit code; writes to `out` and `err`.
int Main(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
         std::string& out, std::string& err);

}  // namespace cnitool

// Configuration of the loopback plugin. It has no keys of its own; it reads
// the common "dns" and checks prevResult before touching anything.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"

namespace cni::loopback {

struct Config {
  std::optional<Dns> dns;         // the config's "dns", when it sets a field: put into the result
  std::optional<Result> prev;     // prevResult, when chained after another plugin

  // Parses the configuration (args.conf). A malformed prevResult or dns is an
  // error (code 6 or 1) before the namespace is touched.
  static absl::StatusOr<Config> Parse(const CmdArgs& args);
  // The configuration keys Parse reads (its key table's names).
  static std::vector<std::string> KeyNames();
};

}  // namespace cni::loopback

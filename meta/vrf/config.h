// Configuration of the vrf plugin: its keys, parsed and validated before any
// side effect (DESIGN rule 3).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"

namespace cni::vrf {

struct Config {
  std::string vrf_name;  // `vrfname` (required): the VRF device in the container
  uint32_t table = 0;    // `table`: its routing table; 0: the first one no VRF uses

  // prevResult as parsed: ADD and CHECK require one (and fail on a bad one).
  absl::StatusOr<std::optional<Result>> prev_result = std::optional<Result>();

  // `vrfname` missing, empty or not a valid interface name, `table` outside
  // 0 ... 2^32-1: code 7; wrong JSON types: code 6.
  static absl::StatusOr<Config> Parse(const CmdArgs& args);
  // The configuration keys Parse reads (its key table's names and the keys
  // read beside it, with their path: "runtimeConfig.mac"). The README's
  // "## Keys" table lists exactly these (tests/unit/readme_keys).
  static std::vector<std::string> KeyNames();
};

}  // namespace cni::vrf

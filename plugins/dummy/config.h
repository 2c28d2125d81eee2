// Configuration of the dummy plugin, parsed and validated before any side
// effect (DESIGN rule 3).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"

namespace cni::dummy {

struct Config {
  std::string ipam_type;   // required: a dummy link carries only its IPAM addresses
  std::optional<Dns> dns;  // the config's dns, when it sets a field

  // Missing IPAM type: code 7 (upstream's "dummy interface requires an IPAM
  // configuration"). A malformed dns: code 6.
  static absl::StatusOr<Config> Parse(const CmdArgs& args);
  // The configuration keys Parse reads (KeyNamesAndIpam, cni/plugin/plugin_keys.h).
  static std::vector<std::string> KeyNames();
};

}  // namespace cni::dummy

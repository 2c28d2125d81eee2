// Configuration of the vlan plugin, parsed and validated before any side
// effect (DESIGN rule 3). What needs the kernel (the master exists, its MTU)
// is checked by ADD, still before anything is created.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"

namespace cni::vlan {

struct Config {
  std::string master;               // required
  int vlan_id = 0;                  // 0 ... 4094
  int mtu = 0;                      // 0: the master's
  bool link_in_container = false;   // the master lives in the container netns
  std::string ipam_type;            // "" (e.g. "ipam": {}): layer 2 only
  std::optional<Dns> dns;           // the config's dns, when it sets a field

  // Reads args.conf. Wrong types: code 6. Bad values (no master, VLAN ID
  // outside 0-4094, negative MTU, master name): code 7.
  static absl::StatusOr<Config> Parse(const CmdArgs& args);
  // The configuration keys Parse reads (KeyNamesAndIpam, cni/plugin/plugin_keys.h).
  static std::vector<std::string> KeyNames();
};

}  // namespace cni::vlan

// Configuration of the ipvlan plugin, parsed and validated before any side
// effect (DESIGN rule 3). What needs the kernel (the master exists, its MTU)
// and the chained master (prevResult's interface) are settled by ADD, still
// before anything is created.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cni/net/ipvlan.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"

namespace cni::ipvlan {

struct Config {
  // "": prevResult's single interface when chained, else the interface of
  // the default route.
  std::string master;
  net::IpvlanMode mode = net::IpvlanMode::kL2;
  int mtu = 0;                      // 0: the master's
  bool link_in_container = false;   // the master lives in the container netns
  std::string ipam_type;            // "": prevResult's addresses, else layer 2 only
  std::optional<Dns> dns;           // the config's dns, when it sets a field

  // Reads args.conf. Wrong types: code 6. Bad values (mode, negative MTU,
  // master name): code 7.
  static absl::StatusOr<Config> Parse(const CmdArgs& args);
  // The configuration keys Parse reads (KeyNamesAndIpam, cni/plugin/plugin_keys.h).
  static std::vector<std::string> KeyNames();
};

}  // namespace cni::ipvlan

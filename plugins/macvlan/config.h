// Configuration of the macvlan plugin, parsed and validated before any side
// effect (DESIGN rule 3). What needs the kernel (the master exists, its MTU)
// is checked by ADD, still before anything is created.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cni/base/ip.h"
#include "cni/net/macvlan.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"

namespace cni::macvlan {

struct Config {
  std::string master;               // "": the interface of the default route
  net::MacvlanMode mode = net::MacvlanMode::kBridge;
  int mtu = 0;                      // 0: the master's
  // The key "mac", then CNI_ARGS MAC, then runtimeConfig.mac: later wins
  // (upstream's order for macvlan).
  std::optional<net::MacAddress> mac;
  bool link_in_container = false;   // the master lives in the container netns
  uint32_t bc_queue_len = 0;        // "bcqueuelen"; 0: the kernel's default
  std::string ipam_type;            // "" (e.g. "ipam": {}): layer 2 only
  std::optional<Dns> dns;           // the config's dns, when it sets a field

  // Reads args.conf and CNI_ARGS (MAC). Wrong types: code 6. Bad values
  // (mode, MAC, negative MTU, master name): code 7.
  static absl::StatusOr<Config> Parse(const CmdArgs& args);
  // The configuration keys Parse reads (KeyNamesAndIpam, cni/plugin/plugin_keys.h).
  static std::vector<std::string> KeyNames();
};

}  // namespace cni::macvlan

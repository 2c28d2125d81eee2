// Configuration of the tap plugin, parsed and validated before any side
// effect (DESIGN rule 3). What needs the kernel (the bridge exists) is
// checked by ADD, still before anything is created.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cni/base/ip.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"

namespace cni::tap {

struct Config {
  bool multi_queue = false;             // "multiQueue": IFF_MULTI_QUEUE
  int mtu = 0;                          // 0: the kernel's (1500)
  // The key "mac", then CNI_ARGS MAC, then runtimeConfig.mac: later wins.
  std::optional<net::MacAddress> mac;
  std::optional<uint32_t> owner;        // uid that may open the tap
  std::optional<uint32_t> group;        // gid that may open the tap
  std::string selinux_context;          // "selinuxContext": label of the creating process
  std::string bridge;                   // a bridge in the container namespace to enslave to
  std::string ipam_type;                // "": layer 2 only
  std::optional<Dns> dns;               // the config's dns, when it sets a field

  // Wrong types: code 6. Bad values (MTU, owner/group out of uint32, MAC,
  // bridge name): code 7.
  static absl::StatusOr<Config> Parse(const CmdArgs& args);
  // The configuration keys Parse reads (KeyNamesAndIpam, cni/plugin/plugin_keys.h).
  static std::vector<std::string> KeyNames();
};

}  // namespace cni::tap

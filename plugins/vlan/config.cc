#include "config.h"

#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "cni/plugin/config_schema.h"
#include "cni/plugin/plugin_keys.h"
#include "cni/plugin/sublink.h"

namespace cni::vlan {
namespace {

// The shared keys of a link on a master, then the kind's own.
const config::Schema<Config> kKeys = sublink::Keys<Config>(
    {config::Integer("vlanId", &Config::vlan_id, {0, 4094})});

}  // namespace

absl::StatusOr<Config> Config::Parse(const CmdArgs& args) {
  ASSIGN_OR_RETURN(Config c, ParseKeysAndIpam(args, kKeys, "vlan"));
  if (c.master.empty()) {
    // Upstream's words.
    return Error(ErrorCode::kInvalidNetworkConfig,
                 "vlan: \"master\" field is required. It specifies the host interface name to "
                 "create the VLAN for.");
  }
  return c;
}

std::vector<std::string> Config::KeyNames() { return KeyNamesAndIpam(kKeys); }

}  // namespace cni::vlan

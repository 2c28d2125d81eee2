#include "config.h"

#include "cni/config_schema.h"
#include "cni/error.h"
#include "cni/plugin_keys.h"
#include "cni/status_macros.h"

namespace cni::vlan {
namespace {

const config::Schema<Config> kKeys = {
    config::Whole("master", &Config::master, ParseMasterKey),
    config::Integer("vlanId", &Config::vlan_id, {0, 4094}),
    config::Whole("mtu", &Config::mtu, ParseSublinkMtuKey),
    config::Bool("linkInContainer", &Config::link_in_container),
    config::Whole("dns", &Config::dns, ParseDnsKey),
};

}  // namespace

absl::StatusOr<Config> Config::Parse(const CmdArgs& args) {
  Config c;
  RETURN_IF_ERROR(config::ParseKeys(args.conf.raw, kKeys, "vlan", c));
  if (c.master.empty()) {
    // Upstream's words.
    return Error(ErrorCode::kInvalidNetworkConfig,
                 "vlan: \"master\" field is required. It specifies the host interface name to "
                 "create the VLAN for.");
  }
  c.ipam_type = args.conf.ipam_type;
  return c;
}

}  // namespace cni::vlan

#include "config.h"

#include "cni/config_schema.h"
#include "cni/json.h"
#include "cni/plugin_keys.h"
#include "cni/status_macros.h"

namespace cni::ipvlan {
namespace {

// "mode": absent or "" is l2, as upstream.
absl::StatusOr<net::IpvlanMode> ParseModeKey(const Json& raw, absl::string_view) {
  ASSIGN_OR_RETURN(std::optional<std::string> mode, GetString(raw, "mode"));
  ASSIGN_OR_RETURN(net::IpvlanMode parsed, net::ParseIpvlanMode(mode.value_or("")), "ipvlan");
  return parsed;
}

const config::Schema<Config> kKeys = {
    config::Whole("master", &Config::master, ParseMasterKey),
    config::Whole("mode", &Config::mode, ParseModeKey),
    config::Whole("mtu", &Config::mtu, ParseSublinkMtuKey),
    config::Bool("linkInContainer", &Config::link_in_container),
    config::Whole("dns", &Config::dns, ParseDnsKey),
};

}  // namespace

absl::StatusOr<Config> Config::Parse(const CmdArgs& args) {
  Config c;
  RETURN_IF_ERROR(config::ParseKeys(args.conf.raw, kKeys, "ipvlan", c));
  c.ipam_type = args.conf.ipam_type;
  return c;
}

}  // namespace cni::ipvlan

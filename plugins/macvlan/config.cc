#include "config.h"

#include "absl/strings/str_cat.h"
#include "cni/args.h"
#include "cni/config_schema.h"
#include "cni/error.h"
#include "cni/json.h"
#include "cni/plugin_keys.h"
#include "cni/status_macros.h"

namespace cni::macvlan {
namespace {

// "mode": absent or "" is bridge, as upstream.
absl::StatusOr<net::MacvlanMode> ParseModeKey(const Json& raw, absl::string_view) {
  ASSIGN_OR_RETURN(std::optional<std::string> mode, GetString(raw, "mode"));
  ASSIGN_OR_RETURN(net::MacvlanMode parsed, net::ParseMacvlanMode(mode.value_or("")), "macvlan");
  return parsed;
}

const config::Schema<Config> kKeys = {
    config::Whole("master", &Config::master, ParseMasterKey),
    config::Whole("mode", &Config::mode, ParseModeKey),
    config::Whole("mtu", &Config::mtu, ParseSublinkMtuKey),
    config::Bool("linkInContainer", &Config::link_in_container),
    config::Whole("dns", &Config::dns, ParseDnsKey),
};

// The MAC from its three sources, later wins: the key "mac", CNI_ARGS MAC,
// runtimeConfig.mac. Only the winner is parsed (upstream's order).
absl::StatusOr<std::optional<net::MacAddress>> ResolveMac(const CmdArgs& args) {
  std::optional<std::string> text;
  ASSIGN_OR_RETURN(std::optional<std::string> key, GetString(args.conf.raw, "mac"));
  if (key && !key->empty()) text = *key;
  if (!args.args.empty()) {
    ASSIGN_OR_RETURN(CniArgs env, CniArgs::Parse(args.args, {"MAC", "IP"}));
    if (std::optional<std::string> v = env.Mac(); v && !v->empty()) text = *v;
  }
  ASSIGN_OR_RETURN(std::optional<std::string> runtime, GetString(args.conf.runtime_config, "mac"));
  if (runtime && !runtime->empty()) text = *runtime;
  if (!text) return std::nullopt;
  ASSIGN_OR_RETURN(net::MacAddress mac, net::MacAddress::Parse(*text), "macvlan: mac");
  return mac;
}

}  // namespace

absl::StatusOr<Config> Config::Parse(const CmdArgs& args) {
  Config c;
  RETURN_IF_ERROR(config::ParseKeys(args.conf.raw, kKeys, "macvlan", c));
  ASSIGN_OR_RETURN(c.mac, ResolveMac(args));
  c.ipam_type = args.conf.ipam_type;
  return c;
}

}  // namespace cni::macvlan

#include "config.h"

#include "absl/strings/str_cat.h"
#include "cni/config_schema.h"
#include "cni/error.h"
#include "cni/json.h"
#include "cni/plugin_keys.h"
#include "cni/status_macros.h"

namespace cni::macvlan {
namespace {

absl::Status Invalid(absl::string_view msg) {
  return Error(ErrorCode::kInvalidNetworkConfig, absl::StrCat("macvlan: ", msg));
}

// The rows below keep macvlan's own messages (upstream's wording), so they
// read the whole object with a parser of their own.

// "master": "" or absent picks the default route's interface (ADD).
absl::StatusOr<std::string> ParseMasterKey(const Json& raw, absl::string_view) {
  ASSIGN_OR_RETURN(std::optional<std::string> master, GetString(raw, "master"));
  if (!master || master->empty()) return std::string();
  if (absl::Status st = ValidateInterfaceName(*master); !st.ok()) {
    return Invalid(absl::StrCat("master \"", *master, "\": ", st.message()));
  }
  return *master;
}

// "mode": absent or "" is bridge, as upstream.
absl::StatusOr<net::MacvlanMode> ParseModeKey(const Json& raw, absl::string_view) {
  ASSIGN_OR_RETURN(std::optional<std::string> mode, GetString(raw, "mode"));
  ASSIGN_OR_RETURN(net::MacvlanMode parsed, net::ParseMacvlanMode(mode.value_or("")), "macvlan");
  return parsed;
}

// "mtu": 0 (the master's) up to 65535; the bound that matters, the master's
// MTU, is checked by ADD.
absl::StatusOr<int> ParseMtuKey(const Json& raw, absl::string_view) {
  ASSIGN_OR_RETURN(std::optional<int64_t> mtu, GetInt(raw, "mtu"));
  if (!mtu) return 0;
  if (*mtu < 0 || *mtu > 65535) return Invalid(absl::StrCat("invalid MTU ", *mtu));
  return static_cast<int>(*mtu);
}

const config::Schema<Config> kKeys = {
    config::Whole("master", &Config::master, ParseMasterKey),
    config::Whole("mode", &Config::mode, ParseModeKey),
    config::Whole("mtu", &Config::mtu, ParseMtuKey),
    config::Bool("linkInContainer", &Config::link_in_container),
    config::Whole("dns", &Config::dns, ParseDnsKey),
};

}  // namespace

absl::StatusOr<Config> Config::Parse(const CmdArgs& args) {
  Config c;
  RETURN_IF_ERROR(config::ParseKeys(args.conf.raw, kKeys, "macvlan", c));
  ASSIGN_OR_RETURN(c.mac, ResolveMacKeys(args, "macvlan"));
  c.ipam_type = args.conf.ipam_type;
  return c;
}

}  // namespace cni::macvlan

#include "config.h"

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/json.h"
#include "cni/base/status_macros.h"
#include "cni/plugin/config_schema.h"
#include "cni/plugin/plugin_keys.h"

namespace cni::tap {
namespace {

// "bridge": "" or absent means none; else a valid interface name.
absl::StatusOr<std::string> ParseBridgeKey(const config::Field& key, absl::string_view plugin) {
  ASSIGN_OR_RETURN(std::optional<std::string> bridge, key.AsString());
  if (!bridge || bridge->empty()) return std::string();
  if (absl::Status st = ValidateInterfaceName(*bridge); !st.ok()) {
    return Error(ErrorCode::kInvalidNetworkConfig,
                 absl::StrCat(plugin, ": bridge \"", *bridge, "\": ", st.message()));
  }
  return *bridge;
}

// "mtu": 0 (absent) keeps the kernel's; else 68 (ETH_MIN_MTU) up to 65521
// (tun's largest), so the kernel is never asked for one it refuses.
absl::StatusOr<int> ParseMtuKey(const config::Field& key, absl::string_view plugin) {
  ASSIGN_OR_RETURN(std::optional<int64_t> mtu, key.AsInt());
  if (!mtu || *mtu == 0) return 0;
  if (*mtu < 68 || *mtu > 65521) {
    return Error(ErrorCode::kInvalidNetworkConfig,
                 absl::StrCat(plugin, ": mtu ", *mtu, " is out of range (68-65521, or 0 for the default)"));
  }
  return static_cast<int>(*mtu);
}

constexpr config::Range kId = {0, 0xFFFFFFFFLL};

const config::Schema<Config> kKeys = {
    config::Bool("multiQueue", &Config::multi_queue),
    config::Parsed("mtu", &Config::mtu, ParseMtuKey),
    config::Integer("owner", &Config::owner, kId),
    config::Integer("group", &Config::group, kId),
    config::String("selinuxContext", &Config::selinux_context),
    config::Parsed("bridge", &Config::bridge, ParseBridgeKey),
    DnsKey<Config>(),
};

}  // namespace

absl::StatusOr<Config> Config::Parse(const CmdArgs& args) {
  return ParseKeysIpamAndMac(args, kKeys, "tap");
}

std::vector<std::string> Config::KeyNames() { return KeyNamesAndIpam(kKeys, MacKeyNames()); }

}  // namespace cni::tap

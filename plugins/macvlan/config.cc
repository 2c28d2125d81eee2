#include "config.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/json.h"
#include "cni/base/status_macros.h"
#include "cni/plugin/config_schema.h"
#include "cni/plugin/plugin_keys.h"
#include "cni/plugin/sublink.h"

namespace cni::macvlan {
namespace {

// The shared keys of a link on a master, then the kind's own.
const config::Schema<Config> kKeys = sublink::Keys<Config>(
    {sublink::ModeKey(&Config::mode, net::ParseMacvlanMode),
     // Upstream's uint32; 0 (or absent) leaves the kernel's default.
     config::Integer("bcqueuelen", &Config::bc_queue_len, {0, UINT32_MAX})});

}  // namespace

absl::StatusOr<Config> Config::Parse(const CmdArgs& args) {
  return ParseKeysIpamAndMac(args, kKeys, "macvlan");
}

std::vector<std::string> Config::KeyNames() { return KeyNamesAndIpam(kKeys, MacKeyNames()); }

}  // namespace cni::macvlan

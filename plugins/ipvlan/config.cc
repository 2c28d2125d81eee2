#include "config.h"

#include "cni/base/json.h"
#include "cni/base/status_macros.h"
#include "cni/plugin/config_schema.h"
#include "cni/plugin/plugin_keys.h"
#include "cni/plugin/sublink.h"

namespace cni::ipvlan {
namespace {

// The shared keys of a link on a master, then the kind's own.
const config::Schema<Config> kKeys = sublink::Keys<Config>(
    {sublink::ModeKey(&Config::mode, net::ParseIpvlanMode)});

}  // namespace

absl::StatusOr<Config> Config::Parse(const CmdArgs& args) {
  return ParseKeysAndIpam(args, kKeys, "ipvlan");
}

std::vector<std::string> Config::KeyNames() { return KeyNamesAndIpam(kKeys); }

}  // namespace cni::ipvlan

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
  Config c;
  RETURN_IF_ERROR(config::ParseKeys(args.conf.raw, kKeys, "ipvlan", c));
  c.ipam_type = args.conf.ipam_type;
  return c;
}

std::vector<std::string> Config::KeyNames() {
  std::vector<std::string> names = config::KeyNames(kKeys);
  names.insert(names.end(), {"ipam"});
  return names;
}

}  // namespace cni::ipvlan

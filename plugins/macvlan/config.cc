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
  Config c;
  RETURN_IF_ERROR(config::ParseKeys(args.conf.raw, kKeys, "macvlan", c));
  ASSIGN_OR_RETURN(c.mac, ResolveMacKeys(args, "macvlan"));
  c.ipam_type = args.conf.ipam_type;
  return c;
}

std::vector<std::string> Config::KeyNames() {
  std::vector<std::string> names = config::KeyNames(kKeys);
  for (std::string& key : MacKeyNames()) names.push_back(std::move(key));
  names.push_back("ipam");
  return names;
}

}  // namespace cni::macvlan

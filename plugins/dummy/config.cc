#include "config.h"

#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "cni/plugin/config_schema.h"
#include "cni/plugin/plugin_keys.h"

namespace cni::dummy {

const config::Schema<Config> kKeys = DnsOnlyKeys<Config>();

absl::StatusOr<Config> Config::Parse(const CmdArgs& args) {
  ASSIGN_OR_RETURN(Config c, ParseKeysAndIpam(args, kKeys, "dummy"));
  if (c.ipam_type.empty()) {
    return Error(ErrorCode::kInvalidNetworkConfig,
                 "dummy: dummy interface requires an IPAM configuration");
  }
  return c;
}

std::vector<std::string> Config::KeyNames() { return KeyNamesAndIpam(kKeys); }

}  // namespace cni::dummy

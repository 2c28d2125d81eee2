#include "config.h"

#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "cni/plugin/config_schema.h"
#include "cni/plugin/plugin_keys.h"

namespace cni::dummy {
namespace {

const config::Schema<Config> kKeys = {
    config::Custom("dns", &Config::dns, Dns::FromConfig),
};

}  // namespace

absl::StatusOr<Config> Config::Parse(const CmdArgs& args) {
  Config c;
  RETURN_IF_ERROR(config::ParseKeys(args.conf.raw, kKeys, "dummy", c));
  c.ipam_type = args.conf.ipam_type;
  if (c.ipam_type.empty()) {
    return Error(ErrorCode::kInvalidNetworkConfig,
                 "dummy: dummy interface requires an IPAM configuration");
  }
  return c;
}

std::vector<std::string> Config::KeyNames() {
  std::vector<std::string> names = config::KeyNames(kKeys);
  names.insert(names.end(), {"ipam"});
  return names;
}

}  // namespace cni::dummy

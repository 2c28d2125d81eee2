#include "config.h"

#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "cni/plugin/config_schema.h"
#include "cni/plugin/plugin_keys.h"

namespace cni::dummy {
namespace {

const config::Schema<Config> kKeys = {
    config::Whole("dns", &Config::dns, ParseDnsKey),
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

}  // namespace cni::dummy

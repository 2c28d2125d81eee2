#include "config.h"

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "cni/plugin/config_schema.h"

namespace cni::vrf {
namespace {

const config::Schema<Config> kKeys = {
    config::String("vrfname", &Config::vrf_name),
    config::Integer("table", &Config::table, {0, UINT32_MAX}),
};

}  // namespace

absl::StatusOr<Config> Config::Parse(const CmdArgs& args) {
  Config c;
  RETURN_IF_ERROR(config::ParseKeys(args.conf.raw, kKeys, "vrf", c));
  if (c.vrf_name.empty()) {
    return Error(ErrorCode::kInvalidNetworkConfig, "vrf: configuration is expected to have a valid vrf name");
  }
  if (absl::Status st = ValidateInterfaceName(c.vrf_name); !st.ok()) {
    return Error(ErrorCode::kInvalidNetworkConfig, absl::StrCat("vrf: \"vrfname\": ", st.message()));
  }
  c.prev_result = ParsePrevResult(args.conf);
  return c;
}

std::vector<std::string> Config::KeyNames() { return config::KeyNames(kKeys); }

}  // namespace cni::vrf

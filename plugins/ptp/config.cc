#include "config.h"

#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "cni/plugin/config_schema.h"
#include "cni/plugin/plugin_keys.h"

namespace cni::ptp {
namespace {

const config::Schema<Config> kKeys = {
    config::Bool("ipMasq", &Config::ip_masq),
    config::Parsed("ipMasqBackend", &Config::ip_masq_backend, ParseIpMasqBackendKey),
    config::Parsed("mtu", &Config::mtu, ParseVethMtuKey),
    config::Custom("dns", &Config::dns, Dns::FromConfig),
};

// The keys DEL and GC read (see TeardownConfig).
const config::Schema<Config> kTeardownKeys = {
    config::Bool("ipMasq", &Config::ip_masq),
};

}  // namespace

absl::StatusOr<TeardownConfig> TeardownConfig::Parse(const CmdArgs& args) {
  TeardownConfig c;
  RETURN_IF_ERROR(config::ParseKeys(args.conf.raw, kTeardownKeys, "ptp", static_cast<Config&>(c)));
  c.ipam_type = args.conf.ipam_type;  // "" (refused by ADD): no IPAM to release
  return c;
}

absl::StatusOr<Config> Config::Parse(const CmdArgs& args) {
  Config c;
  RETURN_IF_ERROR(config::ParseKeys(args.conf.raw, kKeys, "ptp", c));
  // skel has parsed "ipam"; a ptp container without addresses makes no sense.
  if (args.conf.ipam_type.empty()) {
    return Error(ErrorCode::kInvalidNetworkConfig, "ptp: \"ipam\" with a \"type\" is required");
  }
  c.ipam_type = args.conf.ipam_type;
  return c;
}

std::vector<std::string> Config::KeyNames() {
  std::vector<std::string> names = config::KeyNames(kKeys);
  names.insert(names.end(), {"ipam"});
  return names;
}

}  // namespace cni::ptp

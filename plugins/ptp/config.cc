#include "config.h"

#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "cni/fw/backend.h"
#include "cni/plugin/config_schema.h"
#include "cni/plugin/plugin_keys.h"

namespace cni::ptp {

const PluginKeys<Config> Config::kKeys = {
    .plugin = "ptp",
    .table = {
        config::Bool("ipMasq", &Config::ip_masq),
        config::Parsed("ipMasqBackend", &Config::ip_masq_backend, ParseIpMasqBackendKey),
        config::Parsed("mtu", &Config::mtu, ParseVethMtuKey),
        DnsKey<Config>(),
    },
    .teardown = {"ipMasq"},
};

absl::StatusOr<Config> Config::Parse(const CmdArgs& args) {
  ASSIGN_OR_RETURN(Config c, kKeys.Parse(args));
  // A ptp container without addresses makes no sense.
  if (c.ipam_type.empty()) {
    return Error(ErrorCode::kInvalidNetworkConfig, "ptp: \"ipam\" with a \"type\" is required");
  }
  if (c.ip_masq) {
    ASSIGN_OR_RETURN(c.masq_backend, fw::SelectBackend(c.ip_masq_backend), "ptp: ipMasqBackend");
  }
  return c;
}

absl::Status RequireSupported(const Config&) { return absl::OkStatus(); }

}  // namespace cni::ptp

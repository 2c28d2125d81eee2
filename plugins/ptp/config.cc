#include "config.h"

#include "absl/strings/str_cat.h"
#include "cni/error.h"
#include "cni/fw/backend.h"
#include "cni/json.h"
#include "cni/plugin_keys.h"

namespace cni::ptp {
namespace {


absl::Status Invalid(absl::string_view msg) {
  return Error(ErrorCode::kInvalidNetworkConfig, absl::StrCat("ptp: ", msg));
}

}  // namespace

absl::StatusOr<Config> ParseConfig(const NetConf& conf) {
  Config c;
  const Json& raw = conf.raw;

  absl::StatusOr<std::optional<bool>> masq = GetBool(raw, "ipMasq");
  if (!masq.ok()) return masq.status();
  c.ip_masq = masq->value_or(false);

  absl::StatusOr<std::string> backend = ParseIpMasqBackendKey(raw, "ptp");
  if (!backend.ok()) return backend.status();
  c.ip_masq_backend = *std::move(backend);

  absl::StatusOr<int> mtu = ParseVethMtuKey(raw, "ptp");
  if (!mtu.ok()) return mtu.status();
  c.mtu = *mtu;

  // skel has parsed "ipam"; a ptp container without addresses makes no sense.
  if (conf.ipam_type.empty()) return Invalid("\"ipam\" with a \"type\" is required");
  c.ipam_type = conf.ipam_type;

  absl::StatusOr<std::optional<Dns>> dns = ParseDnsKey(raw, "ptp");
  if (!dns.ok()) return dns.status();
  c.dns = *std::move(dns);
  return c;
}

absl::Status RequireSupported(const Config& config) {
  if (!config.ip_masq) return absl::OkStatus();
  return Annotate(fw::SelectBackend(config.ip_masq_backend).status(), "ptp: ipMasqBackend");
}

}  // namespace cni::ptp

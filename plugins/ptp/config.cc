#include "config.h"

#include "absl/strings/str_cat.h"
#include "cni/error.h"
#include "cni/fw/backend.h"
#include "cni/json.h"

namespace cni::ptp {
namespace {

// veth's own limits (ETH_MIN_MTU .. ETH_MAX_MTU): anything else the kernel
// refuses, so refuse it here, before IPAM hands out an address.
constexpr int kMinMtu = 68;
constexpr int kMaxMtu = 65535;

absl::Status Invalid(absl::string_view msg) {
  return Error(ErrorCode::kInvalidNetworkConfig, absl::StrCat("ptp: ", msg));
}

// Upstream's test is "any DNS field non-nil": a present list counts even when
// it is empty, an empty domain does not.
bool DnsFieldsSet(const Json& dns) {
  for (absl::string_view key : {"nameservers", "search", "options"}) {
    const Json* v = FindKey(dns, key);
    if (v != nullptr && !v->is_null()) return true;
  }
  const Json* domain = FindKey(dns, "domain");
  return domain != nullptr && domain->is_string() && !domain->get<std::string>().empty();
}

}  // namespace

absl::StatusOr<Config> ParseConfig(const NetConf& conf) {
  Config c;
  const Json& raw = conf.raw;

  absl::StatusOr<std::optional<bool>> masq = GetBool(raw, "ipMasq");
  if (!masq.ok()) return masq.status();
  c.ip_masq = masq->value_or(false);

  absl::StatusOr<std::optional<std::string>> backend = GetString(raw, "ipMasqBackend");
  if (!backend.ok()) return backend.status();
  if (*backend && !(*backend)->empty()) {
    if (**backend != "iptables" && **backend != "nftables") {
      return Invalid(absl::StrCat("ipMasqBackend must be \"iptables\" or \"nftables\", not \"",
                                  **backend, "\""));
    }
    c.ip_masq_backend = **backend;
  }

  absl::StatusOr<std::optional<int64_t>> mtu = GetInt(raw, "mtu");
  if (!mtu.ok()) return mtu.status();
  if (*mtu && **mtu != 0) {
    if (**mtu < kMinMtu || **mtu > kMaxMtu) {
      return Invalid(absl::StrCat("mtu ", **mtu, " is out of range (", kMinMtu, "-", kMaxMtu,
                                  ", or 0 for the default)"));
    }
    c.mtu = static_cast<int>(**mtu);
  }

  // skel has parsed "ipam"; a ptp container without addresses makes no sense.
  if (conf.ipam_type.empty()) return Invalid("\"ipam\" with a \"type\" is required");
  c.ipam_type = conf.ipam_type;

  if (const Json* dns = FindKey(raw, "dns"); dns != nullptr && !dns->is_null()) {
    if (!dns->is_object()) return Error(ErrorCode::kDecodingFailure, "ptp: \"dns\" is not an object");
    if (DnsFieldsSet(*dns)) {
      absl::StatusOr<Dns> parsed = Dns::FromJson(*dns);
      if (!parsed.ok()) return Annotate(parsed.status(), "ptp: dns");
      c.dns = *std::move(parsed);
    }
  }
  return c;
}

absl::Status RequireSupported(const Config& config) {
  if (!config.ip_masq) return absl::OkStatus();
  return Annotate(fw::SelectBackend(config.ip_masq_backend).status(), "ptp: ipMasqBackend");
}

}  // namespace cni::ptp

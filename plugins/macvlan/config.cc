#include "config.h"

#include "absl/strings/str_cat.h"
#include "cni/args.h"
#include "cni/error.h"
#include "cni/json.h"
#include "cni/plugin_keys.h"
#include "cni/skel.h"

namespace cni::macvlan {
namespace {

absl::Status Invalid(absl::string_view msg) {
  return Error(ErrorCode::kInvalidNetworkConfig, absl::StrCat("macvlan: ", msg));
}

}  // namespace

absl::StatusOr<Config> ParseConfig(const NetConf& conf, absl::string_view cni_args) {
  Config c;
  const Json& raw = conf.raw;

  absl::StatusOr<std::optional<std::string>> master = GetString(raw, "master");
  if (!master.ok()) return master.status();
  if (*master && !(*master)->empty()) {
    if (absl::Status st = ValidateInterfaceName(**master); !st.ok()) {
      return Invalid(absl::StrCat("master \"", **master, "\": ", st.message()));
    }
    c.master = **master;
  }

  absl::StatusOr<std::optional<std::string>> mode = GetString(raw, "mode");
  if (!mode.ok()) return mode.status();
  absl::StatusOr<net::MacvlanMode> m = net::ParseMacvlanMode(mode->value_or(""));
  if (!m.ok()) return Annotate(m.status(), "macvlan");
  c.mode = *m;

  absl::StatusOr<std::optional<int64_t>> mtu = GetInt(raw, "mtu");
  if (!mtu.ok()) return mtu.status();
  if (*mtu) {
    // The upper bound is the master's MTU, checked by ADD.
    if (**mtu < 0 || **mtu > 65535) return Invalid(absl::StrCat("invalid MTU ", **mtu));
    c.mtu = static_cast<int>(**mtu);
  }

  absl::StatusOr<std::optional<bool>> lic = GetBool(raw, "linkInContainer");
  if (!lic.ok()) return lic.status();
  c.link_in_container = lic->value_or(false);

  std::optional<std::string> mac_text;
  absl::StatusOr<std::optional<std::string>> mac = GetString(raw, "mac");
  if (!mac.ok()) return mac.status();
  if (*mac && !(*mac)->empty()) mac_text = **mac;
  if (!cni_args.empty()) {
    absl::StatusOr<CniArgs> args = CniArgs::Parse(cni_args, {"MAC", "IP"});
    if (!args.ok()) return args.status();
    if (std::optional<std::string> v = args->Mac(); v && !v->empty()) mac_text = *v;
  }
  absl::StatusOr<std::optional<std::string>> rc_mac = GetString(conf.runtime_config, "mac");
  if (!rc_mac.ok()) return rc_mac.status();
  if (*rc_mac && !(*rc_mac)->empty()) mac_text = **rc_mac;
  if (mac_text) {
    absl::StatusOr<net::MacAddress> parsed = net::MacAddress::Parse(*mac_text);
    if (!parsed.ok()) return Annotate(parsed.status(), "macvlan: mac");
    c.mac = *parsed;
  }

  c.ipam_type = conf.ipam_type;

  absl::StatusOr<std::optional<Dns>> dns = ParseDnsKey(raw, "macvlan");
  if (!dns.ok()) return dns.status();
  c.dns = *std::move(dns);
  return c;
}

}  // namespace cni::macvlan

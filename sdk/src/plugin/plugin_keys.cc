#include "cni/plugin/plugin_keys.h"

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "cni/protocol/args.h"
#include "cni/protocol/skel.h"

namespace cni {
namespace {

constexpr int kVethMinMtu = 68;
constexpr int kVethMaxMtu = 65535;  // ETH_MAX_MTU, also the bound of a link on a master

absl::Status Invalid(absl::string_view plugin, absl::string_view msg) {
  return Error(ErrorCode::kInvalidNetworkConfig, absl::StrCat(plugin, ": ", msg));
}

bool DnsFieldsSet(const Json& dns) {
  for (absl::string_view key : {"nameservers", "search", "options"}) {
    const Json* v = FindKey(dns, key);
    if (v != nullptr && !v->is_null()) return true;
  }
  const Json* domain = FindKey(dns, "domain");
  return domain != nullptr && domain->is_string() && !domain->get<std::string>().empty();
}

}  // namespace

absl::StatusOr<std::optional<Dns>> ParseDnsKey(const Json& raw, absl::string_view plugin) {
  const Json* dns = FindKey(raw, "dns");
  if (dns == nullptr || dns->is_null()) return std::nullopt;
  if (!dns->is_object()) return Error(ErrorCode::kDecodingFailure, absl::StrCat(plugin, ": \"dns\" is not an object"));
  if (!DnsFieldsSet(*dns)) return std::nullopt;
  ASSIGN_OR_RETURN(Dns parsed, Dns::FromJson(*dns), plugin, ": dns");
  return parsed;
}

absl::StatusOr<int> ParseVethMtuKey(const Json& raw, absl::string_view plugin) {
  ASSIGN_OR_RETURN(std::optional<int64_t> mtu, GetInt(raw, "mtu"));
  if (!mtu || *mtu == 0) return 0;
  if (*mtu < kVethMinMtu || *mtu > kVethMaxMtu) {
    return Invalid(plugin, absl::StrCat("mtu ", *mtu, " is out of range (", kVethMinMtu, "-", kVethMaxMtu,
                                        ", or 0 for the default)"));
  }
  return static_cast<int>(*mtu);
}

absl::StatusOr<std::string> ParseMasterKey(const Json& raw, absl::string_view plugin) {
  ASSIGN_OR_RETURN(std::optional<std::string> master, GetString(raw, "master"));
  if (!master || master->empty()) return std::string();
  if (absl::Status st = ValidateInterfaceName(*master); !st.ok()) {
    return Invalid(plugin, absl::StrCat("master \"", *master, "\": ", st.message()));
  }
  return *master;
}

absl::StatusOr<int> ParseSublinkMtuKey(const Json& raw, absl::string_view plugin) {
  ASSIGN_OR_RETURN(std::optional<int64_t> mtu, GetInt(raw, "mtu"));
  if (!mtu) return 0;
  if (*mtu < 0 || *mtu > kVethMaxMtu) return Invalid(plugin, absl::StrCat("invalid MTU ", *mtu));
  return static_cast<int>(*mtu);
}

absl::StatusOr<std::string> ParseIpMasqBackendKey(const Json& raw, absl::string_view plugin) {
  ASSIGN_OR_RETURN(std::optional<std::string> backend, GetString(raw, "ipMasqBackend"));
  if (!backend || backend->empty()) return std::string();
  if (*backend != "iptables" && *backend != "nftables") {
    return Invalid(plugin, absl::StrCat("ipMasqBackend must be \"iptables\" or \"nftables\", not \"", *backend, "\""));
  }
  return *backend;
}

absl::StatusOr<std::optional<net::MacAddress>> ResolveMacKeys(const CmdArgs& args,
                                                              absl::string_view plugin) {
  std::optional<std::string> text;
  ASSIGN_OR_RETURN(std::optional<std::string> key, GetString(args.conf.raw, "mac"));
  if (key && !key->empty()) text = *key;
  if (!args.args.empty()) {
    ASSIGN_OR_RETURN(CniArgs env, CniArgs::Parse(args.args, {"MAC", "IP"}));
    if (std::optional<std::string> v = env.Mac(); v && !v->empty()) text = *v;
  }
  ASSIGN_OR_RETURN(std::optional<std::string> runtime, GetString(args.conf.runtime_config, "mac"));
  if (runtime && !runtime->empty()) text = *runtime;
  if (!text) return std::nullopt;
  ASSIGN_OR_RETURN(net::MacAddress mac, net::MacAddress::Parse(*text), plugin, ": mac");
  return mac;
}

}  // namespace cni

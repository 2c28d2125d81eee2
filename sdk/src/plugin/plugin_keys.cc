#include "cni/plugin/plugin_keys.h"

#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "cni/protocol/args.h"
#include "cni/protocol/skel.h"

namespace cni {
namespace {

constexpr int kVethMinMtu = 68;
constexpr int kVethMaxMtu = 65535;  // ETH_MAX_MTU, also the bound of a link on a master

}  // namespace

absl::StatusOr<int> ParseVethMtuKey(const config::Field& key, absl::string_view plugin) {
  ASSIGN_OR_RETURN(std::optional<int64_t> mtu, key.AsInt());
  if (!mtu || *mtu == 0) return 0;
  if (*mtu < kVethMinMtu || *mtu > kVethMaxMtu) {
    return InvalidConfig(plugin, absl::StrCat("mtu ", *mtu, " is out of range (", kVethMinMtu, "-", kVethMaxMtu,
                                              ", or 0 for the default)"));
  }
  return static_cast<int>(*mtu);
}

absl::StatusOr<std::string> ParseMasterKey(const config::Field& key, absl::string_view plugin) {
  ASSIGN_OR_RETURN(std::optional<std::string> master, key.AsString());
  if (!master || master->empty()) return std::string();
  if (absl::Status st = ValidateInterfaceName(*master); !st.ok()) {
    return InvalidConfig(plugin, absl::StrCat("master \"", *master, "\": ", st.message()));
  }
  return *master;
}

absl::StatusOr<int> ParseSublinkMtuKey(const config::Field& key, absl::string_view plugin) {
  ASSIGN_OR_RETURN(std::optional<int64_t> mtu, key.AsInt());
  if (!mtu) return 0;
  if (*mtu < 0 || *mtu > kVethMaxMtu) return InvalidConfig(plugin, absl::StrCat("invalid MTU ", *mtu));
  return static_cast<int>(*mtu);
}

absl::StatusOr<std::string> ParseIpMasqBackendKey(const config::Field& key, absl::string_view plugin) {
  ASSIGN_OR_RETURN(std::optional<std::string> backend, key.AsString());
  if (!backend || backend->empty()) return std::string();
  if (*backend != "iptables" && *backend != "nftables") {
    return InvalidConfig(plugin,
                         absl::StrCat("ipMasqBackend must be \"iptables\" or \"nftables\", not \"", *backend, "\""));
  }
  return *backend;
}

namespace {

// One entry of a route list; `where` names it ("routes[1]").
absl::StatusOr<Route> ParseRouteEntry(const Json& entry, const std::string& where, absl::string_view plugin) {
  if (!entry.is_object()) {
    return Error(ErrorCode::kDecodingFailure, absl::StrCat("cannot decode ", where, ": expected an object"));
  }
  ASSIGN_OR_RETURN(std::optional<std::string> dst, GetString(entry, "dst"), where);
  if (!dst) return InvalidConfig(plugin, absl::StrCat(where, " has no \"dst\""));
  Route route;
  ASSIGN_OR_RETURN(net::IpPrefix prefix, net::IpPrefix::Parse(*dst), plugin, ": ", where, ".dst");
  route.dst = prefix.Network();
  ASSIGN_OR_RETURN(std::optional<std::string> gw, GetString(entry, "gw"), where);
  if (gw && !gw->empty()) {
    ASSIGN_OR_RETURN(route.gw, net::IpAddress::Parse(*gw), plugin, ": ", where, ".gw");
    if (route.gw->family() != route.dst.family()) {
      return InvalidConfig(plugin, absl::StrCat(where, ": gateway ", route.gw->ToString(),
                                                " is not of the family of ", route.dst.ToString()));
    }
  }
  for (auto [name, field] : {std::pair{"mtu", &route.mtu}, {"advmss", &route.advmss},
                             {"priority", &route.priority}, {"table", &route.table}, {"scope", &route.scope}}) {
    ASSIGN_OR_RETURN(std::optional<int64_t> v, GetInt(entry, name), where);
    if (v) *field = static_cast<int>(*v);
  }
  return route;
}

}  // namespace

absl::StatusOr<std::vector<Route>> ParseRoutesKey(const config::Field& key, absl::string_view plugin) {
  std::vector<Route> routes;
  ASSIGN_OR_RETURN(std::optional<Json> list, key.AsArray());
  if (!list) return routes;
  for (size_t i = 0; i < list->size(); ++i) {
    ASSIGN_OR_RETURN(Route r, ParseRouteEntry((*list)[i], absl::StrCat(key.name(), "[", i, "]"), plugin));
    routes.push_back(std::move(r));
  }
  return routes;
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

std::vector<std::string> MacKeyNames() { return {"mac", "runtimeConfig.mac"}; }

}  // namespace cni

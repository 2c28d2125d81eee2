#include "absl/strings/string_view.h"
#include "config.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "cni/args.h"
#include "cni/error.h"
#include "cni/version.h"

namespace cni::static_ipam {
namespace {

absl::Status Invalid(absl::string_view msg) { return Error(ErrorCode::kInvalidNetworkConfig, msg); }

absl::StatusOr<Address> ParseAddressObject(const Json& entry, size_t index) {
  if (!entry.is_object()) {
    return Error(ErrorCode::kDecodingFailure, absl::StrCat("ipam.addresses[", index, "] is not an object"));
  }
  absl::StatusOr<std::optional<std::string>> text = GetString(entry, "address");
  if (!text.ok()) return text.status();
  if (!*text) return Invalid(absl::StrCat("ipam.addresses[", index, "] has no \"address\""));
  absl::StatusOr<net::IpPrefix> prefix = net::IpPrefix::Parse(**text);
  if (!prefix.ok()) return Annotate(prefix.status(), absl::StrCat("ipam.addresses[", index, "]"));
  Address a{*prefix, std::nullopt};
  absl::StatusOr<std::optional<std::string>> gw = GetString(entry, "gateway");
  if (!gw.ok()) return gw.status();
  if (*gw && !(*gw)->empty()) {
    absl::StatusOr<net::IpAddress> ip = net::IpAddress::Parse(**gw);
    if (!ip.ok()) return Annotate(ip.status(), absl::StrCat("ipam.addresses[", index, "].gateway"));
    a.gateway = *ip;
  }
  return a;
}

absl::StatusOr<std::vector<Route>> ParseRoutes(const Json& ipam) {
  std::vector<Route> routes;
  absl::StatusOr<std::optional<Json>> list = GetArray(ipam, "routes");
  if (!list.ok()) return list.status();
  if (!*list) return routes;
  // Routes use the result's route shape; reuse the result parser for them.
  absl::StatusOr<Result> parsed =
      ParseResult(Json{{"cniVersion", std::string(kCurrentVersion)}, {"routes", **list}});
  // A route that does not parse is a configuration error (7), whatever the
  // result decoder calls it.
  if (!parsed.ok()) return WithCode(Annotate(parsed.status(), "ipam.routes"), ErrorCode::kInvalidNetworkConfig);
  return parsed->routes;
}

// A list of bare CIDRs (args.cni.ips or runtimeConfig.ips), which replaces every
// other address source.
absl::StatusOr<std::optional<std::vector<Address>>> ParseCidrList(const Json& obj,
                                                                  absl::string_view where) {
  absl::StatusOr<std::optional<std::vector<std::string>>> ips = GetStringList(obj, "ips");
  if (!ips.ok()) return Annotate(ips.status(), where);
  if (!*ips || (*ips)->empty()) return std::optional<std::vector<Address>>();
  std::vector<Address> out;
  for (const std::string& text : **ips) {
    absl::StatusOr<net::IpPrefix> prefix = net::IpPrefix::Parse(text);
    if (!prefix.ok()) {
      return Invalid(absl::StrCat("an entry in ", where, ".ips is not in CIDR notation: \"", text, "\""));
    }
    out.push_back({*prefix, std::nullopt});
  }
  return std::optional<std::vector<Address>>(std::move(out));
}

absl::Status ApplyCniArgs(const CmdArgs& args, std::vector<Address>& addresses) {
  absl::StatusOr<CniArgs> env = CniArgs::Parse(args.args, {"IP", "GATEWAY"});
  if (!env.ok()) return env.status();
  if (std::optional<std::string> ip = env->Ip(); ip && !ip->empty()) {
    for (absl::string_view item : absl::StrSplit(*ip, ',')) {
      absl::StatusOr<net::IpPrefix> prefix = net::IpPrefix::Parse(absl::StripAsciiWhitespace(item));
      if (!prefix.ok()) return Annotate(prefix.status(), "CNI_ARGS IP");
      addresses.push_back({*prefix, std::nullopt});
    }
  }
  if (std::optional<std::string> gws = env->Gateway(); gws && !gws->empty()) {
    for (absl::string_view item : absl::StrSplit(*gws, ',')) {
      absl::StatusOr<net::IpAddress> gw = net::IpAddress::Parse(absl::StripAsciiWhitespace(item));
      if (!gw.ok()) return Annotate(gw.status(), "CNI_ARGS GATEWAY");
      for (Address& a : addresses) {
        if (a.address.Contains(*gw)) a.gateway = *gw;
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CheckPerFamilyLimit(const std::vector<Address>& addresses, absl::string_view version) {
  int v4 = 0, v6 = 0;
  for (const Address& a : addresses) (a.address.is_v4() ? v4 : v6)++;
  // 0.1.0/0.2.0 results carry one ip4 and one ip6 at most.
  if ((v4 > 1 || v6 > 1) && !VersionAtLeast(version, "0.3.0")) {
    return Error(ErrorCode::kIncompatibleVersion,
                 absl::StrCat("CNI version ", version, " does not support more than 1 address per family"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Config> LoadConfig(const CmdArgs& args) {
  const NetConf& conf = args.conf;
  const Json* ipam = FindKey(conf.raw, "ipam");
  if (ipam == nullptr || ipam->is_null()) return Invalid("IPAM config missing 'ipam' key");
  if (!ipam->is_object()) return Error(ErrorCode::kDecodingFailure, "\"ipam\" is not an object");

  Config config;
  absl::StatusOr<std::optional<Json>> list = GetArray(*ipam, "addresses");
  if (!list.ok()) return list.status();
  if (*list) {
    for (size_t i = 0; i < (*list)->size(); ++i) {
      absl::StatusOr<Address> a = ParseAddressObject((**list)[i], i);
      if (!a.ok()) return a.status();
      config.addresses.push_back(*a);
    }
  }
  if (absl::Status s = ApplyCniArgs(args, config.addresses); !s.ok()) return s;

  absl::StatusOr<std::optional<std::vector<Address>>> from_args =
      ParseCidrList(ArgsCni(conf.args), "args.cni");
  if (!from_args.ok()) return from_args.status();
  if (*from_args) config.addresses = **from_args;
  absl::StatusOr<std::optional<std::vector<Address>>> from_runtime =
      ParseCidrList(conf.runtime_config, "runtimeConfig");
  if (!from_runtime.ok()) return from_runtime.status();
  if (*from_runtime) config.addresses = **from_runtime;

  std::string version = conf.cni_version.empty() ? "0.1.0" : conf.cni_version;
  if (absl::Status s = CheckPerFamilyLimit(config.addresses, version); !s.ok()) return s;

  absl::StatusOr<std::vector<Route>> routes = ParseRoutes(*ipam);
  if (!routes.ok()) return routes.status();
  config.routes = *std::move(routes);
  if (const Json* dns = FindKey(*ipam, "dns"); dns != nullptr && !dns->is_null()) {
    absl::StatusOr<Dns> parsed = Dns::FromJson(*dns);
    if (!parsed.ok()) return Annotate(parsed.status(), "ipam.dns");
    config.dns = *parsed;
  }
  return config;
}

}  // namespace cni::static_ipam

#include "config.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "cni/plugin/config_schema.h"
#include "cni/protocol/args.h"
#include "cni/protocol/version.h"

namespace cni::static_ipam {
namespace {

absl::Status Invalid(absl::string_view msg) { return Error(ErrorCode::kInvalidNetworkConfig, msg); }

absl::StatusOr<Address> ParseAddressObject(const Json& entry, size_t index) {
  if (!entry.is_object()) {
    return Error(ErrorCode::kDecodingFailure, absl::StrCat("ipam.addresses[", index, "] is not an object"));
  }
  ASSIGN_OR_RETURN(std::optional<std::string> text, GetString(entry, "address"));
  if (!text) return Invalid(absl::StrCat("ipam.addresses[", index, "] has no \"address\""));
  ASSIGN_OR_RETURN(net::IpPrefix prefix, net::IpPrefix::Parse(*text), "ipam.addresses[", index, "]");
  Address a{prefix, std::nullopt};
  ASSIGN_OR_RETURN(std::optional<std::string> gw, GetString(entry, "gateway"));
  if (gw && !gw->empty()) {
    ASSIGN_OR_RETURN(a.gateway, net::IpAddress::Parse(*gw), "ipam.addresses[", index, "].gateway");
  }
  return a;
}

// The rows below read keys of the "ipam" object; their messages name the key
// by its path ("ipam.routes: ..."), as before the table, so they take no plugin name.

absl::StatusOr<std::vector<Address>> ParseAddresses(const config::Field& key) {
  std::vector<Address> addresses;
  ASSIGN_OR_RETURN(std::optional<Json> list, key.AsArray());
  if (!list) return addresses;
  for (size_t i = 0; i < list->size(); ++i) {
    ASSIGN_OR_RETURN(Address a, ParseAddressObject((*list)[i], i));
    addresses.push_back(a);
  }
  return addresses;
}

absl::StatusOr<std::vector<Route>> ParseRoutes(const config::Field& key) {
  std::vector<Route> routes;
  ASSIGN_OR_RETURN(std::optional<Json> list, key.AsArray());
  if (!list) return routes;
  // Routes use the result's route shape; reuse the result parser for them.
  absl::StatusOr<Result> parsed =
      ParseResult(Json{{"cniVersion", std::string(kCurrentVersion)}, {"routes", *list}});
  // A route that does not parse is a configuration error (7), whatever the
  // result decoder calls it.
  if (!parsed.ok()) return WithCode(Annotate(parsed.status(), "ipam.routes"), ErrorCode::kInvalidNetworkConfig);
  return parsed->routes;
}

absl::StatusOr<Dns> ParseDns(const config::Field& key) {
  const Json* dns = key.value();
  if (dns == nullptr || dns->is_null()) return Dns();
  ASSIGN_OR_RETURN(Dns parsed, Dns::FromJson(*dns), "ipam.dns");
  return parsed;
}

const config::Schema<Config> kIpamKeys = {
    config::Parsed("addresses", &Config::addresses, ParseAddresses),
    config::Parsed("routes", &Config::routes, ParseRoutes),
    config::Parsed("dns", &Config::dns, ParseDns),
};

// The "ipam" object: required, and an object.
absl::StatusOr<const Json*> FindIpam(const NetConf& conf) {
  const Json* ipam = FindKey(conf.raw, "ipam");
  if (ipam == nullptr || ipam->is_null()) return Invalid("IPAM config missing 'ipam' key");
  if (!ipam->is_object()) return Error(ErrorCode::kDecodingFailure, "\"ipam\" is not an object");
  return ipam;
}

// A list of bare CIDRs (args.cni.ips or runtimeConfig.ips), which replaces every
// other address source.
absl::StatusOr<std::optional<std::vector<Address>>> ParseCidrList(const Json& obj,
                                                                  absl::string_view where) {
  ASSIGN_OR_RETURN(std::optional<std::vector<std::string>> ips, GetStringList(obj, "ips"), where);
  if (!ips || ips->empty()) return std::optional<std::vector<Address>>();
  std::vector<Address> out;
  for (const std::string& text : *ips) {
    absl::StatusOr<net::IpPrefix> prefix = net::IpPrefix::Parse(text);
    if (!prefix.ok()) {
      return Invalid(absl::StrCat("an entry in ", where, ".ips is not in CIDR notation: \"", text, "\""));
    }
    out.push_back({*prefix, std::nullopt});
  }
  return std::optional<std::vector<Address>>(std::move(out));
}

absl::Status ApplyCniArgs(const CmdArgs& args, std::vector<Address>& addresses) {
  ASSIGN_OR_RETURN(CniArgs env, CniArgs::Parse(args.args, {"IP", "GATEWAY"}));
  if (std::optional<std::string> ip = env.Ip(); ip && !ip->empty()) {
    for (absl::string_view item : absl::StrSplit(*ip, ',')) {
      ASSIGN_OR_RETURN(net::IpPrefix prefix, net::IpPrefix::Parse(absl::StripAsciiWhitespace(item)),
                       "CNI_ARGS IP");
      addresses.push_back({prefix, std::nullopt});
    }
  }
  if (std::optional<std::string> gws = env.Gateway(); gws && !gws->empty()) {
    for (absl::string_view item : absl::StrSplit(*gws, ',')) {
      ASSIGN_OR_RETURN(net::IpAddress gw, net::IpAddress::Parse(absl::StripAsciiWhitespace(item)),
                       "CNI_ARGS GATEWAY");
      for (Address& a : addresses) {
        if (a.address.Contains(gw)) a.gateway = gw;
      }
    }
  }
  return absl::OkStatus();
}

// Replaces `addresses` with a source of higher precedence, when it is set.
absl::Status OverrideWith(const Json& obj, absl::string_view where, std::vector<Address>& addresses) {
  ASSIGN_OR_RETURN(std::optional<std::vector<Address>> replacement, ParseCidrList(obj, where));
  if (replacement) addresses = *std::move(replacement);
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

absl::StatusOr<Config> Config::Parse(const CmdArgs& args) {
  const NetConf& conf = args.conf;
  ASSIGN_OR_RETURN(const Json* ipam, FindIpam(conf));
  Config config;
  RETURN_IF_ERROR(config::ParseKeys(*ipam, kIpamKeys, "static", config));
  // The address sources, in rising precedence.
  RETURN_IF_ERROR(ApplyCniArgs(args, config.addresses));
  RETURN_IF_ERROR(OverrideWith(ArgsCni(conf.args), "args.cni", config.addresses));
  RETURN_IF_ERROR(OverrideWith(conf.runtime_config, "runtimeConfig", config.addresses));
  std::string version = conf.cni_version.empty() ? "0.1.0" : conf.cni_version;
  RETURN_IF_ERROR(CheckPerFamilyLimit(config.addresses, version));
  return config;
}

}  // namespace cni::static_ipam

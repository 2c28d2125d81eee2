#include "config.h"

#include <unistd.h>

#include <climits>  // HOST_NAME_MAX
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "cni/plugin/config_schema.h"

namespace cni::etcdipam {
namespace {

absl::Status Invalid(absl::string_view msg) { return InvalidConfig("etcd-ipam", msg); }

absl::StatusOr<std::vector<net::IpPrefix>> ParseExclude(const Json& v) {
  if (!v.is_array()) return Error(ErrorCode::kDecodingFailure, "\"exclude\" must be a list of CIDRs");
  std::vector<net::IpPrefix> out;
  for (const Json& item : v) {
    if (!item.is_string()) {
      return Error(ErrorCode::kDecodingFailure, "\"exclude\" must be a list of CIDRs");
    }
    absl::StatusOr<net::IpPrefix> p = net::IpPrefix::Parse(item.get<std::string>());
    if (!p.ok()) {
      return Error(ErrorCode::kInvalidNetworkConfig,
                   absl::StrCat("\"exclude\": \"", item.get<std::string>(), "\" is not a CIDR"));
    }
    out.push_back(*p);
  }
  return out;
}

absl::StatusOr<Dns> ParseDnsKey(const Json& v) {
  ASSIGN_OR_RETURN(Dns dns, Dns::FromJson(v), "\"dns\"");
  return dns;
}

const config::Schema<EtcdConfig> kEtcdKeys = {
    config::StringList("endpoints", &EtcdConfig::endpoints),
    config::String("prefix", &EtcdConfig::prefix, /*empty_keeps_default=*/true),
    config::String("caFile", &EtcdConfig::ca_file),
    config::String("certFile", &EtcdConfig::cert_file),
    config::String("keyFile", &EtcdConfig::key_file),
    config::Integer("timeout", &EtcdConfig::timeout_seconds, {1, 3600}),
};

absl::StatusOr<EtcdConfig> ParseEtcd(const Json& v) {
  if (!v.is_object()) return Error(ErrorCode::kDecodingFailure, "\"etcd\" must be an object");
  EtcdConfig e;
  RETURN_IF_ERROR(config::ParseKeys(v, kEtcdKeys, "\"etcd\"", e));
  return e;
}

const config::Schema<Config> kIpamKeys = {
    config::Custom("dns", &Config::dns, ParseDnsKey),
    config::Custom("exclude", &Config::exclude, ParseExclude),
    config::Custom("etcd", &Config::etcd, ParseEtcd),
    config::String("nodeName", &Config::node_name),
};

// "" when the kernel has none to give.
std::string HostName() {
  char buf[HOST_NAME_MAX + 1] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "";
  return buf;
}

absl::Status Validate(const Config& c) {
  // The network name is one component of every key.
  if (c.name.empty()) return Invalid("network name is empty");
  if (absl::StrContains(c.name, '/') || absl::StrContains(c.name, '\0')) {
    return Invalid(absl::StrCat("invalid network name \"", c.name, "\": it must not contain '/'"));
  }
  const EtcdConfig& e = c.etcd;
  if (e.endpoints.empty()) return Invalid("\"etcd\": \"endpoints\" lists no endpoint");
  for (const std::string& ep : e.endpoints) {
    if (!absl::StartsWith(ep, "http://") && !absl::StartsWith(ep, "https://")) {
      return Invalid(absl::StrCat("\"etcd\": endpoint \"", ep, "\" is not an http:// or https:// URL"));
    }
  }
  if (!absl::StartsWith(e.prefix, "/") || absl::EndsWith(e.prefix, "/")) {
    return Invalid(absl::StrCat("\"etcd\": \"prefix\" \"", e.prefix,
                                "\" must start with '/' and not end with it"));
  }
  if (e.cert_file.empty() != e.key_file.empty()) {
    return Invalid("\"etcd\": \"certFile\" and \"keyFile\" go together");
  }
  for (const net::IpPrefix& p : c.exclude) {
    if (p.HasHostBits()) {
      return Invalid(absl::StrCat("\"exclude\": ", p.ToString(), " has host bits set"));
    }
  }
  for (const net::IpAddress& ip : c.requested_ips) {
    if (c.Excluded(ip)) {
      return Invalid(absl::StrCat("requested IP ", ip.ToString(), " is excluded"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

bool Config::Excluded(const net::IpAddress& ip) const {
  for (const net::IpPrefix& p : exclude) {
    if (p.family() == ip.family() && p.Contains(ip)) return true;
  }
  return false;
}

absl::StatusOr<Config> Config::Parse(const CmdArgs& args) {
  ASSIGN_OR_RETURN(const Json* ipam, ipam::IpamObject(args.conf.raw));
  Config c;
  c.name = args.conf.name;
  c.cni_version = args.conf.cni_version;
  RETURN_IF_ERROR(config::ParseKeys(*ipam, kIpamKeys, "etcd-ipam", c));
  if (c.node_name.empty()) c.node_name = HostName();
  if (FindKey(*ipam, "etcd") == nullptr) return Invalid("\"etcd\" is required");
  ASSIGN_OR_RETURN(ipam::RangeKeys keys,
                   ipam::ParseRangeKeys(args.conf.raw, *ipam, args.args, c.cni_version));
  c.ranges = std::move(keys.ranges);
  c.routes = std::move(keys.routes);
  c.requested_ips = std::move(keys.requested_ips);
  RETURN_IF_ERROR(Validate(c));
  return c;
}

std::vector<std::string> Config::KeyNames() {
  std::vector<std::string> names;
  for (const std::string& key : config::KeyNames(kIpamKeys)) {
    if (key != "etcd") {
      names.push_back(key);
      continue;
    }
    for (const std::string& nested : config::KeyNames(kEtcdKeys)) names.push_back("etcd." + nested);
  }
  for (std::string& key : ipam::RangeKeyNames()) names.push_back(std::move(key));
  return names;
}

}  // namespace cni::etcdipam

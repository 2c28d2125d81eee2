#include "config.h"

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/json.h"
#include "cni/base/status_macros.h"
#include "cni/fw/validate.h"
#include "cni/plugin/config_schema.h"

namespace cni::firewall {
namespace {

// The keys as strings; the enums follow from them.
struct Keys {
  std::string backend;
  std::string admin_chain;
  std::string zone;
  std::string ingress_policy;
};

const config::Schema<Keys> kStrict = {
    config::OneOf("backend", &Keys::backend, {"", "iptables", "firewalld", "nftables"}),
    config::String("iptablesAdminChainName", &Keys::admin_chain, /*empty_keeps_default=*/true),
    config::String("firewalldZone", &Keys::zone, /*empty_keeps_default=*/true),
    config::OneOf("ingressPolicy", &Keys::ingress_policy, {"", "open", "same-bridge", "isolated"}),
};

// Types only: DEL and GC judge no value.
const config::Schema<Keys> kLenient = {
    config::String("backend", &Keys::backend),
    config::String("iptablesAdminChainName", &Keys::admin_chain, /*empty_keeps_default=*/true),
    config::String("firewalldZone", &Keys::zone, /*empty_keeps_default=*/true),
    config::String("ingressPolicy", &Keys::ingress_policy),
};

BackendKind BackendOf(const std::string& s) {
  if (s == "iptables") return BackendKind::kIptables;
  if (s == "firewalld") return BackendKind::kFirewalld;
  if (s == "nftables") return BackendKind::kNftables;
  return BackendKind::kAuto;
}

IngressPolicy PolicyOf(const std::string& s) {
  if (s == "same-bridge") return IngressPolicy::kSameBridge;
  if (s == "isolated") return IngressPolicy::kIsolated;
  return IngressPolicy::kOpen;
}

// A host prefix for every address of prevResult, and its first interface.
void FromPrevResult(const Result& r, Config& c) {
  for (const IpConfig& ip : r.ips) c.addresses.push_back(net::IpPrefix::Host(ip.address.addr()));
  if (!r.interfaces.empty()) c.bridge = r.interfaces.front().name;
}

absl::StatusOr<Config> ParseWith(const CmdArgs& args, const config::Schema<Keys>& schema) {
  Keys k{.admin_chain = "CNI-ADMIN", .zone = "trusted"};
  RETURN_IF_ERROR(config::ParseKeys(args.conf.raw, schema, "firewall", k));
  Config c;
  c.name = args.conf.name;
  c.backend = BackendOf(k.backend);
  c.admin_chain = k.admin_chain;
  c.zone = k.zone;
  c.ingress_policy = PolicyOf(k.ingress_policy);
  ASSIGN_OR_RETURN(c.prev_result, ParsePrevResult(args.conf), "could not parse prevResult");
  if (c.prev_result.has_value()) FromPrevResult(*c.prev_result, c);
  return c;
}

// A firewalld zone name: firewalld's own limit is a file name of at most
// 17 characters before ".xml"; we only keep out what could never be a zone.
absl::Status ValidateZone(const std::string& zone) {
  for (char ch : zone) {
    if (ch <= ' ' || ch == '/' || ch == 0x7f) {
      return Error(ErrorCode::kInvalidNetworkConfig,
                   absl::StrCat("firewall: \"firewalldZone\" \"", zone, "\" is not a zone name"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Config> Config::Parse(const CmdArgs& args) {
  ASSIGN_OR_RETURN(Config c, ParseWith(args, kStrict), "failed to load netconf");
  // The chain name reaches iptables: refuse what it would (or what could
  // smuggle options into a restore line).
  RETURN_IF_ERROR(fw::ValidateChainName("firewall: iptablesAdminChainName", c.admin_chain));
  RETURN_IF_ERROR(ValidateZone(c.zone));
  return c;
}

absl::StatusOr<TeardownConfig> TeardownConfig::Parse(const CmdArgs& args) {
  ASSIGN_OR_RETURN(Config c, ParseWith(args, kLenient), "failed to load netconf");
  return TeardownConfig{std::move(c)};
}

const char* BackendName(BackendKind b) {
  switch (b) {
    case BackendKind::kIptables: return "iptables";
    case BackendKind::kFirewalld: return "firewalld";
    case BackendKind::kNftables: return "nftables";
    case BackendKind::kAuto: break;
  }
  return "";
}

}  // namespace cni::firewall

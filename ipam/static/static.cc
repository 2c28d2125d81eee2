#include "static.h"

#include "absl/strings/str_cat.h"
#include "config.h"
#include "cni/error.h"

namespace cni::static_ipam {

absl::StatusOr<Result> Add(const CmdArgs& args) {
  absl::StatusOr<Config> config = LoadConfig(args);
  if (!config.ok()) return config.status();
  Result result;
  for (const Address& a : config->addresses) {
    result.ips.push_back(IpConfig{std::nullopt, a.address, a.gateway});
  }
  result.routes = config->routes;
  result.dns = config->dns;
  return result;
}

// CHECK: every configured address must be in prevResult with the configured
// gateway. (Upstream only compares addresses it happens to find, so a missing
// address passes there; here it fails.)
absl::Status Check(const CmdArgs& args) {
  absl::StatusOr<Config> config = LoadConfig(args);
  if (!config.ok()) return config.status();
  absl::StatusOr<std::optional<Result>> prev = ParsePrevResult(args.conf);
  if (!prev.ok()) return prev.status();
  if (!*prev) return Error(ErrorCode::kInvalidNetworkConfig, "static: required prevResult missing");
  for (const Address& want : config->addresses) {
    bool found = false;
    for (const IpConfig& have : (*prev)->ips) {
      if (have.address.addr() != want.address.addr()) continue;
      if (want.gateway && have.gateway != want.gateway) {
        return Error(ErrorCode::kInvalidNetworkConfig,
                     absl::StrCat("static: address ", want.address.addr().ToString(), " on interface \"",
                                  args.ifname, "\" has gateway ",
                                  have.gateway ? have.gateway->ToString() : "none", ", expected ",
                                  want.gateway->ToString()));
      }
      found = true;
      break;
    }
    if (!found) {
      return Error(ErrorCode::kInvalidNetworkConfig,
                   absl::StrCat("static: address ", want.address.ToString(),
                                " is not in prevResult for interface \"", args.ifname, "\""));
    }
  }
  return absl::OkStatus();
}

// DEL: static holds nothing, so there is nothing to release; it succeeds even
// for a configuration it could not use, so that a runtime's teardown is never
// blocked by it (DEL must be idempotent and must not fail for missing state).
absl::Status Del(const CmdArgs&) { return absl::OkStatus(); }

absl::Status Status(const CmdArgs& args) { return LoadConfig(args).status(); }

// No GC: static IPAM holds no state, so there is nothing to collect.
PluginFuncs Funcs() { return {.add = Add, .del = Del, .check = Check, .status = Status}; }

}  // namespace cni::static_ipam

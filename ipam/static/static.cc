#include "static.h"

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "config.h"

namespace cni::static_ipam {

absl::StatusOr<Result> Add(const CmdArgs&, const Config& config) {
  Result result;
  for (const Address& a : config.addresses) {
    result.ips.push_back(IpConfig{std::nullopt, a.address, a.gateway});
  }
  result.routes = config.routes;
  result.dns = config.dns;
  return result;
}

// CHECK: every configured address must be in prevResult with the configured
// gateway. (Upstream only compares addresses it happens to find, so a missing
// address passes there; here it fails.)
absl::Status Check(const CmdArgs& args, const Config& config) {
  ASSIGN_OR_RETURN(std::optional<Result> prev, ParsePrevResult(args.conf));
  if (!prev) return Error(ErrorCode::kInvalidNetworkConfig, "static: required prevResult missing");
  for (const Address& want : config.addresses) {
    bool found = false;
    for (const IpConfig& have : prev->ips) {
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

// STATUS: the configuration parsed (skel did that), so ADD would work.
absl::Status Status(const CmdArgs&, const Config&) { return absl::OkStatus(); }

PluginFuncs Funcs() {
  PluginFuncs funcs = Typed<Config>({.add = Add, .check = Check, .status = Status});
  funcs.del = Del;  // not typed: see Del
  // No GC: static IPAM holds no state, so there is nothing to collect.
  return funcs;
}

}  // namespace cni::static_ipam

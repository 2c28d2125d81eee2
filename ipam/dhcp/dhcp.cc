#include "dhcp.h"

#include <unistd.h>

#include <climits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "cni/protocol/version.h"
#include "lease.h"
#include "protocol.h"

namespace cni::dhcp {
namespace {

// The daemon may run in another working directory: the namespace path goes
// out absolute (upstream: filepath.Abs).
std::string AbsolutePath(const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof(cwd)) == nullptr) return path;
  return absl::StrCat(cwd, "/", path);
}

Json Request(absl::string_view op, const CmdArgs& args, const Config& config) {
  LeaseSpec spec;
  spec.container_id = args.container_id;
  spec.network = args.conf.name;
  spec.ifname = args.ifname;
  spec.netns = AbsolutePath(args.netns);
  spec.parameter_list = config.parameter_list;
  spec.provide = config.provide;
  spec.priority = config.priority;
  spec.v4 = config.v4();
  spec.v6 = config.v6();
  spec.duid = config.duid;
  spec.request6 = config.request6;
  spec.provide6 = config.provide6;
  spec.rapid_commit = config.rapid_commit;
  return {{"op", std::string(op)},
          {"lease", spec.ToJson()},
          {"budgetMs", absl::ToInt64Milliseconds(config.add_budget)}};
}

absl::StatusOr<Result> ResultOf(const Json& answer) {
  const Json* result = FindKey(answer, "result");
  if (result == nullptr) return Error(ErrorCode::kInternal, "the dhcp daemon answered without a result");
  return ParseResult(*result);
}

// ADD: the daemon acquires a lease (or returns the one it keeps for this
// attachment) and the result is built from it. Code 11 when the daemon is not
// running or no server answered within its -resendtimeout.
absl::StatusOr<Result> Add(const CmdArgs& args, const Config& config) {
  ASSIGN_OR_RETURN(Json answer, CallDaemon(config.socket_path, Request("ADD", args, config), config.add_budget));
  return ResultOf(answer);
}

// DEL: the daemon releases the lease; an attachment it does not know is success.
absl::Status Del(const CmdArgs& args, const Config& config) {
  return CallDaemon(config.socket_path, Request("DEL", args, config), config.DelBudget()).status();
}

// CHECK: the daemon still maintains a bound lease for the attachment, and the
// address in prevResult (when given) is the lease's.
absl::Status Check(const CmdArgs& args, const Config& config) {
  ASSIGN_OR_RETURN(Json answer, CallDaemon(config.socket_path, Request("CHECK", args, config), config.DelBudget()));
  ASSIGN_OR_RETURN(Result lease, ResultOf(answer));
  ASSIGN_OR_RETURN(std::optional<Result> prev, ParsePrevResult(args.conf));
  if (!prev || prev->ips.empty()) return absl::OkStatus();
  // Every lease's address (one per family) is in prevResult.
  for (const IpConfig& leased : lease.ips) {
    bool found = false;
    for (const IpConfig& ip : prev->ips) found = found || ip.address == leased.address;
    if (!found) {
      return Error(ErrorCode::kInternal, absl::StrCat("dhcp: the lease's address ", leased.address.ToString(),
                                                      " is not in prevResult"));
    }
  }
  return absl::OkStatus();
}

// STATUS: the daemon answers (code 50 when it does not).
absl::Status Status(const CmdArgs&, const Config& config) {
  absl::Status st = CallDaemon(config.socket_path, {{"op", "STATUS"}}, config.DelBudget()).status();
  if (!st.ok()) return WithCode(st, ErrorCode::kPluginNotAvailable);
  return absl::OkStatus();
}

// GC: the daemon releases this network's leases whose attachment is not in
// cni.dev/valid-attachments.
absl::Status Gc(const CmdArgs& args, const Config& config) {
  Json valid = Json::array();
  for (const Attachment& a : args.conf.valid_attachments) {
    valid.push_back({{"containerID", a.container_id}, {"ifname", a.ifname}});
  }
  Json request = {{"op", "GC"}, {"network", args.conf.name}, {"valid", valid}};
  return CallDaemon(config.socket_path, request, config.GcBudget()).status();
}

}  // namespace

PluginFuncs Funcs() {
  return Typed<Config>({.add = Add, .del = Del, .check = Check, .gc = Gc, .status = Status});
}

}  // namespace cni::dhcp

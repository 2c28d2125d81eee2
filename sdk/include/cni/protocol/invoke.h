// Executing other plugins: delegation (an interface plugin calling its IPAM
// plugin) and, for runtimes, plain plugin execution.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"

namespace cni {

// False for a type no plugin can be named: empty, ".", "..", or with a '/'
// (it would name a file outside the plugin directories).
bool IsValidPluginName(absl::string_view type);

// Finds the executable `type` in `dirs` (first match wins). A type that is
// not IsValidPluginName is rejected (code 7); not found is code 7 too,
// naming the directories searched.
absl::StatusOr<std::string> FindPlugin(absl::string_view type, const std::vector<std::string>& dirs);

// Output of one plugin run.
struct ExecOutput {
  std::string stdout_data;  // what the plugin printed (its result document)
};

// Runs the plugin at `path` with `env` ("K=V" strings) and `stdin_data`. Its
// stderr goes to ours. A non-zero exit becomes a failed status carrying the
// plugin's code, msg and details (or code 999 with its output when that is not
// an error document). "text file busy" on exec is retried briefly.
// `timeout` (0: none) bounds the run; a plugin that overruns is killed and
// reported as code 999 "timed out" (whatever it printed is not trusted).
absl::StatusOr<ExecOutput> ExecPlugin(const std::string& path, const std::vector<std::string>& env,
                                      absl::string_view stdin_data,
                                      std::chrono::milliseconds timeout = std::chrono::milliseconds(0));

// Replaces or adds NAME=value in an environment vector.
void SetEnv(std::vector<std::string>& env, absl::string_view name, absl::string_view value);

// The CNI_* variables of one plugin call (the spec's "Parameters").
struct CniVariables {
  std::string command;       // CNI_COMMAND
  std::string container_id;  // CNI_CONTAINERID
  std::string netns;         // CNI_NETNS
  std::string ifname;        // CNI_IFNAME
  std::string args;          // CNI_ARGS, "K1=V1;K2=V2"
  std::string path;          // CNI_PATH, directories joined by ':'
};

// The environment to run a plugin with, as a test or a checker calls it:
// `inherited` without any CNI_* variable of its own, then each variable of
// `vars` that is not empty. An empty one stays unset, so a caller can leave
// any out on purpose (the spec's "missing environment" errors).
std::vector<std::string> PluginCallEnvironment(const std::vector<std::string>& inherited,
                                               const CniVariables& vars);

// Delegation helpers: run the plugin `type` (found in args.plugin_dirs) with the
// caller's environment (args.env) plus CNI_COMMAND=<verb>, and `conf_bytes` on
// stdin (by default the caller's whole configuration, args.stdin_data).
//
// ADD: the delegate's result, parsed (at the version it printed).
absl::StatusOr<Result> DelegateAdd(absl::string_view type, const CmdArgs& args,
                                   absl::string_view conf_bytes = {});
// CHECK: success or the delegate's error.
absl::Status DelegateCheck(absl::string_view type, const CmdArgs& args, absl::string_view conf_bytes = {});
// DEL: success or the delegate's error (call it during rollback of a failed ADD too).
// A `type` that is not IsValidPluginName is success without a call: no
// plugin of that name can have made anything, and an error would make every
// DEL of the attachment (a runtime retries it) fail for good.
absl::Status DelegateDel(absl::string_view type, const CmdArgs& args, absl::string_view conf_bytes = {});
// Whether a failed IPAM DEL may finish when the runtime retries the DEL: the
// IPAM plugin said so (code 11, try again later: e.g. the dhcp daemon is
// down), or it never answered (killed, timed out, crashed: code 999 with no
// error document of its own). An interface plugin then stops its DEL there
// and keeps the container's interface, which the retry's IPAM DEL may need
// (the dhcp daemon sends its RELEASE through it). Any other failure is
// final: DEL removes the rest and reports it.
bool IpamDelMayFinishOnRetry(const absl::Status& failed_del);
// GC: success or the delegate's error.
absl::Status DelegateGc(absl::string_view type, const CmdArgs& args, absl::string_view conf_bytes = {});
// STATUS: success or the delegate's error (e.g. code 50, no addresses left).
absl::Status DelegateStatus(absl::string_view type, const CmdArgs& args, absl::string_view conf_bytes = {});

// GC and STATUS of a plugin whose IPAM is optional (`Config::ipam_type`, ""
// when there is none): forwarded to the IPAM plugin, success without one.
// Rows of a Typed() table: `.gc = ForwardGcToIpam<Config>`.
template <typename Config>
absl::Status ForwardGcToIpam(const CmdArgs& args, const Config& config) {
  return config.ipam_type.empty() ? absl::OkStatus() : DelegateGc(config.ipam_type, args);
}
// See ForwardGcToIpam.
template <typename Config>
absl::Status ForwardStatusToIpam(const CmdArgs& args, const Config& config) {
  return config.ipam_type.empty() ? absl::OkStatus() : DelegateStatus(config.ipam_type, args);
}

// The teardown configuration of a plugin whose DEL and GC need only the IPAM
// type (the link is found by CNI_IFNAME in CNI_NETNS): the `Teardown` of a
// TypedWithTeardown table, so that an ADD refused for one of the plugin's
// own keys ("mtu": "x", ...) leaves a DEL that succeeds, and a configuration
// broken since ADD still removes the attachment.
struct IpamTeardownConfig {
  std::string ipam_type;  // "": no IPAM
  // Judges nothing: skel has already parsed "ipam" (a bad one is its error).
  static absl::StatusOr<IpamTeardownConfig> Parse(const CmdArgs& args) {
    return IpamTeardownConfig{.ipam_type = args.conf.ipam_type};
  }
};

}  // namespace cni

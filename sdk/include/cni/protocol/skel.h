// skel owns the plugin process: it reads CNI_* and stdin, validates them,
// negotiates the version, calls the plugin's handler, prints the result at the
// configuration's version, and maps errors to the CNI error JSON and exit code.
//
// Environment and stdio are injected (Run), so skel is tested without a process;
// PluginMain wires Run to the real process.
#pragma once

#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/base/status_macros.h"
#include "cni/protocol/types.h"

namespace cni {

// Everything a handler gets. Handlers never read the environment or print.
struct CmdArgs {
  std::string command;       // ADD, DEL, CHECK, GC, STATUS
  std::string container_id;  // CNI_CONTAINERID
  std::string netns;         // CNI_NETNS
  std::string ifname;        // CNI_IFNAME
  std::string args;          // CNI_ARGS, raw
  std::string path;          // CNI_PATH, raw
  std::vector<std::string> plugin_dirs;  // CNI_PATH split on ':'
  std::string stdin_data;    // the configuration, as received
  NetConf conf;              // parsed and version-checked by skel
  // The environment skel was given, passed on to delegated plugins.
  std::vector<std::string> env;
};

// ADD: returns the result skel prints (converted to the configuration's
// cniVersion), or a failed status (see error.h for attaching a CNI code).
using AddHandler = std::function<absl::StatusOr<Result>(const CmdArgs&)>;
// DEL, CHECK, GC, STATUS: success or a failed status.
using Handler = std::function<absl::Status(const CmdArgs&)>;

// The command table a plugin hands to skel. A null handler means the command is
// not implemented; skel then answers: DEL/CHECK/GC/STATUS -> success (spec: a
// plugin with no state to collect has nothing to do), ADD -> error 4.
struct PluginFuncs {
  AddHandler add = nullptr;   // CNI_COMMAND=ADD
  Handler del = nullptr;      // CNI_COMMAND=DEL (must be idempotent)
  Handler check = nullptr;    // CNI_COMMAND=CHECK (0.4.0+; prevResult is in args.conf)
  Handler gc = nullptr;       // CNI_COMMAND=GC (1.1.0; args.conf.valid_attachments)
  Handler status = nullptr;   // CNI_COMMAND=STATUS (1.1.0)
};

// ADD's result must print at the configuration's version, but skel prints
// it only after the handler returns, when no rollback can run any more. So
// what can be judged before is judged before: BuildCmdArgs refuses a version
// skel cannot print at, and since 0.1.0/0.2.0 have no place for a result
// without an IP, a configuration at those versions whose plugin can take
// addresses only from IPAM (its Config has an `ipam_type`) or a chained
// prevResult is refused when neither gives one (code 1, printing's own
// message, "cannot convert: no valid IP addresses"). Typed() runs this
// before the ADD handler, so no plugin has to remember it.
absl::Status RequireResultPrintable(const CmdArgs& args, std::string_view ipam_type);

// Handlers that take the plugin's parsed configuration (DESIGN rule 2): skel
// calls `Config::Parse(const CmdArgs&) -> absl::StatusOr<Config>` once, before
// any handler runs, so a handler starts with every key read and validated and
// a bad configuration changes nothing (rule 3). Hand the table to Typed():
//
//   int main() {
//     return cni::PluginMain(cni::Typed<Config>({.add = Add, .del = Del}), info);
//   }
template <typename Config>
struct TypedPluginFuncs {
  // Initialised, so a designated initializer naming only some of them is
  // clean under -Wextra (-Wmissing-field-initializers).
  std::function<absl::StatusOr<Result>(const CmdArgs&, const Config&)> add = nullptr;  // as PluginFuncs::add
  std::function<absl::Status(const CmdArgs&, const Config&)> del = nullptr;     // as PluginFuncs::del
  std::function<absl::Status(const CmdArgs&, const Config&)> check = nullptr;   // as PluginFuncs::check
  std::function<absl::Status(const CmdArgs&, const Config&)> gc = nullptr;      // as PluginFuncs::gc
  std::function<absl::Status(const CmdArgs&, const Config&)> status = nullptr;  // as PluginFuncs::status
};

// The command table skel runs for typed handlers: every command parses the
// configuration first, so a bad one is reported by each (STATUS included);
// then the handler runs, or, where none is set, the command succeeds as
// skel's default (spec: nothing to clean up, check or report). An unset ADD
// stays unset (skel answers code 4).
template <typename Config>
PluginFuncs Typed(TypedPluginFuncs<Config> typed) {
  PluginFuncs funcs;
  if (typed.add) {
    funcs.add = [add = std::move(typed.add)](const CmdArgs& args) -> absl::StatusOr<Result> {
      CNI_ASSIGN_OR_RETURN(Config config, Config::Parse(args));
      if constexpr (requires { config.ipam_type; }) {
        CNI_RETURN_IF_ERROR(RequireResultPrintable(args, config.ipam_type));
      }
      return add(args, config);
    };
  }
  auto wrap = [](std::function<absl::Status(const CmdArgs&, const Config&)> handler) -> Handler {
    return [handler = std::move(handler)](const CmdArgs& args) -> absl::Status {
      absl::StatusOr<Config> config = Config::Parse(args);
      if (!config.ok() || !handler) return config.status();
      return handler(args, *config);
    };
  };
  funcs.del = wrap(std::move(typed.del));
  funcs.check = wrap(std::move(typed.check));
  funcs.gc = wrap(std::move(typed.gc));
  funcs.status = wrap(std::move(typed.status));
  return funcs;
}

// A table whose teardown reads its own, lenient configuration type: ADD,
// CHECK and STATUS from `setup` (parsing Config), DEL and GC from `teardown`
// (parsing Teardown, which judges fewer values, so that what upstream or an
// older configuration set up can always be removed). `setup`'s DEL and GC
// and `teardown`'s other commands are not used.
template <typename Config, typename Teardown>
PluginFuncs TypedWithTeardown(TypedPluginFuncs<Config> setup, TypedPluginFuncs<Teardown> teardown) {
  PluginFuncs funcs = Typed<Config>(std::move(setup));
  PluginFuncs down = Typed<Teardown>(std::move(teardown));
  funcs.del = std::move(down.del);
  funcs.gc = std::move(down.gc);
  return funcs;
}

// What the plugin tells about itself: its versions, its "about" line, its name.
struct PluginInfo {
  std::vector<std::string> supported_versions;  // default: every version (AllVersions())
  std::string about;                            // printed when CNI_COMMAND is unset
  // Begins skel's own refusals (codes 4, 6 and 7: "bridge: decoding network
  // configuration: ..."), once, as the plugin's messages begin with it.
  // Default: the program's file name (program_invocation_short_name), which
  // is the plugin's type once installed; set it when the two may differ (a
  // test running the handlers in its own process).
  std::string name = "";
};

// The process seen by skel: environment and stdio.
struct ProcessIo {
  std::map<std::string, std::string> env;  // CNI_* and the rest of the environment
  std::string stdin_data;                   // the configuration
  std::ostream* out = nullptr;              // result / error document (stdout)
  std::ostream* err = nullptr;              // about line, diagnostics (stderr)
  // The plugin's own network namespace, to reject CNI_NETNS naming it (code 8).
  // Default "/proc/self/ns/net"; tests point it elsewhere.
  std::string own_netns_path = "/proc/self/ns/net";
};

// Runs one command. Returns the process exit code (0 success, 1 error).
int Run(const PluginFuncs& funcs, const PluginInfo& info, const ProcessIo& io);

// The real process: environment from environ, stdin read whole, std::cout/cerr.
int PluginMain(const PluginFuncs& funcs, const PluginInfo& info);

// The standard "about" line: "CNI <plugin> plugin <version> (cni-cpp)".
std::string AboutLine(absl::string_view plugin_name);

// Prints a CNI error document for `status` at `cni_version`.
std::string ErrorJson(const absl::Status& status, absl::string_view cni_version);

// The configuration's prevResult, parsed at the configuration's version (the
// spec: prevResult is in the same format as the config's cniVersion). nullopt
// when the configuration carries none.
absl::StatusOr<std::optional<Result>> ParsePrevResult(const NetConf& conf);

// True if `id` is a valid container ID: ^[a-zA-Z0-9][a-zA-Z0-9_.\-]*$ (also
// the rule for network names).
bool IsValidContainerId(absl::string_view id);
// Interface name rules: 1-15 bytes, not "." or "..", no '/', ':' or whitespace.
absl::Status ValidateInterfaceName(absl::string_view name);

}  // namespace cni

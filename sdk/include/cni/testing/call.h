// cni::testing (the plugin author's test kit): calling a plugin as a container
// runtime does, either its binary (CNI_* environment, the configuration on
// stdin, the answer on stdout) or, in the test process itself, the PluginFuncs
// table its main() hands to PluginMain. Both run through the same skel, so a
// test can move between them freely; the binary is what a runtime sees.
//
//   cni::testing::Plugin plugin = cni::testing::Plugin::FromEnv("route-example");
//   plugin.defaults.netns = fx.AddNetns("ctr");
//   cni::testing::RunResult add = plugin.Add(conf);
//   cni::testing::RunResult check = plugin.Check(cni::testing::WithPrevResult(conf, add));
//
// The binary's location comes from the test (an argument, or an environment
// variable the build sets for it), never from where the kit was built.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "cni/base/attachment.h"
#include "cni/base/json.h"
#include "cni/protocol/skel.h"
#include "cni/testing/process.h"

namespace cni::testing {

// One CNI invocation. An empty string leaves its variable unset, so a test can
// leave any of them out on purpose (the spec's "missing env" errors).
struct Invocation {
  std::string command;                          // CNI_COMMAND
  std::string container_id = "cni-test-ctr-1";  // CNI_CONTAINERID
  std::string netns;                            // CNI_NETNS
  std::string ifname = "eth0";                  // CNI_IFNAME
  std::string args;                             // CNI_ARGS, "K1=V1;K2=V2"
  std::string path = "/opt/cni/bin";            // CNI_PATH (where delegated IPAM plugins are)
  std::string config;                           // stdin: the network configuration
  std::vector<std::string> env;                 // further "K=V"; PATH is kTestPath
};

// The environment `call` gives the plugin: kTestPath, the CNI_* variables
// that are set, then call.env.
std::vector<std::string> CniEnvironment(const Invocation& call);

// A plugin under test, called as a runtime calls it.
class Plugin {
 public:
  // The executable at `path`.
  static Plugin Binary(std::string path);
  // The executable `name` in the directory named by the environment variable
  // `dir_variable` (set by the test's runner, e.g. ctest's ENVIRONMENT
  // property); throws std::runtime_error when the variable is unset.
  static Plugin FromEnv(absl::string_view name, const char* dir_variable = "CNI_PLUGIN_DIR");
  // The command table and info of a plugin's main(), run by skel in this
  // process (stdin, stdout and stderr captured; the environment is only the
  // invocation's). Faster and debuggable, but a crash takes the test with it.
  // Set info.name to the plugin's type: skel's own messages begin with it,
  // and in process the program's file name is the test's.
  static Plugin InProcess(PluginFuncs funcs, PluginInfo info);

  // What the verbs below start from (CNI_NETNS, CNI_IFNAME, CNI_ARGS, ...).
  Invocation defaults;

  // Runs one invocation as given (defaults are not applied).
  RunResult Run(const Invocation& call) const;

  // `defaults` with CNI_COMMAND=<verb> and `conf` on stdin.
  RunResult Add(const Json& conf) const { return Command("ADD", conf); }
  RunResult Check(const Json& conf) const { return Command("CHECK", conf); }  // conf with prevResult
  RunResult Del(const Json& conf) const { return Command("DEL", conf); }      // as Add
  RunResult Status(const Json& conf) const { return Command("STATUS", conf); }  // 1.1.0
  RunResult Version(const Json& conf) const { return Command("VERSION", conf); }  // supportedVersions
  // GC: a runtime sets only CNI_COMMAND and CNI_PATH (the spec); use
  // WithValidAttachments for the configuration.
  RunResult Gc(const Json& conf) const;
  // No CNI_COMMAND: the plugin prints its about line on stderr.
  RunResult About() const;
  // `defaults` with CNI_COMMAND=`command` (any, also an invalid one).
  RunResult Command(const std::string& command, const Json& conf) const;

  // The binary's path ("" in process).
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::function<RunResult(const Invocation&)> in_process_;
};

// --- Configurations as a runtime writes them --------------------------------

// `conf` with `add`'s stdout as its prevResult: the next plugin in a chain,
// and CHECK after ADD (the runtime sends the ADD result as prevResult).
Json WithPrevResult(Json conf, const RunResult& add);
// The same for configuration text and an ADD's stdout.
std::string WithPrevResult(const std::string& conf, const std::string& add_out);
// `conf` with "runtimeConfig" set to `runtime_config`: what a runtime adds for
// the capabilities the configuration enables, e.g. {"portMappings": [...]}.
Json WithRuntimeConfig(Json conf, const Json& runtime_config);
// `conf` (cniVersion 1.1.0 or later) as GC's input: "cni.dev/valid-attachments",
// the attachments a runtime still uses.
Json WithValidAttachments(Json conf, const std::vector<cni::Attachment>& valid);

// --- Reading an answer ------------------------------------------------------

// The "code" of the CNI error a call printed, -1 when it printed none.
int ErrorCode(const RunResult& r);
// The "msg" of the CNI error a call printed, else all it printed (stdout + stderr).
std::string ErrorMessage(const RunResult& r);
// "exit N out: ... err: ...": everything a call did, for a failure message.
std::string Describe(const RunResult& r);

}  // namespace cni::testing

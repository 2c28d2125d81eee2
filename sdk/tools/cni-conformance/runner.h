// The checks, in the order they run (see README.md for what each requires
// and which part of the spec says so).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cni/base/json.h"
#include "cni/runtime/runtime.h"
#include "plugin_call.h"
#include "report.h"
#include "sandbox.h"
#include "snapshot.h"
#include "subject.h"

namespace conformance {

// How the tool was asked to run.
struct Options {
  std::string plugin;                     // the binary under test
  std::string config_path;                // the configuration file
  std::vector<std::string> cni_path;      // CNI_PATH (default: the plugin's directory)
  std::vector<std::string> data_dirs;     // watched for leftover files (plus the defaults)
  std::vector<std::string> host_veths;    // veth pairs to make first (--master)
  std::string ifname = "eth0";            // CNI_IFNAME
  cni::Json capability_args = cni::Json::object();  // runtimeConfig sources (--cap-args)
  std::chrono::milliseconds timeout{20000};          // per plugin run
  bool json = false;                      // --json
  std::vector<std::string> xfail;         // checks known to fail (--xfail REGEX)
};

// Directories always watched for leftover files: private to the run.
inline const std::vector<std::string> kDefaultDataDirs = {"/var/lib/cni", "/run/cni"};

// Runs every check against one plugin in the private namespaces (the caller
// has entered them, EnterPrivateHost) and records the outcomes.
class Runner {
 public:
  Runner(Options options, Subject subject);
  // Runs all checks; the report says how each went.
  Report Run();

 private:
  // One attachment: a container namespace, its predecessors' result (the
  // prevResult the plugin gets) and the plugin's own ADD result.
  struct Attachment {
    std::string version;
    std::string id;
    std::string netns;
    cni::Json prev;    // null when there are no predecessors
    cni::Json result;  // the plugin's ADD result (null until ADD succeeded)
    State fresh_ctr;   // the container namespace as the plugin got it
  };

  // Protocol checks (protocol_checks.cc).
  void CheckVersion();
  void CheckAbout();
  void CheckUnsupportedVersion();
  void CheckMissingEnvironment();
  void CheckMalformedConfig();
  // A fresh container namespace for one protocol check, at `version`; when
  // none can be made, reports that as a failure and returns nullopt.
  std::optional<Attachment> ProtocolAttachment(const std::string& version);

  // Lifecycle checks (lifecycle_checks.cc).
  void CheckLifecycle(const std::string& version, bool first);
  void CheckDelWithoutAdd(const std::string& version);
  void CheckDelNetnsGone(const std::string& version);
  void CheckGc();
  void CheckStatus();

  // A container namespace with the predecessors added at `version`.
  absl::StatusOr<Attachment> Attach(const std::string& version);
  // The predecessors' DEL and the namespace's removal; failures are returned.
  std::vector<std::string> Detach(Attachment& a, bool netns_already_gone = false);
  // The plugin's execution configuration at `version`, with `prev` as
  // prevResult (null: none) and `extra` keys merged in.
  cni::Json ExecConfig(const std::string& version, const cni::Json& prev,
                       const cni::Json& extra = cni::Json::object()) const;
  // Runs the plugin with `command` for attachment `a` and `conf`.
  Answer Run(const std::string& command, const Attachment& a, const cni::Json& conf) const;
  // A fresh invocation: every variable set for attachment `a`.
  Invocation For(const std::string& command, const Attachment& a, const cni::Json& conf) const;
  // The private host's state (links, addresses, routes, rules, nftables,
  // files under the watched directories).
  State HostState() const;
  // The host's differences from `want`; while links, addresses, routes or
  // rules are left over, looked at again for up to ~2 s (the kernel tears a
  // dead namespace's veth ends down asynchronously).
  // Lines about the links in `except` (and their addresses and routes) are
  // left out.
  std::vector<std::string> HostDifferences(const State& want,
                                           const std::vector<std::string>& except = {}) const;
  // Makes the --master veth pairs again where they are gone (a veth moved
  // into a namespace dies with it), up or down as `as_in` had them; returns
  // their names and their peers'.
  std::vector<std::string> RestoreHostVeths(const State& as_in);

  std::string NextId();

  Options options_;
  Subject subject_;
  std::string cni_path_;  // joined with ':'
  std::vector<std::string> watched_;
  Report report_;
  Sandboxes sandboxes_;
  cni::runtime::Runtime runtime_;
  std::vector<std::string> supported_;  // from VERSION, in the plugin's order
  int ids_ = 0;
};

}  // namespace conformance

// The runtime side of CNI: what upstream's libcni is to Go runtimes, for C++
// container runtimes and our own tools and tests.
//
//   cni::runtime::Runtime rt({.plugin_dirs = {"/opt/cni/bin"}});
//   auto list = cni::runtime::LoadNetworkConf("/etc/cni/net.d", "mynet");
//   cni::runtime::RuntimeConf att{.container_id = id, .netns = path, .ifname = "eth0"};
//   auto result = rt.AddNetworkList(*list, att);   // also cached for CHECK/DEL
//   ... rt.DelNetworkList(*list, att);
//
// Spec section 3 ("Execution of Network Configurations") and the 1.1.0
// additions (GC, STATUS) are implemented here; behaviour the spec leaves open
// follows libcni (libcni/api.go) so the two can replace each other on a node.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/base/json.h"
#include "cni/protocol/types.h"
#include "cni/runtime/cache.h"
#include "cni/runtime/conf.h"

namespace cni::runtime {

// The per-attachment parameters (spec section 3, "Attachment Parameters").
struct RuntimeConf {
  std::string container_id;  // CNI_CONTAINERID
  std::string netns;         // CNI_NETNS
  std::string ifname;        // CNI_IFNAME
  std::vector<std::pair<std::string, std::string>> args;  // CNI_ARGS, "K=V;K=V"
  // Capability arguments (CONVENTIONS.md): key -> any JSON. Only the keys a
  // plugin declares in "capabilities" reach its runtimeConfig.
  Json capability_args = Json::object();
};

// How the runtime finds and runs plugins.
struct Options {
  std::vector<std::string> plugin_dirs;           // searched in order; also CNI_PATH
  std::string cache_dir = std::string(kDefaultCacheDir);  // results go in <cache_dir>/results
  std::chrono::milliseconds timeout{0};           // per plugin run; 0 = none
  // The environment plugins get besides the CNI_* variables (libcni passes
  // its own); nullopt = this process's environment.
  std::optional<std::vector<std::string>> base_env;
};

// Builds one plugin's execution configuration (spec section 3, "Deriving
// execution configuration"): the plugin object with "name" and "cniVersion"
// injected, "runtimeConfig" = its declared capabilities intersected with
// rt.capability_args (left out when empty, as libcni does), "prevResult" when
// given, "capabilities" removed, every other key passed through unchanged.
Json BuildExecConfig(absl::string_view network, absl::string_view cni_version,
                     const PluginConfig& plugin, const Json* prev_result, const RuntimeConf* rt);

// An attachment found in the result cache.
struct CachedAttachment {
  std::string container_id, network, ifname, netns;  // as given at ADD
  std::string config;  // the list bytes cached at ADD
  std::vector<std::pair<std::string, std::string>> cni_args;  // the CNI_ARGS pairs of ADD
  Json capability_args;  // the capability arguments of ADD (null when none were cached)
};

// Runs network configuration lists for a container runtime, keeping libcni's
// result cache. Holds nothing but its options: every call finds the plugins
// and reads the cache afresh.
class Runtime {
 public:
  // Keeps `options`; nothing is checked or touched until a call needs it.
  explicit Runtime(Options options);

  // ADD: each plugin in order, each given the previous one's result; the last
  // result is cached and returned (as the plugin printed it, with "cniVersion"
  // filled in when the plugin left it out, as libcni does). A plugin's error is
  // returned with its code, msg and details, prefixed with the plugin.
  absl::StatusOr<Json> AddNetworkList(const NetworkConfigList& list, const RuntimeConf& rt);

  // CHECK (0.4.0+): nothing when disableCheck; else each plugin in order, with
  // the cached ADD result as prevResult.
  absl::Status CheckNetworkList(const NetworkConfigList& list, const RuntimeConf& rt);

  // DEL: each plugin in reverse order, with the cached result (0.4.0+) as
  // prevResult; then the cache entry is removed. An unreadable or corrupt
  // cache entry never blocks DEL: it is dropped and DEL runs without prevResult.
  absl::Status DelNetworkList(const NetworkConfigList& list, const RuntimeConf& rt);

  // GC (libcni's GCNetworkList): nothing when disableGC. Every cached
  // attachment of this network not in `valid` gets a DEL; then, for 1.1.0+,
  // every plugin gets GC with "cni.dev/valid-attachments" (when `valid` is
  // given). Keeps going past errors and returns them all.
  absl::Status GcNetworkList(const NetworkConfigList& list,
                             const std::optional<std::vector<Attachment>>& valid);

  // STATUS (1.1.0+; success for older versions): each plugin in order, the
  // first error returned as it is (its code, e.g. 50, intact).
  absl::Status StatusNetworkList(const NetworkConfigList& list);

  // The cached ADD result, converted to the list's version; nullopt when none.
  absl::StatusOr<std::optional<Json>> GetCachedResult(const NetworkConfigList& list,
                                                      const RuntimeConf& rt) const;

  // Cached attachments (cniCacheV1 entries with network and ifname), sorted by
  // file name; only those of `container_id` when it is not empty.
  std::vector<CachedAttachment> GetCachedAttachments(absl::string_view container_id = {}) const;

  // The options this runtime was made with.
  const Options& options() const { return options_; }

 private:
  // Runs plugin `plugin` with `verb`; returns its stdout.
  absl::StatusOr<std::string> Exec(absl::string_view verb, const PluginConfig& plugin,
                                   const Json& conf, const RuntimeConf& rt) const;
  absl::Status RemoveCache(absl::string_view network, const RuntimeConf& rt) const;

  Options options_;
};

// CNI_ARGS text ("K1=V1;K2=V2") for a list of pairs, as libcni builds it.
std::string JoinCniArgs(const std::vector<std::pair<std::string, std::string>>& args);

}  // namespace cni::runtime

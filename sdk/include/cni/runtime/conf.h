// The runtime side, part 1: network configuration lists, loaded from bytes or
// from a directory exactly as upstream libcni (libcni/conf.go) loads them, so a
// node's /etc/cni/net.d means the same thing to a runtime built on us.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/base/json.h"

namespace cni::runtime {

// One entry of "plugins": the object as written (every key kept, so the
// runtime can pass unknown keys through unchanged, spec section 3).
struct PluginConfig {
  std::string type;                          // "type" (required, non-empty)
  std::map<std::string, bool> capabilities;  // "capabilities" (what runtimeConfig may carry)
  Json conf = Json::object();                // the whole plugin object
};

// A network configuration list (spec section 1).
struct NetworkConfigList {
  std::string name;         // "name"
  // The version the runtime uses: the highest of "cniVersion" and
  // "cniVersions" that this implementation speaks (1.1.0 additions).
  std::string cni_version;
  bool disable_check = false;              // "disableCheck"
  bool disable_gc = false;                 // "disableGC" (1.1.0)
  bool load_only_inlined_plugins = false;  // "loadOnlyInlinedPlugins" (libcni 1.3)
  std::vector<PluginConfig> plugins;       // in execution order for ADD
  // The document as loaded: what the result cache stores (base64) in "config".
  std::string bytes;
};

// Parses a configuration list. Like libcni, booleans may also be the strings
// "true"/"false"; "plugins" may be absent (the plugins then come from files,
// see LoadNetworkConf), but when present must be a non-empty list of objects
// each with a "type". Malformed documents: code 6 (decoding) or 7 (invalid).
absl::StatusOr<NetworkConfigList> ConfListFromBytes(absl::string_view bytes);

// "Upconverts" a single-plugin configuration (a deprecated .conf/.json file)
// into a one-plugin list, as libcni's ConfListFromConf does; the list's bytes
// are {"cniVersion","name","plugins":[<the conf>]}.
absl::StatusOr<NetworkConfigList> ConfListFromConf(absl::string_view bytes);

// Files in `dir` whose extension is one of `extensions` (".conflist"), sorted
// by name. A missing directory is an empty list, not an error (libcni).
absl::StatusOr<std::vector<std::string>> ConfFiles(absl::string_view dir,
                                                   const std::vector<std::string>& extensions);

// Loads the list called `name` from `dir`, in libcni's order: every *.conflist
// (sorted; the first with that name wins, and any unreadable one is an error),
// then the deprecated single-plugin *.conf/*.json files (sorted), upconverted.
// A list without "loadOnlyInlinedPlugins" also gets the plugin files in
// <dir>/<name>/*.conf appended. Not found: code 7, naming the directory.
absl::StatusOr<NetworkConfigList> LoadNetworkConf(absl::string_view dir, absl::string_view name);

}  // namespace cni::runtime

// Spec section 3, "Deriving execution configuration from plugin configuration".
#include "cni/runtime/runtime.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace cni::runtime {

Json BuildExecConfig(absl::string_view network, absl::string_view cni_version,
                     const PluginConfig& plugin, const Json* prev_result, const RuntimeConf* rt) {
  // Every other key passes through unchanged (the spec's "must preserve unknown
  // fields"), so start from the object as written.
  Json conf = plugin.conf;
  conf["name"] = std::string(network);
  conf["cniVersion"] = std::string(cni_version);
  if (prev_result != nullptr && !prev_result->is_null()) conf["prevResult"] = *prev_result;
  // "capabilities" must be removed. (libcni 1.3 leaves it in; plugins ignore
  // it either way, and the spec is explicit.)
  conf.erase("capabilities");
  if (rt != nullptr) {
    // runtimeConfig = declared-and-true capabilities that the runtime supplies.
    // Like libcni, a plugin that gets none keeps whatever runtimeConfig its
    // configuration had (normally none), and an empty one is not added.
    Json rc = Json::object();
    for (const auto& [cap, supported] : plugin.capabilities) {
      if (!supported || !rt->capability_args.is_object()) continue;
      if (auto it = rt->capability_args.find(cap); it != rt->capability_args.end()) rc[cap] = *it;
    }
    if (!rc.empty()) conf["runtimeConfig"] = std::move(rc);
  }
  return conf;
}

std::string JoinCniArgs(const std::vector<std::pair<std::string, std::string>>& args) {
  return absl::StrJoin(args, ";", [](std::string* out, const auto& kv) {
    absl::StrAppend(out, kv.first, "=", kv.second);
  });
}

}  // namespace cni::runtime

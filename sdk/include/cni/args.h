// CNI_ARGS: "K1=V1;K2=V2". Each pair has exactly one '='. Unknown keys are an
// error (code 4) unless IgnoreUnknown=1/true appears anywhere in the string.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/status/statusor.h"
#include "cni/json.h"

namespace cni {

class CniArgs {
 public:
  // Parses CNI_ARGS. `known_keys` lists the keys the plugin understands; other
  // keys are an error unless IgnoreUnknown is set. "IgnoreUnknown" and the
  // K8S_POD_* keys are always known.
  static absl::StatusOr<CniArgs> Parse(absl::string_view text,
                                       const std::vector<std::string>& known_keys = {});

  // The value of `key` (exact, case-sensitive as upstream), if present.
  std::optional<std::string> Get(absl::string_view key) const;
  bool ignore_unknown() const { return ignore_unknown_; }
  const std::vector<std::pair<std::string, std::string>>& pairs() const { return pairs_; }

  // Well-known keys.
  std::optional<std::string> Ip() const { return Get("IP"); }
  std::optional<std::string> Mac() const { return Get("MAC"); }
  std::optional<std::string> Gateway() const { return Get("GATEWAY"); }
  std::optional<std::string> PodNamespace() const { return Get("K8S_POD_NAMESPACE"); }
  std::optional<std::string> PodName() const { return Get("K8S_POD_NAME"); }
  std::optional<std::string> PodInfraContainerId() const { return Get("K8S_POD_INFRA_CONTAINER_ID"); }
  std::optional<std::string> PodUid() const { return Get("K8S_POD_UID"); }

 private:
  std::vector<std::pair<std::string, std::string>> pairs_;
  bool ignore_unknown_ = false;
};

// The config's "args": {"cni": {...}} object (null/absent -> empty object).
// The rule of the conventions: a value here wins over CNI_ARGS for the same meaning.
Json ArgsCni(const Json& conf_args);

}  // namespace cni

// CNI_ARGS: "K1=V1;K2=V2". Each pair has exactly one '='. Unknown keys are an
// error (code 4) unless IgnoreUnknown=1/true appears anywhere in the string.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/base/json.h"

namespace cni {

// The parsed CNI_ARGS: its pairs in order, and the IgnoreUnknown flag.
class CniArgs {
 public:
  // Parses CNI_ARGS. `known_keys` lists the keys the plugin understands; other
  // keys are an error unless IgnoreUnknown is set. "IgnoreUnknown" and the
  // K8S_POD_* keys are always known.
  static absl::StatusOr<CniArgs> Parse(absl::string_view text,
                                       const std::vector<std::string>& known_keys = {});

  // The value of `key` (exact, case-sensitive as upstream), if present.
  std::optional<std::string> Get(absl::string_view key) const;
  // True when IgnoreUnknown=1/true (any case) was given.
  bool ignore_unknown() const { return ignore_unknown_; }
  // Every pair, in the order given (IgnoreUnknown included).
  const std::vector<std::pair<std::string, std::string>>& pairs() const { return pairs_; }

  // Well-known keys.
  // IP: requested address(es), e.g. "10.1.2.3" or a comma-separated CIDR list.
  std::optional<std::string> Ip() const { return Get("IP"); }
  // MAC: requested MAC address of the container interface.
  std::optional<std::string> Mac() const { return Get("MAC"); }
  // GATEWAY: requested gateway(s), comma-separated.
  std::optional<std::string> Gateway() const { return Get("GATEWAY"); }
  // K8S_POD_NAMESPACE, set by Kubernetes runtimes.
  std::optional<std::string> PodNamespace() const { return Get("K8S_POD_NAMESPACE"); }
  // K8S_POD_NAME, set by Kubernetes runtimes.
  std::optional<std::string> PodName() const { return Get("K8S_POD_NAME"); }
  // K8S_POD_INFRA_CONTAINER_ID, set by Kubernetes runtimes.
  std::optional<std::string> PodInfraContainerId() const { return Get("K8S_POD_INFRA_CONTAINER_ID"); }
  // K8S_POD_UID, set by Kubernetes runtimes.
  std::optional<std::string> PodUid() const { return Get("K8S_POD_UID"); }

 private:
  std::vector<std::pair<std::string, std::string>> pairs_;  // as parsed, in order
  bool ignore_unknown_ = false;                              // IgnoreUnknown seen
};

// The config's "args": {"cni": {...}} object (null/absent -> empty object).
// The rule of the conventions: a value here wins over CNI_ARGS for the same meaning.
Json ArgsCni(const Json& conf_args);

}  // namespace cni

#include "absl/strings/string_view.h"
#include "cni/protocol/args.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"

namespace cni {
namespace {

// Keys every plugin understands: the Kubernetes ones are always sent by kubelet.
constexpr absl::string_view kAlwaysKnown[] = {
    "IgnoreUnknown", "K8S_POD_NAMESPACE", "K8S_POD_NAME", "K8S_POD_INFRA_CONTAINER_ID",
    "K8S_POD_UID"};

// IgnoreUnknown takes upstream's UnmarshallableBool values: 1/true/0/false.
absl::StatusOr<bool> ParseArgBool(absl::string_view key, absl::string_view value) {
  std::string lower = absl::AsciiStrToLower(value);
  if (lower == "1" || lower == "true") return true;
  if (lower == "0" || lower == "false") return false;
  return Error(ErrorCode::kInvalidEnvironment,
               absl::StrCat("CNI_ARGS: invalid boolean \"", value, "\" for ", key));
}

}  // namespace

absl::StatusOr<CniArgs> CniArgs::Parse(absl::string_view text,
                                       const std::vector<std::string>& known_keys) {
  CniArgs out;
  if (text.empty()) return out;
  std::vector<std::string> unknown;
  for (absl::string_view pair : absl::StrSplit(text, ';')) {
    std::vector<absl::string_view> kv = absl::StrSplit(pair, '=');
    if (kv.size() != 2) {
      return Error(ErrorCode::kInvalidEnvironment,
                   absl::StrCat("CNI_ARGS: invalid pair \"", pair, "\""));
    }
    std::string key(kv[0]);
    bool known = std::find(known_keys.begin(), known_keys.end(), key) != known_keys.end() ||
                 std::find(std::begin(kAlwaysKnown), std::end(kAlwaysKnown), key) !=
                     std::end(kAlwaysKnown);
    if (key == "IgnoreUnknown") {
      ASSIGN_OR_RETURN(out.ignore_unknown_, ParseArgBool(key, kv[1]));
    }
    if (!known) unknown.emplace_back(pair);
    out.pairs_.emplace_back(std::move(key), std::string(kv[1]));
  }
  if (!unknown.empty() && !out.ignore_unknown_) {
    return Error(ErrorCode::kInvalidEnvironment,
                 absl::StrCat("CNI_ARGS: unknown args [", absl::StrJoin(unknown, " "), "]"));
  }
  return out;
}

std::optional<std::string> CniArgs::Get(absl::string_view key) const {
  // The last occurrence wins, as a later field assignment does upstream.
  for (auto it = pairs_.rbegin(); it != pairs_.rend(); ++it) {
    if (it->first == key) return it->second;
  }
  return std::nullopt;
}

Json ArgsCni(const Json& conf_args) {
  const Json* cni = FindKey(conf_args, "cni");
  if (cni == nullptr || !cni->is_object()) return Json::object();
  return *cni;
}

}  // namespace cni

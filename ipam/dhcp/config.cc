#include "config.h"

#include <algorithm>
#include <map>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "cni/plugin/config_schema.h"
#include "packet.h"
#include "packet6.h"
#include "protocol.h"

namespace cni::dhcp {
namespace {

struct RequestEntry {
  std::string option;
  bool skip_default = false;
};
struct ProvideEntry {
  std::string option;
  std::string value;
  std::string from_arg;
};

struct RawKeys {
  std::string socket_path;
  std::string family = "ipv4";
  bool rapid_commit = true;
  std::vector<RequestEntry> request;
  std::vector<ProvideEntry> provide;
  int priority = 0;
  int timeout_seconds = 90;
};

absl::Status WrongType(absl::string_view what) {
  return Error(ErrorCode::kDecodingFailure, absl::StrCat("cannot decode \"", what, "\": expected an object"));
}

template <typename T>
absl::StatusOr<std::vector<T>> ParseList(const Json& v, absl::string_view key,
                                         const config::Schema<T>& keys) {
  if (!v.is_array()) return Error(ErrorCode::kDecodingFailure, absl::StrCat("cannot decode \"", key, "\": expected a list"));
  std::vector<T> out;
  for (const Json& item : v) {
    if (!item.is_object()) return WrongType(key);
    T entry;
    RETURN_IF_ERROR(config::ParseKeys(item, keys, "dhcp", entry));
    out.push_back(std::move(entry));
  }
  return out;
}

const config::Schema<RequestEntry> kRequestKeys = {
    config::String("option", &RequestEntry::option),
    config::Bool("skipDefault", &RequestEntry::skip_default),
};
const config::Schema<ProvideEntry> kProvideKeys = {
    config::String("option", &ProvideEntry::option),
    config::String("value", &ProvideEntry::value),
    config::String("fromArg", &ProvideEntry::from_arg),
};

const config::Schema<RawKeys> kIpamKeys = {
    config::String("daemonSocketPath", &RawKeys::socket_path),
    config::OneOf("family", &RawKeys::family, {"ipv4", "ipv6", "dual"}),
    config::Bool("rapidCommit", &RawKeys::rapid_commit),
    config::Custom("request", &RawKeys::request,
                   [](const Json& v) { return ParseList<RequestEntry>(v, "request", kRequestKeys); }),
    config::Custom("provide", &RawKeys::provide,
                   [](const Json& v) { return ParseList<ProvideEntry>(v, "provide", kProvideKeys); }),
    config::Integer("priority", &RawKeys::priority, {INT32_MIN, INT32_MAX}),
    config::Integer("timeout", &RawKeys::timeout_seconds, {1, 3600}),
};

// Upstream's reading of CNI_ARGS for "fromArg": "K=V" pairs split on ';',
// anything else ignored.
std::map<std::string, std::string> SplitCniArgs(absl::string_view args) {
  std::map<std::string, std::string> out;
  for (absl::string_view pair : absl::StrSplit(args, ';')) {
    std::vector<std::string> kv = absl::StrSplit(pair, absl::MaxSplits('=', 1));
    if (kv.size() == 2) out[kv[0]] = kv[1];
  }
  return out;
}

absl::Status TooLong(absl::string_view option, absl::string_view where) {
  return Error(ErrorCode::kInvalidNetworkConfig,
               absl::StrCat("dhcp: value too long for option \"", option, "\"", where, " (at most 255 bytes)"));
}

}  // namespace

absl::StatusOr<Config> Config::Parse(const CmdArgs& args) {
  const Json* ipam = FindKey(args.conf.raw, "ipam");
  if (ipam == nullptr || !ipam->is_object()) {
    return Error(ErrorCode::kInvalidNetworkConfig, "dhcp: IPAM config missing 'ipam' key");
  }
  RawKeys raw;
  RETURN_IF_ERROR(config::ParseKeys(*ipam, kIpamKeys, "dhcp", raw));
  Config c;
  c.socket_path = raw.socket_path.empty() ? kDefaultSocketPath : raw.socket_path;
  c.family = raw.family == "ipv6" ? Family::kIpv6 : raw.family == "dual" ? Family::kDual : Family::kIpv4;
  c.rapid_commit = raw.rapid_commit;
  c.priority = raw.priority;
  c.add_budget = absl::Seconds(raw.timeout_seconds);

  std::map<std::string, std::string> cni_args = SplitCniArgs(args.args);
  for (const ProvideEntry& p : raw.provide) {
    ASSIGN_OR_RETURN(std::optional<uint16_t> code6, v6::ParseOption6Name(p.option));
    if (code6) {
      // The value, then the argument (which wins, as for DHCPv4).
      std::vector<std::string> texts;
      if (!p.value.empty()) texts.push_back(p.value);
      if (auto it = cni_args.find(p.from_arg); !p.from_arg.empty() && it != cni_args.end()) texts.push_back(it->second);
      for (const std::string& text : texts) {
        if (text.size() > 255) return TooLong(p.option, "");
        ASSIGN_OR_RETURN(std::string value, v6::EncodeOption6(*code6, text));
        if (*code6 == v6::opt::kClientId) {
          c.duid = value;
          continue;
        }
        // A later one of the same code replaces an earlier one.
        std::erase_if(c.provide6, [&](const auto& e) { return e.first == *code6; });
        c.provide6.emplace_back(*code6, std::move(value));
      }
      continue;
    }
    ASSIGN_OR_RETURN(uint8_t code, ParseOptionName(p.option));
    if (!p.value.empty()) {
      if (p.value.size() > 255) return TooLong(p.option, "");
      c.provide.emplace_back(code, p.value);
    }
    if (auto it = cni_args.find(p.from_arg); !p.from_arg.empty() && it != cni_args.end()) {
      if (it->second.size() > 255) return TooLong(p.option, absl::StrCat(" from CNI_ARGS ", p.from_arg));
      c.provide.emplace_back(code, it->second);
    }
  }
  bool skip_default = false;
  auto add = [&c](uint8_t code) {
    if (c.parameter_list.find(static_cast<char>(code)) == std::string::npos) {
      c.parameter_list.push_back(static_cast<char>(code));
    }
  };
  for (const RequestEntry& r : raw.request) {
    skip_default = skip_default || r.skip_default;
    if (r.option.empty()) continue;
    ASSIGN_OR_RETURN(std::optional<uint16_t> code6, v6::ParseOption6Name(r.option));
    if (code6) {
      if (std::find(c.request6.begin(), c.request6.end(), *code6) == c.request6.end()) c.request6.push_back(*code6);
      continue;
    }
    ASSIGN_OR_RETURN(uint8_t code, ParseOptionName(r.option));
    add(code);
  }
  if (!skip_default) {
    for (uint8_t code : kDefaultRequest) add(code);
  }
  return c;
}

std::vector<std::string> Config::KeyNames() { return config::KeyNames(kIpamKeys); }

}  // namespace cni::dhcp

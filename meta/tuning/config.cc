#include "config.h"

#include <cstdint>
#include <regex>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "cni/args.h"
#include "cni/config_schema.h"
#include "cni/error.h"
#include "cni/fs.h"
#include "cni/json.h"
#include "cni/status_macros.h"

namespace cni::tuning {
namespace {

absl::Status Invalid(absl::string_view msg) {
  return Error(ErrorCode::kInvalidNetworkConfig, absl::StrCat("tuning: ", msg));
}

// The link attributes that may come from the config and from args.cni.
struct LinkKeys {
  std::optional<std::string> mac;
  std::optional<bool> promisc;
  std::optional<int64_t> mtu;
  std::optional<bool> allmulti;
  std::optional<int64_t> txqlen;

  // Keys set in `later` win.
  void Override(const LinkKeys& later) {
    if (later.mac) mac = later.mac;
    if (later.promisc) promisc = later.promisc;
    if (later.mtu) mtu = later.mtu;
    if (later.allmulti) allmulti = later.allmulti;
    if (later.txqlen) txqlen = later.txqlen;
  }
};

// Any whole number: mtu and txQLen are range-checked after the merge, with
// their own messages.
constexpr config::Range kAnyInteger = {INT64_MIN, INT64_MAX};

const config::Schema<LinkKeys> kLinkKeys = {
    config::String("mac", &LinkKeys::mac),
    config::Bool("promisc", &LinkKeys::promisc),
    config::Integer("mtu", &LinkKeys::mtu, kAnyInteger),
    config::Bool("allmulti", &LinkKeys::allmulti),
    config::Integer("txQLen", &LinkKeys::txqlen, kAnyInteger),
};

// Merges a "sysctl" object into `out` (later calls win for the same key).
absl::Status ReadSysctls(const Json& obj, std::map<std::string, std::string>& out) {
  ASSIGN_OR_RETURN(std::optional<Json> sysctl, GetObject(obj, "sysctl"));
  if (!sysctl) return absl::OkStatus();
  if (!sysctl->is_object()) {
    return Error(ErrorCode::kDecodingFailure, "tuning: \"sysctl\" must be an object of strings");
  }
  for (const auto& [key, value] : sysctl->items()) {
    if (!value.is_string()) {
      return Error(ErrorCode::kDecodingFailure,
                   absl::StrCat("tuning: sysctl \"", key, "\" must have a string value"));
    }
    out[key] = value.get<std::string>();
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> SysctlPath(absl::string_view key, absl::string_view ifname) {
  std::string k = absl::StrReplaceAll(key, {{".", "/"}});
  if (size_t pos = k.find("IFNAME"); pos != std::string::npos) k.replace(pos, 6, std::string(ifname));
  // Clean the path as filepath.Join does, then insist on net/<something>.
  std::vector<std::string> parts;
  for (absl::string_view part : absl::StrSplit(k, '/')) {
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (parts.empty()) return Invalid(absl::StrCat("invalid net sysctl key \"", key, "\""));
      parts.pop_back();
      continue;
    }
    parts.emplace_back(part);
  }
  // An absolute key ("/proc/sys/net/...") is refused too: upstream joins it
  // under /proc/sys, where it names nothing.
  if (absl::StartsWith(key, "/") || parts.size() < 2 || parts[0] != "net") {
    return Invalid(absl::StrCat("invalid net sysctl key \"", key,
                                "\": it must name a file below /proc/sys/net"));
  }
  return absl::StrJoin(parts, "/");
}

absl::StatusOr<Config> Config::Parse(const CmdArgs& args) {
  const NetConf& conf = args.conf;
  Config c;
  c.name = conf.name;
  ASSIGN_OR_RETURN(BackupDir dir, BackupDir::Parse(args));
  c.data_dir = dir.path;

  std::map<std::string, std::string> sysctls;
  RETURN_IF_ERROR(ReadSysctls(conf.raw, sysctls));
  LinkKeys keys;
  RETURN_IF_ERROR(config::ParseKeys(conf.raw, kLinkKeys, "tuning", keys));

  // CNI_ARGS "MAC", then runtimeConfig.mac, then args.cni.*: later wins.
  ASSIGN_OR_RETURN(CniArgs env_args, CniArgs::Parse(args.args, {"MAC"}));
  if (std::optional<std::string> mac = env_args.Mac(); mac && !mac->empty()) keys.mac = *mac;
  ASSIGN_OR_RETURN(std::optional<std::string> rt_mac, GetString(conf.runtime_config, "mac"));
  if (rt_mac && !rt_mac->empty()) keys.mac = *rt_mac;

  Json args_cni = ArgsCni(conf.args);
  RETURN_IF_ERROR(ReadSysctls(args_cni, sysctls));
  LinkKeys arg_keys;
  RETURN_IF_ERROR(config::ParseKeys(args_cni, kLinkKeys, "tuning", arg_keys));
  keys.Override(arg_keys);

  for (const auto& [key, value] : sysctls) {
    ASSIGN_OR_RETURN(std::string path, SysctlPath(key, args.ifname));
    c.sysctls.push_back({key, path, value});
  }
  // An empty MAC means "not set", as upstream's omitempty string.
  if (keys.mac && !keys.mac->empty()) {
    absl::StatusOr<net::MacAddress> mac = net::MacAddress::Parse(*keys.mac);
    if (!mac.ok()) return Invalid(absl::StrCat("invalid MAC address \"", *keys.mac, "\""));
    c.mac = *mac;
  }
  c.promisc = keys.promisc.value_or(false);
  if (keys.mtu) {
    if (*keys.mtu < 0 || *keys.mtu > 65535) {
      return Invalid(absl::StrCat("mtu ", *keys.mtu, " is out of range (0-65535)"));
    }
    c.mtu = static_cast<int>(*keys.mtu);
  }
  c.allmulti = keys.allmulti;
  if (keys.txqlen) {
    if (*keys.txqlen < 0 || *keys.txqlen > UINT32_MAX / 2) {
      return Invalid(absl::StrCat("txQLen ", *keys.txqlen, " is out of range"));
    }
    c.txqlen = static_cast<int>(*keys.txqlen);
  }
  c.prev_result = ParsePrevResult(conf);
  return c;
}

absl::Status CheckAllowlist(const Config& config, absl::string_view text) {
  std::vector<std::string> patterns;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!line.empty()) patterns.emplace_back(line);
  }
  std::vector<std::regex> compiled;
  for (const std::string& p : patterns) {
    try {
      compiled.emplace_back(p, std::regex::ECMAScript);
    } catch (const std::regex_error&) {
      return Invalid(absl::StrCat("sysctl allowlist: invalid regular expression \"", p, "\""));
    }
  }
  for (const Sysctl& s : config.sysctls) {
    bool ok = false;
    for (const std::regex& re : compiled) {
      if (std::regex_search(s.key, re)) {
        ok = true;
        break;
      }
    }
    if (!ok) {
      return Invalid(absl::StrCat("sysctl ", s.key, " is not allowed. Only the following sysctls are allowed: [",
                                  absl::StrJoin(patterns, " "), "]"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckAllowlistFile(const Config& config, const std::string& path) {
  if (config.sysctls.empty()) return absl::OkStatus();
  ASSIGN_OR_RETURN(std::optional<std::string> text, ReadRegularFileIfExists(path),
                   "tuning: sysctl allowlist");
  if (!text) return absl::OkStatus();  // no list: everything is allowed (upstream's rule)
  return CheckAllowlist(config, *text);
}

absl::StatusOr<BackupDir> BackupDir::Parse(const CmdArgs& args) {
  ASSIGN_OR_RETURN(std::optional<std::string> dir, GetString(args.conf.raw, "dataDir"));
  if (!dir || dir->empty()) return BackupDir{std::string(kDefaultDataDir)};
  return BackupDir{*dir};
}

}  // namespace cni::tuning

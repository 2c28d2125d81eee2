#include "config.h"

#include <set>

#include <map>

#include <algorithm>

#include <cstdint>
#include <regex>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "cni/base/error.h"
#include "cni/base/fs.h"
#include "cni/base/json.h"
#include "cni/base/status_macros.h"
#include "cni/plugin/config_schema.h"
#include "cni/protocol/args.h"

namespace cni::tuning {
namespace {

absl::Status Invalid(absl::string_view msg) { return InvalidConfig("tuning", msg); }

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

using SysctlItems = std::vector<std::pair<std::string, std::string>>;  // (key, value)

// The "sysctl" object of `obj` (config or args.cni), as written.
absl::StatusOr<SysctlItems> ReadSysctls(const Json& obj) {
  SysctlItems out;
  ASSIGN_OR_RETURN(std::optional<Json> sysctl, GetObject(obj, "sysctl"));
  if (!sysctl) return out;
  if (!sysctl->is_object()) {
    return Error(ErrorCode::kDecodingFailure, "tuning: \"sysctl\" must be an object of strings");
  }
  for (const auto& [key, value] : sysctl->items()) {
    if (!value.is_string()) {
      return Error(ErrorCode::kDecodingFailure,
                   absl::StrCat("tuning: sysctl \"", key, "\" must have a string value"));
    }
    out.emplace_back(key, value.get<std::string>());
  }
  return out;
}

absl::Status Duplicated(absl::string_view detail) {
  // Upstream's words (1.2+), then which keys: code 7, before any change.
  return Invalid(absl::StrCat("duplicated sysctl keys are not allowed: ", detail));
}

// Resolves one source's sysctls into `by_path`. Two keys of one source that
// name the same file ("a.b" and "a/b", "IFNAME" and the interface's own name)
// are refused: which value would win is an accident of key order. A later
// source (args.cni) replaces an earlier one's entry for the same file.
absl::Status Resolve(const SysctlItems& items, absl::string_view ifname,
                     std::map<std::string, Sysctl>& by_path) {
  std::map<std::string, std::string> seen;  // path -> key, within this source
  for (const auto& [key, value] : items) {
    ASSIGN_OR_RETURN(std::string path, SysctlPath(key, ifname));
    auto [it, fresh] = seen.emplace(path, key);
    if (!fresh) {
      return Duplicated(absl::StrCat("\"", it->second, "\" and \"", key, "\" both name /proc/sys/", path));
    }
    by_path[path] = Sysctl{key, path, value};
  }
  return absl::OkStatus();
}

// Whether `key` (a JSON object key) is "sysctl" as Go's decoder matches it.
bool IsSysctlKey(absl::string_view key) { return absl::EqualsIgnoreCase(key, "sysctl"); }

// nlohmann's SAX events for one pass over the text: every key as it is
// read, with the keys leading to it, and no document built (building one,
// which the configuration's own parse already did, cost as much again).
// Only the two scopes that hold sysctls keep their keys: the top-level
// "sysctl" object and args.cni.sysctl (names matched as Go's decoder does).
class SysctlKeyWatch {
 public:
  std::optional<std::string> duplicate;  // the first key seen twice in one scope

  bool start_object(std::size_t) { return Open(false); }
  bool start_array(std::size_t) { return Open(true); }
  bool end_object() { return Close(); }
  bool end_array() { return Close(); }
  bool key(std::string& key) {
    if (std::set<std::string>* seen = Scope(); seen && !seen->insert(key).second && !duplicate) {
      duplicate = key;
    }
    last_key_ = std::move(key);
    return true;
  }
  bool null() { return true; }
  bool boolean(bool) { return true; }
  bool number_integer(Json::number_integer_t) { return true; }
  bool number_unsigned(Json::number_unsigned_t) { return true; }
  bool number_float(Json::number_float_t, const std::string&) { return true; }
  bool string(std::string&) { return true; }
  bool binary(Json::binary_t&) { return true; }
  // Malformed JSON is not this check's business: NetConf::Parse reports it.
  bool parse_error(std::size_t, const std::string&, const Json::exception&) { return false; }

 private:
  // A container opens under the last key of the object around it; under ""
  // at the top or inside an array.
  bool Open(bool is_array) {
    bool in_object = !is_array_.empty() && !is_array_.back();
    parents_.push_back(in_object ? last_key_ : std::string());
    is_array_.push_back(is_array);
    return true;
  }
  bool Close() {
    parents_.pop_back();
    is_array_.pop_back();
    return true;
  }
  // parents_[0] is the document; parents_[1] the top-level key the current
  // container hangs under, and so on.
  std::set<std::string>* Scope() {
    if (parents_.size() == 2 && IsSysctlKey(parents_[1])) return &top_;
    if (parents_.size() == 4 && absl::EqualsIgnoreCase(parents_[1], "args") &&
        absl::EqualsIgnoreCase(parents_[2], "cni") && IsSysctlKey(parents_[3])) {
      return &args_cni_;
    }
    return nullptr;
  }

  std::vector<std::string> parents_;
  std::vector<bool> is_array_;
  std::string last_key_;
  std::set<std::string> top_, args_cni_;
};

}  // namespace

absl::Status CheckLiteralSysctlDuplicates(absl::string_view stdin_data) {
  // The parsed document keeps only the last of two equal keys, so the text is
  // read again, by events.
  SysctlKeyWatch watch;
  (void)Json::sax_parse(stdin_data.begin(), stdin_data.end(), &watch);
  if (watch.duplicate) return Duplicated(absl::StrCat("\"", *watch.duplicate, "\" is given twice"));
  return absl::OkStatus();
}

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

  RETURN_IF_ERROR(CheckLiteralSysctlDuplicates(args.stdin_data));
  ASSIGN_OR_RETURN(SysctlItems config_sysctls, ReadSysctls(conf.raw));
  LinkKeys keys;
  RETURN_IF_ERROR(config::ParseKeys(conf.raw, kLinkKeys, "tuning", keys));

  // CNI_ARGS "MAC", then runtimeConfig.mac, then args.cni.*: later wins.
  ASSIGN_OR_RETURN(CniArgs env_args, CniArgs::Parse(args.args, {"MAC"}));
  if (std::optional<std::string> mac = env_args.Mac(); mac && !mac->empty()) keys.mac = *mac;
  ASSIGN_OR_RETURN(std::optional<std::string> rt_mac, GetString(conf.runtime_config, "mac"));
  if (rt_mac && !rt_mac->empty()) keys.mac = *rt_mac;

  Json args_cni = ArgsCni(conf.args);
  ASSIGN_OR_RETURN(SysctlItems args_sysctls, ReadSysctls(args_cni));
  LinkKeys arg_keys;
  RETURN_IF_ERROR(config::ParseKeys(args_cni, kLinkKeys, "tuning", arg_keys));
  keys.Override(arg_keys);

  std::map<std::string, Sysctl> by_path;
  RETURN_IF_ERROR(Resolve(config_sysctls, args.ifname, by_path));
  RETURN_IF_ERROR(Resolve(args_sysctls, args.ifname, by_path));
  for (auto& [path, sysctl] : by_path) c.sysctls.push_back(std::move(sysctl));
  std::sort(c.sysctls.begin(), c.sysctls.end(),
            [](const Sysctl& a, const Sysctl& b) { return a.key < b.key; });
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

std::vector<std::string> Config::KeyNames() {
  std::vector<std::string> own = config::KeyNames(kLinkKeys);
  own.push_back("sysctl");
  std::vector<std::string> names = own;
  names.insert(names.end(), {"dataDir", "runtimeConfig.mac"});
  for (const std::string& key : own) names.push_back("args.cni." + key);  // override the config's
  return names;
}

}  // namespace cni::tuning

// Executing network configuration lists: spec section 3 and the 1.1.0 verbs,
// with libcni's behaviour where the spec leaves room (libcni/api.go).
#include "cni/runtime/runtime.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cni/base/error.h"
#include "cni/base/exec.h"
#include "cni/base/fs.h"
#include "cni/base/status_macros.h"
#include "cni/protocol/invoke.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/version.h"

namespace cni::runtime {
namespace {

namespace fs = std::filesystem;

std::string VersionOr010(absl::string_view v) { return v.empty() ? "0.1.0" : std::string(v); }

// libcni's pluginDescription: type="x" (and name="y" when the plugin object
// has its own name).
std::string Describe(const PluginConfig& p) {
  std::string out = absl::StrCat("type=\"", p.type, "\"");
  if (auto it = p.conf.find("name"); it != p.conf.end() && it->is_string() && !it->get<std::string>().empty()) {
    absl::StrAppend(&out, " name=\"", it->get<std::string>(), "\"");
  }
  return out;
}

// A cache entry holds a whole configuration list and a result: far below this.
constexpr size_t kMaxCacheEntryBytes = 16 << 20;

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  return ReadRegularFile(path, kMaxCacheEntryBytes);
}

absl::Status ValidateAttachment(absl::string_view network, const RuntimeConf& rt) {
  // libcni's addNetwork validates these before running anything.
  if (!IsValidContainerId(rt.container_id)) {
    return Error(ErrorCode::kInvalidEnvironment, absl::StrCat("invalid container ID \"", rt.container_id, "\""));
  }
  if (!IsValidContainerId(network)) {  // same pattern as container IDs
    return Error(ErrorCode::kInvalidNetworkConfig, absl::StrCat("invalid network name \"", network, "\""));
  }
  return ValidateInterfaceName(rt.ifname);
}

Json AttachmentsJson(const std::vector<Attachment>& valid) {
  Json list = Json::array();
  for (const Attachment& a : valid) list.push_back({{"containerID", a.container_id}, {"ifname", a.ifname}});
  return list;
}

}  // namespace

Runtime::Runtime(Options options) : options_(std::move(options)) {}

absl::StatusOr<std::string> Runtime::Exec(absl::string_view verb, const PluginConfig& plugin,
                                          const Json& conf, const RuntimeConf& rt) const {
  ASSIGN_OR_RETURN(std::string path, FindPlugin(plugin.type, options_.plugin_dirs));
  std::vector<std::string> env;
  if (options_.base_env.has_value()) {
    env = *options_.base_env;
  } else {
    env = ProcessEnvironment();
  }
  // libcni always sets all six, empty ones included (GC and STATUS have no
  // container), overriding anything inherited.
  SetEnv(env, "CNI_COMMAND", verb);
  SetEnv(env, "CNI_CONTAINERID", rt.container_id);
  SetEnv(env, "CNI_NETNS", rt.netns);
  SetEnv(env, "CNI_ARGS", JoinCniArgs(rt.args));
  SetEnv(env, "CNI_IFNAME", rt.ifname);
  SetEnv(env, "CNI_PATH", absl::StrJoin(options_.plugin_dirs, ":"));

  // invoke's ExecPlugin: ETXTBSY retried briefly, the plugin's error document
  // (code, msg, details) kept, a run past the timeout killed.
  ASSIGN_OR_RETURN(ExecOutput out, ExecPlugin(path, env, Dump(conf), options_.timeout));
  return std::move(out.stdout_data);
}

absl::StatusOr<Json> Runtime::AddNetworkList(const NetworkConfigList& list, const RuntimeConf& rt) {
  RETURN_IF_ERROR(ValidateAttachment(list.name, rt));
  std::string version = VersionOr010(list.cni_version);
  Json result;  // null: the first plugin gets no prevResult
  for (const PluginConfig& plugin : list.plugins) {
    std::string context = absl::StrCat("plugin ", Describe(plugin), " failed (add)");
    Json conf = BuildExecConfig(list.name, list.cni_version, plugin, &result, &rt);
    ASSIGN_OR_RETURN(std::string out, Exec("ADD", plugin, conf, rt), context);
    // Validate the result; pass it on as printed (the next plugin and the
    // cache see what the plugin said), with libcni's fix-up: a result without
    // cniVersion is of the configuration's version.
    RETURN_IF_ERROR(ParseResult(absl::string_view(out), version), context);
    absl::StatusOr<Json> raw = ParseJson(out);
    if (!raw.ok() || !raw->is_object()) return Annotate(Error(ErrorCode::kDecodingFailure, "result is not an object"), context);
    if (auto v = raw->find("cniVersion"); v == raw->end() || !v->is_string() || v->get<std::string>().empty()) {
      (*raw)["cniVersion"] = version;
    }
    result = *std::move(raw);
  }
  CacheEntry entry{rt.container_id, list.bytes, rt.ifname, list.name, rt.netns, rt.args,
                   rt.capability_args, result};
  RETURN_IF_ERROR(WriteCacheEntry(options_.cache_dir, entry),
                  "failed to set network \"", list.name, "\" cached result");
  return result;
}

absl::StatusOr<std::optional<Json>> Runtime::GetCachedResult(const NetworkConfigList& list,
                                                             const RuntimeConf& rt) const {
  ASSIGN_OR_RETURN(std::string path,
                   CacheFilePath(options_.cache_dir, list.name, rt.container_id, rt.ifname));
  absl::StatusOr<std::string> bytes = ReadWholeFile(path);
  if (!bytes.ok()) return std::optional<Json>();  // no cached result (libcni ignores read errors)
  Json result;
  if (absl::StatusOr<CacheEntry> entry = DecodeCacheEntry(*bytes); entry.ok()) {
    result = entry->result;
  } else {
    // libcni's legacy cache: the file is the bare result.
    ASSIGN_OR_RETURN(result, ParseJson(*bytes), "cached result ", path);
  }
  if (result.is_null()) return std::optional<Json>();
  // Plugins get prevResult at the configuration's version (the two differ
  // only if the configuration changed while the container ran).
  std::string version = VersionOr010(list.cni_version);
  std::string cached_version = "0.1.0";
  if (auto v = result.find("cniVersion"); v != result.end() && v->is_string()) cached_version = v->get<std::string>();
  if (cached_version == version) {
    RETURN_IF_ERROR(ParseResult(result), "cached result ", path);
    return std::optional<Json>(std::move(result));
  }
  ASSIGN_OR_RETURN(Json converted, ConvertResult(result, version),
                   "failed to convert cached result to config version \"", version, "\"");
  return std::optional<Json>(std::move(converted));
}

absl::Status Runtime::CheckNetworkList(const NetworkConfigList& list, const RuntimeConf& rt) {
  if (!VersionAtLeast(VersionOr010(list.cni_version), "0.4.0")) {
    return Error(ErrorCode::kIncompatibleVersion,
                 absl::StrCat("configuration version \"", list.cni_version, "\" does not support the CHECK command"));
  }
  if (list.disable_check) return absl::OkStatus();
  ASSIGN_OR_RETURN(std::optional<Json> cached, GetCachedResult(list, rt),
                   "failed to get network \"", list.name, "\" cached result");
  Json prev = cached.value_or(Json());
  for (const PluginConfig& plugin : list.plugins) {
    Json conf = BuildExecConfig(list.name, list.cni_version, plugin, &prev, &rt);
    RETURN_IF_ERROR(Exec("CHECK", plugin, conf, rt), "plugin ", Describe(plugin), " failed (check)");
  }
  return absl::OkStatus();
}

absl::Status Runtime::RemoveCache(absl::string_view network, const RuntimeConf& rt) const {
  absl::StatusOr<std::string> path = CacheFilePath(options_.cache_dir, network, rt.container_id, rt.ifname);
  if (!path.ok()) return absl::OkStatus();
  // Best effort, as libcni: a cache file that cannot go must not fail DEL.
  (void)RemoveFileAndTemp(*path);
  return absl::OkStatus();
}

absl::Status Runtime::DelNetworkList(const NetworkConfigList& list, const RuntimeConf& rt) {
  Json prev;
  // The cached result is prevResult on DEL from 0.4.0 on. A corrupt entry
  // must not make the container undeletable: drop it and go on (libcni).
  if (VersionAtLeast(VersionOr010(list.cni_version), "0.4.0")) {
    absl::StatusOr<std::optional<Json>> cached = GetCachedResult(list, rt);
    if (cached.ok()) {
      prev = cached->value_or(Json());
    } else {
      (void)RemoveCache(list.name, rt);
    }
  }
  for (auto it = list.plugins.rbegin(); it != list.plugins.rend(); ++it) {
    Json conf = BuildExecConfig(list.name, list.cni_version, *it, &prev, &rt);
    RETURN_IF_ERROR(Exec("DEL", *it, conf, rt), "plugin ", Describe(*it), " failed (delete)");
  }
  return RemoveCache(list.name, rt);
}

std::vector<CachedAttachment> Runtime::GetCachedAttachments(absl::string_view container_id) const {
  std::vector<CachedAttachment> found;
  fs::path dir = fs::path(options_.cache_dir) / "results";
  std::error_code ec;
  std::vector<std::string> names;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    // A writer killed before its rename left "<entry>~": not an entry.
    if (absl::EndsWith(name, "~")) continue;
    if (!container_id.empty() && !absl::StrContains(name, absl::StrCat("-", container_id, "-"))) continue;
    absl::StatusOr<std::string> bytes = ReadWholeFile((dir / name).string());
    if (!bytes.ok()) continue;
    absl::StatusOr<CacheEntry> e = DecodeCacheEntry(*bytes);
    if (!e.ok()) continue;  // legacy or corrupt entries are skipped, as libcni does
    if (!container_id.empty() && e->container_id != container_id) continue;
    if (e->ifname.empty() || e->network.empty()) continue;
    found.push_back({e->container_id, e->network, e->ifname, e->netns, e->config, e->cni_args,
                     e->capability_args});
  }
  return found;
}

absl::Status Runtime::GcNetworkList(const NetworkConfigList& list,
                                    const std::optional<std::vector<Attachment>>& valid) {
  if (list.disable_gc) return absl::OkStatus();
  std::vector<std::string> errors;
  int first_code = 0;
  auto note = [&](const absl::Status& s) {
    if (first_code == 0) first_code = CodeOf(s);
    errors.emplace_back(s.message());
  };
  // 1. DEL every cached attachment of this network that is not valid (with no
  //    list given, none is).
  for (const CachedAttachment& a : GetCachedAttachments()) {
    if (a.network != list.name) continue;
    bool keep = valid.has_value() && std::any_of(valid->begin(), valid->end(), [&](const Attachment& v) {
      return v.container_id == a.container_id && v.ifname == a.ifname;
    });
    if (keep) continue;
    RuntimeConf rt{a.container_id, a.netns, a.ifname, a.cni_args,
                   a.capability_args.is_object() ? a.capability_args : Json::object()};
    if (absl::Status s = DelNetworkList(list, rt); !s.ok()) {
      note(Annotate(s, absl::StrCat("failed to delete stale attachment ", a.container_id, " ", a.ifname)));
    }
  }
  // 2. GC to every plugin, for 1.1.0 and later.
  if (VersionAtLeast(VersionOr010(list.cni_version), "1.1.0")) {
    for (const PluginConfig& plugin : list.plugins) {
      Json conf = BuildExecConfig(list.name, list.cni_version, plugin, nullptr, nullptr);
      if (valid.has_value()) {
        conf["cni.dev/valid-attachments"] = AttachmentsJson(*valid);
        // libcni also sends the name an early draft of the spec used (cni#1101).
        conf["cni.dev/attachments"] = AttachmentsJson(*valid);
      }
      if (absl::StatusOr<std::string> out = Exec("GC", plugin, conf, RuntimeConf{}); !out.ok()) {
        note(Annotate(out.status(), absl::StrCat("failed to GC plugin ", plugin.type)));
      }
    }
  }
  if (errors.empty()) return absl::OkStatus();
  return Error(static_cast<ErrorCode>(first_code), absl::StrJoin(errors, "\n"));
}

absl::Status Runtime::StatusNetworkList(const NetworkConfigList& list) {
  if (!VersionAtLeast(VersionOr010(list.cni_version), "1.1.0")) return absl::OkStatus();
  for (const PluginConfig& plugin : list.plugins) {
    Json conf = BuildExecConfig(list.name, list.cni_version, plugin, nullptr, nullptr);
    // The first error as it is: its code (50/51) is the answer.
    RETURN_IF_ERROR(Exec("STATUS", plugin, conf, RuntimeConf{}));
  }
  return absl::OkStatus();
}

}  // namespace cni::runtime

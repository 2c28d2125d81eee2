// Loading network configuration lists the way libcni (libcni/conf.go) does.
#include "cni/runtime/conf.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "cni/protocol/version.h"
#include "cni/runtime/cache.h"

namespace cni::runtime {
namespace {

namespace fs = std::filesystem;

absl::Status Invalid(absl::string_view msg) {
  return Error(ErrorCode::kInvalidNetworkConfig, absl::StrCat("error parsing configuration list: ", msg));
}

// libcni's readBool: absent -> false; a bool; or the string "true"/"false" in
// any case.
absl::StatusOr<bool> ReadBool(const Json& doc, const std::string& key) {
  auto it = doc.find(key);
  if (it == doc.end()) return false;
  if (it->is_boolean()) return it->get<bool>();
  if (!it->is_string()) return Invalid(absl::StrCat("invalid type for ", key));
  std::string s = absl::AsciiStrToLower(it->get<std::string>());
  if (s == "true") return true;
  if (s == "false") return false;
  return Invalid(absl::StrCat("invalid value \"", s, "\" for ", key));
}

// The version to run: "cniVersion", or, when "cniVersions" is given, the
// highest of both that is not newer than what we implement (1.1.0 additions;
// libcni skips newer entries the same way).
absl::StatusOr<std::string> PickVersion(const Json& doc) {
  std::string version;
  if (auto it = doc.find("cniVersion"); it != doc.end()) {
    if (!it->is_string()) return Invalid("invalid cniVersion type");
    version = it->get<std::string>();
  }
  auto list = doc.find("cniVersions");
  if (list == doc.end()) return version;
  if (!list->is_array()) return Invalid("invalid type for cniVersions");
  std::vector<std::string> candidates;
  auto consider = [&](const std::string& v, absl::string_view what) -> absl::Status {
    if (!ParseVersion(v).ok()) return Invalid(absl::StrCat("invalid ", what, " ", v));
    if (CompareVersions(v, kCurrentVersion) <= 0) candidates.push_back(v);
    return absl::OkStatus();
  };
  for (const Json& v : *list) {
    if (!v.is_string()) return Invalid("invalid type for a cniVersions entry");
    RETURN_IF_ERROR(consider(v.get<std::string>(), "cniVersions entry"));
  }
  if (!version.empty()) RETURN_IF_ERROR(consider(version, "cniVersion"));
  if (candidates.empty()) return version;
  return *std::max_element(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) {
    return CompareVersions(a, b) < 0;
  });
}

absl::StatusOr<PluginConfig> PluginFromJson(const Json& obj) {
  if (!obj.is_object()) return Error(ErrorCode::kDecodingFailure, "error parsing configuration: not an object");
  PluginConfig p;
  p.conf = obj;
  auto type = obj.find("type");
  if (type != obj.end() && type->is_string()) p.type = type->get<std::string>();
  if (p.type.empty()) return Error(ErrorCode::kInvalidNetworkConfig, "error parsing configuration: missing 'type'");
  if (auto caps = obj.find("capabilities"); caps != obj.end() && !caps->is_null()) {
    if (!caps->is_object()) return Error(ErrorCode::kDecodingFailure, "error parsing configuration: invalid capabilities");
    for (const auto& [k, v] : caps->items()) {
      if (!v.is_boolean()) return Error(ErrorCode::kDecodingFailure, absl::StrCat("error parsing configuration: capability \"", k, "\" is not a boolean"));
      p.capabilities[k] = v.get<bool>();
    }
  }
  return p;
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error(ErrorCode::kIoFailure, absl::StrCat("error reading ", path));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

absl::StatusOr<NetworkConfigList> ConfListFromBytes(absl::string_view bytes) {
  absl::StatusOr<Json> parsed = ParseJson(bytes);
  if (!parsed.ok() || !parsed->is_object()) {
    return Error(ErrorCode::kDecodingFailure, "error parsing configuration list: not a JSON object");
  }
  const Json& doc = *parsed;
  NetworkConfigList list;
  list.bytes = std::string(bytes);
  auto name = doc.find("name");
  if (name == doc.end()) return Invalid("no name");
  if (!name->is_string()) return Invalid("invalid name type");
  list.name = name->get<std::string>();
  ASSIGN_OR_RETURN(list.cni_version, PickVersion(doc));
  for (auto [key, field] : {std::pair{"disableCheck", &list.disable_check},
                            std::pair{"disableGC", &list.disable_gc},
                            std::pair{"loadOnlyInlinedPlugins", &list.load_only_inlined_plugins}}) {
    ASSIGN_OR_RETURN(*field, ReadBool(doc, key));
  }
  auto plugins = doc.find("plugins");
  if (plugins == doc.end()) {
    if (list.load_only_inlined_plugins) return Invalid("`loadOnlyInlinedPlugins` is true, and no 'plugins' key");
    return list;  // plugins come from <dir>/<name>/*.conf (LoadNetworkConf)
  }
  if (!plugins->is_array()) return Invalid("invalid 'plugins' type");
  if (plugins->empty()) return Invalid("no plugins in list");
  for (size_t i = 0; i < plugins->size(); ++i) {
    ASSIGN_OR_RETURN(PluginConfig p, PluginFromJson((*plugins)[i]), "failed to parse plugin config ", i);
    list.plugins.push_back(std::move(p));
  }
  return list;
}

absl::StatusOr<NetworkConfigList> ConfListFromConf(absl::string_view bytes) {
  absl::StatusOr<Json> parsed = ParseJson(bytes);
  if (!parsed.ok() || !parsed->is_object()) {
    return Error(ErrorCode::kDecodingFailure, "error parsing configuration: not a JSON object");
  }
  RETURN_IF_ERROR(PluginFromJson(*parsed));
  // libcni marshals a Go map here: keys sorted, name/cniVersion as strings
  // (empty when absent). GoMarshal gives the same bytes for the cache.
  auto str = [&](const char* key) {
    auto it = parsed->find(key);
    return it != parsed->end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  Json list = {{"name", str("name")}, {"cniVersion", str("cniVersion")}, {"plugins", Json::array({*parsed})}};
  return ConfListFromBytes(GoMarshal(list));
}

absl::StatusOr<std::vector<std::string>> ConfFiles(absl::string_view dir,
                                                   const std::vector<std::string>& extensions) {
  std::vector<std::string> files;
  std::error_code ec;
  fs::directory_iterator it(fs::path(std::string(dir)), ec);
  if (ec == std::errc::no_such_file_or_directory) return files;
  if (ec) return Error(ErrorCode::kIoFailure, absl::StrCat("reading ", dir, ": ", ec.message()));
  for (const fs::directory_entry& e : it) {
    if (e.is_directory(ec)) continue;
    std::string ext = e.path().extension().string();
    if (std::find(extensions.begin(), extensions.end(), ext) != extensions.end()) {
      files.push_back(e.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

absl::StatusOr<NetworkConfigList> LoadNetworkConf(absl::string_view dir, absl::string_view name) {
  ASSIGN_OR_RETURN(std::vector<std::string> lists, ConfFiles(dir, {".conflist"}));
  for (const std::string& file : lists) {
    ASSIGN_OR_RETURN(std::string bytes, ReadFile(file));
    ASSIGN_OR_RETURN(NetworkConfigList list, ConfListFromBytes(bytes), file);
    if (list.name != name) continue;
    if (!list.load_only_inlined_plugins) {
      // libcni 1.3: plugin files in <dir>/<network name>/*.conf are appended.
      std::string sub = (fs::path(file).parent_path() / list.name).string();
      ASSIGN_OR_RETURN(std::vector<std::string> extra, ConfFiles(sub, {".conf"}));
      for (const std::string& pf : extra) {
        ASSIGN_OR_RETURN(std::string pb, ReadFile(pf));
        ASSIGN_OR_RETURN(Json pj, ParseJson(pb), pf);
        ASSIGN_OR_RETURN(PluginConfig p, PluginFromJson(pj), pf);
        list.plugins.push_back(std::move(p));
      }
    }
    if (list.plugins.empty()) return Error(ErrorCode::kInvalidNetworkConfig, "no plugin configs found");
    return list;
  }
  // Deprecated single-plugin files, upconverted to a one-plugin list.
  ASSIGN_OR_RETURN(std::vector<std::string> confs, ConfFiles(dir, {".conf", ".json"}));
  if (confs.empty() && lists.empty()) {
    return Error(ErrorCode::kInvalidNetworkConfig, absl::StrCat("no net configurations found in ", dir));
  }
  for (const std::string& file : confs) {
    ASSIGN_OR_RETURN(std::string bytes, ReadFile(file));
    ASSIGN_OR_RETURN(Json doc, ParseJson(bytes), file);
    auto n = doc.is_object() ? doc.find("name") : doc.end();
    if (n == doc.end() || !n->is_string() || n->get<std::string>() != name) {
      RETURN_IF_ERROR(PluginFromJson(doc), file);
      continue;
    }
    return ConfListFromConf(bytes);
  }
  return Error(ErrorCode::kInvalidNetworkConfig,
               absl::StrCat("no net configuration with name \"", name, "\" in ", dir));
}

}  // namespace cni::runtime

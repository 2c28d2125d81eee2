#include "subject.h"

#include "absl/strings/str_cat.h"
#include "cni/base/json.h"

namespace conformance {
namespace {

absl::StatusOr<cni::runtime::PluginConfig> PluginFrom(const cni::Json& obj, absl::string_view where) {
  if (!obj.is_object()) return absl::InvalidArgumentError(absl::StrCat(where, " is not an object"));
  auto type = obj.find("type");
  if (type == obj.end() || !type->is_string() || type->get<std::string>().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(where, " has no \"type\""));
  }
  cni::runtime::PluginConfig p;
  p.type = type->get<std::string>();
  p.conf = obj;
  if (auto caps = obj.find("capabilities"); caps != obj.end() && caps->is_object()) {
    for (const auto& [k, v] : caps->items()) p.capabilities[k] = v.is_boolean() && v.get<bool>();
  }
  return p;
}

}  // namespace

absl::StatusOr<Subject> LoadSubject(absl::string_view bytes) {
  absl::StatusOr<cni::Json> doc = cni::ParseJson(bytes);
  if (!doc.ok()) return absl::InvalidArgumentError(absl::StrCat("the configuration is not JSON: ", doc.status().message()));
  if (!doc->is_object()) return absl::InvalidArgumentError("the configuration is not a JSON object");
  Subject s;
  s.network = "conformance";
  if (auto name = doc->find("name"); name != doc->end() && name->is_string()) s.network = name->get<std::string>();
  if (auto plugins = doc->find("plugins"); plugins != doc->end()) {
    if (!plugins->is_array() || plugins->empty()) {
      return absl::InvalidArgumentError("\"plugins\" is not a non-empty list");
    }
    for (size_t i = 0; i < plugins->size(); ++i) {
      absl::StatusOr<cni::runtime::PluginConfig> p = PluginFrom((*plugins)[i], absl::StrCat("plugins[", i, "]"));
      if (!p.ok()) return p.status();
      if (i + 1 == plugins->size()) {
        s.plugin = *std::move(p);
      } else {
        s.before.push_back(*std::move(p));
      }
    }
    return s;
  }
  absl::StatusOr<cni::runtime::PluginConfig> p = PluginFrom(*doc, "the configuration");
  if (!p.ok()) return p.status();
  // The list-level keys of a .conf are not the plugin's own.
  for (const char* key : {"name", "cniVersion", "cniVersions"}) p->conf.erase(key);
  s.plugin = *std::move(p);
  return s;
}

cni::runtime::NetworkConfigList PredecessorList(const Subject& s, const std::string& version) {
  cni::runtime::NetworkConfigList list;
  list.name = s.network;
  list.cni_version = version;
  list.plugins = s.before;
  cni::Json plugins = cni::Json::array();
  for (const cni::runtime::PluginConfig& p : s.before) plugins.push_back(p.conf);
  list.bytes = cni::Dump({{"cniVersion", version}, {"name", s.network}, {"plugins", plugins}});
  return list;
}

}  // namespace conformance

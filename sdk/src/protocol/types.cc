#include "cni/protocol/types.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"

namespace cni {
namespace {

// Assigns an optional getter result to `out` when the key was present.
template <typename T>
void AssignIfSet(std::optional<T>&& value, T& out) {
  if (value) out = std::move(*value);
}

// Reads "capabilities": a map of capability name to bool (spec section 3).
absl::Status ParseCapabilities(const Json& doc, NetConf& conf) {
  ASSIGN_OR_RETURN(std::optional<Json> caps, GetObject(doc, "capabilities"));
  if (!caps.has_value()) return absl::OkStatus();
  for (const auto& [name, value] : caps->items()) {
    if (value.is_null()) continue;  // Go leaves null map values at their zero value
    if (!value.is_boolean()) {
      return Error(ErrorCode::kDecodingFailure,
                   absl::StrCat("cannot decode \"capabilities\": value of \"", name,
                                "\" must be a bool"));
    }
    conf.capabilities[name] = value.get<bool>();
  }
  return absl::OkStatus();
}

// Reads "ipam" as given, plus its "type".
absl::Status ParseIpam(const Json& doc, NetConf& conf) {
  ASSIGN_OR_RETURN(std::optional<Json> ipam, GetObject(doc, "ipam"));
  if (!ipam.has_value()) return absl::OkStatus();
  conf.ipam = std::move(*ipam);
  ASSIGN_OR_RETURN(std::optional<std::string> type, GetString(conf.ipam, "type"), "ipam");
  AssignIfSet(std::move(type), conf.ipam_type);
  return absl::OkStatus();
}

absl::StatusOr<Attachment> ParseAttachment(const Json& j) {
  if (!j.is_object()) {
    return Error(ErrorCode::kDecodingFailure, "an attachment must be an object");
  }
  Attachment a;
  ASSIGN_OR_RETURN(std::optional<std::string> id, GetString(j, "containerID"));
  AssignIfSet(std::move(id), a.container_id);
  ASSIGN_OR_RETURN(std::optional<std::string> ifname, GetString(j, "ifname"));
  AssignIfSet(std::move(ifname), a.ifname);
  return a;
}

// Reads GC's "cni.dev/valid-attachments" (SPEC 1.1: list of {containerID, ifname}).
absl::Status ParseValidAttachments(const Json& doc, NetConf& conf) {
  constexpr absl::string_view kKey = "cni.dev/valid-attachments";
  ASSIGN_OR_RETURN(std::optional<Json> list, GetArray(doc, kKey));
  if (!list.has_value()) return absl::OkStatus();
  for (size_t i = 0; i < list->size(); ++i) {
    ASSIGN_OR_RETURN(Attachment a, ParseAttachment((*list)[i]), kKey, "[", i, "]");
    conf.valid_attachments.push_back(std::move(a));
  }
  return absl::OkStatus();
}

// Reads an object-valued key into `out`, leaving the default when absent.
absl::Status ParseObjectKey(const Json& doc, absl::string_view key, Json& out) {
  ASSIGN_OR_RETURN(std::optional<Json> v, GetObject(doc, key));
  AssignIfSet(std::move(v), out);
  return absl::OkStatus();
}

absl::Status ParseStrings(const Json& doc, NetConf& conf) {
  ASSIGN_OR_RETURN(std::optional<std::string> version, GetString(doc, "cniVersion"));
  AssignIfSet(std::move(version), conf.cni_version);

  ASSIGN_OR_RETURN(std::optional<std::vector<std::string>> versions,
                   GetStringList(doc, "cniVersions"));
  AssignIfSet(std::move(versions), conf.cni_versions);

  ASSIGN_OR_RETURN(std::optional<std::string> name, GetString(doc, "name"));
  AssignIfSet(std::move(name), conf.name);

  ASSIGN_OR_RETURN(std::optional<std::string> type, GetString(doc, "type"));
  AssignIfSet(std::move(type), conf.type);
  return absl::OkStatus();
}

absl::Status ParseDns(const Json& doc, NetConf& conf) {
  ASSIGN_OR_RETURN(std::optional<Json> dns, GetObject(doc, "dns"));
  if (!dns.has_value()) return absl::OkStatus();
  ASSIGN_OR_RETURN(conf.dns, Dns::FromConfig(*dns), "dns");
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Dns> Dns::FromJson(const Json& j) {
  if (!j.is_object()) {
    return Error(ErrorCode::kDecodingFailure, "\"dns\" must be an object");
  }
  Dns dns;
  ASSIGN_OR_RETURN(std::optional<std::vector<std::string>> ns, GetStringList(j, "nameservers"));
  AssignIfSet(std::move(ns), dns.nameservers);
  ASSIGN_OR_RETURN(std::optional<std::string> domain, GetString(j, "domain"));
  AssignIfSet(std::move(domain), dns.domain);
  ASSIGN_OR_RETURN(std::optional<std::vector<std::string>> search, GetStringList(j, "search"));
  AssignIfSet(std::move(search), dns.search);
  ASSIGN_OR_RETURN(std::optional<std::vector<std::string>> options, GetStringList(j, "options"));
  AssignIfSet(std::move(options), dns.options);
  return dns;
}

absl::StatusOr<std::optional<Dns>> Dns::FromConfig(const Json& value) {
  ASSIGN_OR_RETURN(Dns dns, FromJson(value));
  // A present list counts even when empty (Go: non-nil); an empty domain does
  // not (Go's zero string). FromJson cannot tell an empty list from an absent
  // one, so the lists are looked up again.
  for (absl::string_view key : {"nameservers", "search", "options"}) {
    const Json* v = FindKey(value, key);
    if (v != nullptr && !v->is_null()) return dns;
  }
  if (!dns.domain.empty()) return dns;
  return std::nullopt;
}

Json Dns::ToJson() const {
  // Every field is `omitempty` upstream (pkg/types DNS).
  Json j = Json::object();
  if (!nameservers.empty()) j["nameservers"] = nameservers;
  if (!domain.empty()) j["domain"] = domain;
  if (!search.empty()) j["search"] = search;
  if (!options.empty()) j["options"] = options;
  return j;
}

absl::StatusOr<NetConf> NetConf::Parse(absl::string_view bytes) {
  ASSIGN_OR_RETURN(Json doc, ParseJson(bytes), "decoding network configuration");
  if (!doc.is_object()) {
    return Error(ErrorCode::kDecodingFailure, "network configuration must be a JSON object");
  }
  NetConf conf;
  for (absl::Status s : {ParseStrings(doc, conf), ParseCapabilities(doc, conf),
                         ParseObjectKey(doc, "runtimeConfig", conf.runtime_config),
                         ParseObjectKey(doc, "args", conf.args),
                         ParseObjectKey(doc, "prevResult", conf.prev_result),
                         ParseIpam(doc, conf), ParseDns(doc, conf),
                         ParseValidAttachments(doc, conf)}) {
    RETURN_IF_ERROR(s, "decoding network configuration");
  }
  conf.raw = std::move(doc);
  return conf;
}

}  // namespace cni

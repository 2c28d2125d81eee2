#include "flannel.h"

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/fs.h"
#include "cni/base/status_macros.h"
#include "cni/protocol/invoke.h"
#include "cni/protocol/version.h"
#include "cni/runtime/cache.h"

namespace cni::flannel {
namespace {

// ipam.routes as upstream re-encodes them: decoded into CNI routes (unknown
// keys dropped, "dst" with its host bits kept), printed with the 1.1.0 fields.
absl::StatusOr<Json> NormalizedRoutes(const Json& routes) {
  if (!routes.is_array()) {
    return Error(ErrorCode::kDecodingFailure, "flannel: failed to read IPAM routes: \"routes\" must be a list");
  }
  Json doc = {{"cniVersion", "1.1.0"}, {"routes", routes}};
  ASSIGN_OR_RETURN(Result parsed, ParseResult(doc), "flannel: failed to read IPAM routes");
  ASSIGN_OR_RETURN(Json printed, ResultToJson(parsed, "1.1.0"));
  if (const Json* r = FindKey(printed, "routes"); r != nullptr && r->is_array()) return *r;
  return Json::array();
}

// Go decodes every JSON number of the delegate map into a float64, and prints
// a whole one without a fraction ("1400", never "1400.0").
void GoNumbers(Json& j) {
  if (j.is_structured()) {
    for (Json& v : j) GoNumbers(v);
  } else if (j.is_number_float()) {
    double d = j.get<double>();
    if (std::isfinite(d) && d == std::trunc(d) && std::fabs(d) < 9.0e18) j = static_cast<int64_t>(d);
  }
}

// A saved delegate configuration: the document and its plugin type.
struct Saved {
  std::string bytes;
  std::string type;
};

std::optional<Saved> Decode(std::string bytes) {
  absl::StatusOr<Json> j = ParseJson(bytes);
  if (!j.ok() || !j->is_object()) return std::nullopt;
  auto type = j->find("type");
  if (type == j->end() || !type->is_string() || type->get<std::string>().empty()) return std::nullopt;
  return Saved{std::move(bytes), type->get<std::string>()};
}

// The delegate configuration built from the subnet file now.
absl::StatusOr<Saved> Rebuild(const Config& config) {
  RETURN_IF_ERROR(config.setup_error);
  ASSIGN_OR_RETURN(SubnetEnv env, LoadSubnetEnv(config.subnet_file));
  ASSIGN_OR_RETURN(Json delegate, BuildDelegate(config, env));
  return Saved{MarshalDelegate(delegate), delegate["type"].get<std::string>()};
}

// What ADD saved for `container_id`; nullopt when there is no file or it is
// not a delegate configuration (Decode). Read errors other than ENOENT fail.
absl::StatusOr<std::optional<Saved>> ReadSaved(const Config& config, absl::string_view container_id) {
  ASSIGN_OR_RETURN(std::optional<std::string> text, ReadRegularFileIfExists(config.SavedPath(container_id)),
                   "flannel: reading the saved delegate configuration");
  if (!text) return std::nullopt;
  return Decode(*std::move(text));
}

// The saved configuration, else one rebuilt from the subnet file.
absl::StatusOr<Saved> SavedOrRebuilt(const Config& config, absl::string_view container_id) {
  ASSIGN_OR_RETURN(std::optional<Saved> saved, ReadSaved(config, container_id));
  if (saved) return *std::move(saved);
  return Rebuild(config);
}

// True when the delegate refused the configuration itself (its version, a
// key's type or value): it refuses the same bytes on every call, so an ADD
// with them made nothing (a plugin validates before its first change) and a
// kept file could only make every DEL fail for good.
bool RejectsConfiguration(const absl::Status& delegated) {
  switch (static_cast<ErrorCode>(CodeOf(delegated))) {
    case ErrorCode::kIncompatibleVersion:
    case ErrorCode::kDecodingFailure:
    case ErrorCode::kInvalidNetworkConfig:
      return true;
    default:
      return false;
  }
}

// `bytes` (a delegate configuration) with `key` set to `value`.
std::string WithKey(const std::string& bytes, absl::string_view key, const Json& value) {
  Json j = Json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  j[std::string(key)] = value;
  return MarshalDelegate(j);
}

}  // namespace

absl::StatusOr<Json> BuildDelegate(const Config& config, const SubnetEnv& env) {
  RETURN_IF_ERROR(config.setup_error);
  Json d = config.delegate;
  if (config.runtime_config) d["runtimeConfig"] = *config.runtime_config;
  d["name"] = config.name;
  if (!d.contains("type")) d["type"] = "bridge";
  if (!d.contains("ipMasq")) d["ipMasq"] = !env.ipmasq.value_or(false);  // flanneld does not masquerade: we do
  if (!d.contains("mtu")) d["mtu"] = env.mtu.value_or(0);
  if (d["type"] == "bridge" && !d.contains("isGateway")) d["isGateway"] = true;
  if (!config.cni_version.empty()) d["cniVersion"] = config.cni_version;

  Json ipam = config.ipam.value_or(Json::object());
  if (!ipam.contains("type")) ipam["type"] = "host-local";
  Json ranges = Json::array();
  if (env.subnet) ranges.push_back(Json::array({{{"subnet", env.subnet->ToString()}}}));
  if (env.ip6_subnet) ranges.push_back(Json::array({{{"subnet", env.ip6_subnet->ToString()}}}));
  ipam["ranges"] = std::move(ranges);
  Json routes = Json::array();
  if (auto r = ipam.find("routes"); r != ipam.end() && !r->is_null()) {
    ASSIGN_OR_RETURN(routes, NormalizedRoutes(*r));
  }
  for (const net::IpPrefix& nw : env.networks) routes.push_back({{"dst", nw.ToString()}});
  for (const net::IpPrefix& nw : env.ip6_networks) routes.push_back({{"dst", nw.ToString()}});
  ipam["routes"] = std::move(routes);
  d["ipam"] = std::move(ipam);
  return d;
}

std::string MarshalDelegate(const Json& delegate) {
  Json j = delegate;
  GoNumbers(j);
  return runtime::GoMarshal(j);
}

namespace {

absl::StatusOr<Result> Add(const CmdArgs& args, const Config& config) {
  RETURN_IF_ERROR(config.setup_error);
  ASSIGN_OR_RETURN(SubnetEnv env, LoadSubnetEnv(config.subnet_file));
  ASSIGN_OR_RETURN(Json delegate, BuildDelegate(config, env));
  const std::string bytes = MarshalDelegate(delegate);
  const std::string type = delegate["type"].get<std::string>();
  // An unknown type is refused before anything is written.
  RETURN_IF_ERROR(FindPlugin(type, args.plugin_dirs).status(), "flannel: delegate");

  // Saved before delegating, as upstream does: whatever happens to this
  // process after the delegate's ADD, DEL finds the configuration to undo it.
  const std::string path = config.SavedPath(args.container_id);
  RETURN_IF_ERROR(MkdirAll(config.data_dir, 0700), "flannel: creating dataDir");
  RETURN_IF_ERROR(WriteFileAtomic(path, bytes, {.mode = 0600}), "flannel: saving the delegate configuration");

  absl::StatusOr<Result> result = DelegateAdd(type, args, bytes);
  if (!result.ok()) {
    // The delegate may have done part of its work (or all of it, when its
    // result did not parse): undo it, then forget the configuration. Should
    // the undo fail, the file stays for the runtime's DEL, unless the
    // delegate refuses these bytes whatever the command.
    absl::Status undone = DelegateDel(type, args, bytes);
    if (undone.ok() || RejectsConfiguration(undone)) (void)RemoveFileAndTemp(path);
    return result.status();
  }
  return result;
}

absl::Status Del(const CmdArgs& args, const Config& config) {
  const std::string path = config.SavedPath(args.container_id);
  ASSIGN_OR_RETURN(std::optional<Saved> saved, ReadSaved(config, args.container_id));
  if (!saved) {
    // No file (or one that is not a delegate configuration): rebuild it from
    // the subnet file. Without a usable subnet file there is nothing to
    // delegate with: success, as upstream (its DEL never rebuilds).
    absl::StatusOr<Saved> rebuilt = Rebuild(config);
    if (!rebuilt.ok()) return RemoveFileAndTemp(path);
    saved = *std::move(rebuilt);
  }
  // On failure the file stays, so that a retried DEL has it (upstream removes
  // it whatever the delegate answered); but a delegate that refuses the
  // configuration itself would refuse every retry, and made nothing with it.
  absl::Status delegated = DelegateDel(saved->type, args, saved->bytes);
  if (!delegated.ok() && !RejectsConfiguration(delegated)) return delegated;
  return RemoveFileAndTemp(path);
}

absl::Status Check(const CmdArgs& args, const Config& config) {
  RETURN_IF_ERROR(config.setup_error);
  ASSIGN_OR_RETURN(Saved saved, SavedOrRebuilt(config, args.container_id));
  // The node's subnet may have changed since ADD (flanneld got another lease):
  // the container's addresses are then unreachable from other nodes.
  ASSIGN_OR_RETURN(Saved now, Rebuild(config));
  Json saved_ipam = Json::parse(saved.bytes, nullptr, false).value("ipam", Json::object());
  Json now_ipam = Json::parse(now.bytes, nullptr, false).value("ipam", Json::object());
  if (saved_ipam.value("ranges", Json()) != now_ipam.value("ranges", Json())) {
    return Error(ErrorCode::kInvalidNetworkConfig,
                 absl::StrCat("flannel: the node's subnet changed since ADD: the container has ",
                              saved_ipam.value("ranges", Json()).dump(), ", the subnet file says ",
                              now_ipam.value("ranges", Json()).dump()));
  }
  std::string bytes = saved.bytes;
  if (!args.conf.prev_result.is_null()) bytes = WithKey(bytes, "prevResult", args.conf.prev_result);
  if (!config.cni_version.empty()) bytes = WithKey(bytes, "cniVersion", config.cni_version);
  return DelegateCheck(saved.type, args, bytes);
}

absl::Status Gc(const CmdArgs& args, const Config& config) {
  RETURN_IF_ERROR(config.setup_error);
  std::set<std::string> valid;
  for (const Attachment& a : args.conf.valid_attachments) valid.insert(a.container_id);
  std::vector<absl::Status> failures;
  std::error_code ec;
  // Saved configurations of this network's attachments that are not valid
  // (the directory may be shared by several flannel networks).
  for (const auto& entry : std::filesystem::directory_iterator(config.data_dir, ec)) {
    std::string id = entry.path().filename().string();
    if (!entry.is_regular_file() || !IsValidContainerId(id) || valid.count(id) != 0) continue;
    absl::StatusOr<std::optional<Saved>> saved = ReadSaved(config, id);
    if (!saved.ok() || !*saved) continue;
    Json doc = Json::parse((*saved)->bytes, nullptr, false);
    if (doc.value("name", std::string()) != config.name) continue;
    failures.push_back(RemoveFileAndTemp(config.SavedPath(id)));
  }
  // Then the delegate collects its own state (bridge: host-local's
  // reservations), given the valid list.
  absl::StatusOr<Saved> rebuilt = Rebuild(config);
  if (rebuilt.ok()) {
    Json valid_json = Json::array();
    if (const Json* v = FindKey(args.conf.raw, "cni.dev/valid-attachments"); v != nullptr) valid_json = *v;
    std::string bytes = WithKey(rebuilt->bytes, "cni.dev/valid-attachments", valid_json);
    failures.push_back(DelegateGc(rebuilt->type, args, bytes));
  } else if (CodeOf(rebuilt.status()) != static_cast<int>(ErrorCode::kTryAgainLater)) {
    failures.push_back(rebuilt.status());
  }
  return JoinErrors(failures);
}

absl::Status Status(const CmdArgs& args, const Config& config) {
  RETURN_IF_ERROR(config.setup_error);
  absl::StatusOr<Saved> rebuilt = Rebuild(config);
  if (!rebuilt.ok()) {
    // No (usable) subnet file: flanneld is not ready, ADD would fail.
    return Error(ErrorCode::kPluginNotAvailable, rebuilt.status().message());
  }
  return DelegateStatus(rebuilt->type, args, rebuilt->bytes);
}

}  // namespace

PluginFuncs Funcs() {
  return Typed<Config>({.add = Add, .del = Del, .check = Check, .gc = Gc, .status = Status});
}

}  // namespace cni::flannel

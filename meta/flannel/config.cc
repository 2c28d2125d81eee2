#include "config.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "cni/plugin/config_schema.h"
#include "subnet_env.h"

namespace cni::flannel {
namespace {

absl::Status Invalid(absl::string_view msg) { return InvalidConfig("flannel", msg); }

absl::StatusOr<Json> AnObject(const Json& v) {
  if (!v.is_object()) return Error(ErrorCode::kDecodingFailure, "expected an object");
  return v;
}

// What DEL cannot do without: where ADD saved the delegate configuration.
const config::Schema<Config> kTeardownKeys = {
    config::String("dataDir", &Config::data_dir, /*empty_keeps_default=*/true),
};

// What only ADD, CHECK, GC, STATUS and a DEL that rebuilds need.
const config::Schema<Config> kSetupKeys = {
    config::String("subnetFile", &Config::subnet_file, /*empty_keeps_default=*/true),
    config::Custom("delegate", &Config::delegate, AnObject),
    config::Custom("ipam", &Config::ipam, AnObject),
    config::Custom("runtimeConfig", &Config::runtime_config, AnObject),
};

// Upstream's checks of "delegate" (its keys are matched exactly there: the
// delegate is a map, not a struct).
absl::Status CheckDelegate(const Json& delegate) {
  if (auto type = delegate.find("type"); type != delegate.end() && !type->is_string()) {
    return Invalid("'delegate' dictionary, if present, must have (string) 'type' field");
  }
  if (delegate.contains("name")) {
    return Invalid("'delegate' dictionary must not have 'name' field, it'll be set by flannel");
  }
  if (delegate.contains("ipam")) {
    return Invalid("'delegate' dictionary must not have 'ipam' field, it'll be set by flannel");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Config> Config::Parse(const CmdArgs& args) {
  Config c;
  c.name = args.conf.name;
  if (const Json* v = FindKey(args.conf.raw, "cniVersion"); v != nullptr && v->is_string()) {
    c.cni_version = v->get<std::string>();
  }
  c.subnet_file = std::string(kDefaultSubnetFile);
  c.data_dir = std::string(kDefaultDataDir);
  RETURN_IF_ERROR(config::ParseKeys(args.conf.raw, kTeardownKeys, "flannel", c));
  c.setup_error = config::ParseKeys(args.conf.raw, kSetupKeys, "flannel", c);
  if (c.setup_error.ok()) c.setup_error = CheckDelegate(c.delegate);
  return c;
}

std::string Config::SavedPath(absl::string_view container_id) const {
  return absl::StrCat(data_dir, "/", container_id);
}

std::vector<std::string> Config::KeyNames() {
  std::vector<std::string> names = config::KeyNames(kTeardownKeys);
  for (std::string& name : config::KeyNames(kSetupKeys)) names.push_back(std::move(name));
  return names;
}

}  // namespace cni::flannel

#include "config.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "cni/plugin/config_schema.h"

namespace cni::hostlocal {
namespace {

using net::IpAddress;
using net::IpPrefix;

absl::Status Invalid(absl::string_view msg) { return Error(ErrorCode::kInvalidNetworkConfig, msg); }

// The network name becomes a directory under dataDir: it must be one path
// component. dataDir must not climb out with "..". Checked before any mkdir.
absl::Status ValidatePaths(const Config& c) {
  if (c.name.empty()) return Invalid("host-local: network name is empty");
  if (c.name == "." || c.name == ".." || c.name.find('/') != std::string::npos ||
      c.name.find('\0') != std::string::npos) {
    return Invalid(absl::StrCat("host-local: invalid network name \"", c.name,
                                "\": must be a single path component"));
  }
  if (c.data_dir.find('\0') != std::string::npos) return Invalid("host-local: invalid dataDir");
  for (absl::string_view part : absl::StrSplit(c.data_dir, '/')) {
    if (part == "..") {
      return Invalid(
          absl::StrCat("host-local: invalid dataDir \"", c.data_dir, "\": \"..\" is not allowed"));
    }
  }
  return absl::OkStatus();
}

// The ipam object's plain keys ("" dataDir keeps the default, as upstream).
const config::Schema<Config> kIpamKeys = {
    config::String("dataDir", &Config::data_dir, /*empty_keeps_default=*/true),
    config::String("resolvConf", &Config::resolv_conf),
};

}  // namespace

std::string Config::StoreDir() const { return absl::StrCat(data_dir, "/", name); }

absl::StatusOr<Config> Config::Parse(const CmdArgs& args) {
  ASSIGN_OR_RETURN(const Json* ipam, ipam::IpamObject(args.conf.raw));
  Config c;
  c.name = args.conf.name;
  c.cni_version = args.conf.cni_version;
  RETURN_IF_ERROR(config::ParseKeys(*ipam, kIpamKeys, "host-local", c));
  RETURN_IF_ERROR(ValidatePaths(c));
  ASSIGN_OR_RETURN(ipam::RangeKeys keys,
                   ipam::ParseRangeKeys(args.conf.raw, *ipam, args.args, c.cni_version));
  c.ranges = std::move(keys.ranges);
  c.routes = std::move(keys.routes);
  c.requested_ips = std::move(keys.requested_ips);
  return c;
}

std::vector<std::string> Config::KeyNames() {
  std::vector<std::string> names = config::KeyNames(kIpamKeys);
  for (std::string& key : ipam::RangeKeyNames()) names.push_back(std::move(key));
  return names;
}

}  // namespace cni::hostlocal

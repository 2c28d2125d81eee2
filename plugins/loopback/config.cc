#include "config.h"

#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "cni/plugin/config_schema.h"
#include "cni/plugin/plugin_keys.h"
#include "cni/protocol/skel.h"

namespace cni::loopback {

const config::Schema<Config> kKeys = DnsOnlyKeys<Config>();

absl::StatusOr<Config> Config::Parse(const CmdArgs& args) {
  Config c;
  RETURN_IF_ERROR(config::ParseKeys(args.conf.raw, kKeys, "loopback", c));
  ASSIGN_OR_RETURN(c.prev, ParsePrevResult(args.conf), "loopback: prevResult");
  return c;
}

std::vector<std::string> Config::KeyNames() { return config::KeyNames(kKeys); }

}  // namespace cni::loopback

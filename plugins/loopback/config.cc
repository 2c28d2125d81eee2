#include "config.h"

#include "cni/config_schema.h"
#include "cni/error.h"
#include "cni/skel.h"
#include "cni/status_macros.h"

namespace cni::loopback {
namespace {

const config::Schema<Config> kKeys = {
    config::Custom("dns", &Config::dns, Dns::FromConfig),
};

}  // namespace

absl::StatusOr<Config> Config::Parse(const CmdArgs& args) {
  Config c;
  RETURN_IF_ERROR(config::ParseKeys(args.conf.raw, kKeys, "loopback", c));
  ASSIGN_OR_RETURN(c.prev, ParsePrevResult(args.conf), "loopback: prevResult");
  return c;
}

std::vector<std::string> Config::KeyNames() { return config::KeyNames(kKeys); }

}  // namespace cni::loopback

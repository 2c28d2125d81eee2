#include "config.h"

#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "cni/protocol/skel.h"

namespace cni::loopback {

absl::StatusOr<Config> Config::Parse(const CmdArgs& args) {
  Config c;
  // skel has parsed "dns" already (wrong types are code 6 there).
  if (args.conf.dns) c.dns = *args.conf.dns;
  ASSIGN_OR_RETURN(c.prev, ParsePrevResult(args.conf), "loopback: prevResult");
  return c;
}

}  // namespace cni::loopback

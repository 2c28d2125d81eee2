#include "config.h"

#include "cni/error.h"
#include "cni/skel.h"

namespace cni::loopback {

absl::StatusOr<Config> ParseConfig(const NetConf& conf) {
  Config c;
  // skel has parsed "dns" already (wrong types are code 6 there).
  if (conf.dns) c.dns = *conf.dns;
  absl::StatusOr<std::optional<Result>> prev = ParsePrevResult(conf);
  if (!prev.ok()) return Annotate(prev.status(), "loopback: prevResult");
  c.prev = *std::move(prev);
  return c;
}

}  // namespace cni::loopback

#include "macvlan.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "cni/base/status_macros.h"
#include "cni/net/macvlan.h"
#include "cni/plugin/sublink.h"
#include "config.h"

namespace cni::macvlan {

// The temporary name's prefix: the link is made as "mv" + 8 hex digits.
constexpr const char* kTempPrefix = "mv";

absl::StatusOr<Result> Add(const CmdArgs& args, const Config& config) {
  sublink::AddSpec spec{
      .plugin = "macvlan",
      .name_prefix = kTempPrefix,
      .master = {.name = config.master, .in_container = config.link_in_container},
      .mtu = config.mtu,
      .ipam_type = config.ipam_type,
      .dns = config.dns,
  };
  spec.create = [&](net::NetlinkSocket& master_sock, const sublink::NewLink& link) {
    return net::CreateMacvlan(master_sock, {.name = link.name,
                                            .master_index = link.master->index,
                                            .mode = config.mode,
                                            .mtu = config.mtu,
                                            .mac = config.mac,
                                            .bc_queue_len = config.bc_queue_len,
                                            .netns = link.netns});
  };
  return sublink::Add(args, spec);
}

absl::Status Check(const CmdArgs& args, const Config& config) {
  sublink::CheckSpec spec{.plugin = "macvlan", .kind = "macvlan", .ipam_type = config.ipam_type};
  // The macvlan mode is the configured one.
  spec.check_link = [&](net::NetlinkSocket& sock, const net::LinkInfo& link) -> absl::Status {
    ASSIGN_OR_RETURN(net::MacvlanMode mode, net::MacvlanModeOf(sock, link.index));
    if (mode == config.mode) return absl::OkStatus();
    return sublink::Mismatch("macvlan", link, "mode", net::MacvlanModeName(mode),
                             net::MacvlanModeName(config.mode));
  };
  return sublink::Check(args, spec);
}

PluginFuncs Funcs() { return sublink::Funcs<Config>("macvlan", kTempPrefix, Add, Check); }

}  // namespace cni::macvlan

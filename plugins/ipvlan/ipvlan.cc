#include "ipvlan.h"

#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "cni/net/ipvlan.h"
#include "cni/plugin/sublink.h"
#include "config.h"

namespace cni::ipvlan {

// The temporary name's prefix: the link is made as "iv" + 8 hex digits.
constexpr const char* kTempPrefix = "iv";

absl::StatusOr<Result> Add(const CmdArgs& args, const Config& config) {
  ASSIGN_OR_RETURN(std::optional<Result> prev, ParsePrevResult(args.conf), "ipvlan: prevResult");
  sublink::AddSpec spec{
      .plugin = "ipvlan",
      .name_prefix = kTempPrefix,
      .master = {.name = config.master, .in_container = config.link_in_container},
      .mtu = config.mtu,
      .ipam_type = config.ipam_type,
      .dns = config.dns,
      .chained = prev ? &*prev : nullptr,
  };
  // Chained without a master: the link goes on the one interface the
  // previous plugin made (upstream's rule).
  if (spec.master.name.empty() && prev) {
    if (prev->interfaces.size() != 1 || prev->interfaces[0].name.empty()) {
      return Error(ErrorCode::kInvalidNetworkConfig,
                   "ipvlan: chained master failure: prevResult lacks a single named interface");
    }
    spec.master.name = prev->interfaces[0].name;
  }
  spec.create = [&](net::NetlinkSocket& master_sock, const sublink::NewLink& link) {
    return net::CreateIpvlan(master_sock, {.name = link.name,
                                           .master_index = link.master->index,
                                           .mode = config.mode,
                                           .mtu = config.mtu,
                                           .netns = link.netns});
  };
  return sublink::Add(args, spec);
}

absl::Status Check(const CmdArgs& args, const Config& config) {
  sublink::CheckSpec spec{.plugin = "ipvlan", .kind = "ipvlan", .ipam_type = config.ipam_type};
  // The ipvlan mode is the configured one.
  spec.check_link = [&](net::NetlinkSocket& sock, const net::LinkInfo& link) -> absl::Status {
    ASSIGN_OR_RETURN(net::IpvlanMode mode, net::IpvlanModeOf(sock, link.index));
    if (mode == config.mode) return absl::OkStatus();
    return sublink::Mismatch("ipvlan", link, "mode", net::IpvlanModeName(mode),
                             net::IpvlanModeName(config.mode));
  };
  return sublink::Check(args, spec);
}

PluginFuncs Funcs() { return sublink::Funcs<Config>("ipvlan", kTempPrefix, Add, Check); }

}  // namespace cni::ipvlan

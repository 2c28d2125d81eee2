#include "vlan.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "cni/base/status_macros.h"
#include "cni/net/vlan.h"
#include "cni/plugin/sublink.h"
#include "config.h"

namespace cni::vlan {

// The temporary name's prefix: the link is made as "vl" + 8 hex digits.
constexpr const char* kTempPrefix = "vl";

absl::StatusOr<Result> Add(const CmdArgs& args, const Config& config) {
  sublink::AddSpec spec{
      .plugin = "vlan",
      .name_prefix = kTempPrefix,
      .master = {.name = config.master, .in_container = config.link_in_container},
      .mtu = config.mtu,
      .ipam_type = config.ipam_type,
      .dns = config.dns,
  };
  spec.create = [&](net::NetlinkSocket& master_sock, const sublink::NewLink& link) {
    return net::CreateVlan(master_sock, {.name = link.name,
                                         .master_index = link.master->index,
                                         .vlan_id = config.vlan_id,
                                         .mtu = config.mtu,
                                         .netns = link.netns});
  };
  return sublink::Add(args, spec);
}

absl::Status Check(const CmdArgs& args, const Config& config) {
  sublink::CheckSpec spec{.plugin = "vlan", .kind = "vlan", .ipam_type = config.ipam_type};
  // The VLAN ID, and the MTU when the config sets one (upstream's checks).
  spec.check_link = [&](net::NetlinkSocket& sock, const net::LinkInfo& link) -> absl::Status {
    ASSIGN_OR_RETURN(int id, net::VlanIdOf(sock, link.index));
    if (id != config.vlan_id) {
      return sublink::Mismatch("vlan", link, "VLAN ID", absl::StrCat(id), absl::StrCat(config.vlan_id));
    }
    if (config.mtu != 0 && link.mtu != config.mtu) {
      return sublink::Mismatch("vlan", link, "MTU", absl::StrCat(link.mtu), absl::StrCat(config.mtu));
    }
    return absl::OkStatus();
  };
  return sublink::Check(args, spec);
}

PluginFuncs Funcs() { return sublink::Funcs<Config>("vlan", kTempPrefix, Add, Check); }

}  // namespace cni::vlan

#include "vlan.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "cni/net/vlan.h"
#include "cni/status_macros.h"
#include "cni/sublink.h"
#include "config.h"

namespace cni::vlan {

absl::StatusOr<Result> Add(const CmdArgs& args, const Config& config) {
  sublink::AddSpec spec{
      .plugin = "vlan",
      .name_prefix = "vl",
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

absl::Status Del(const CmdArgs& args, const Config& config) {
  return sublink::Del(args, config.ipam_type, "vlan");
}

absl::Status Check(const CmdArgs& args, const Config& config) {
  sublink::CheckSpec spec{.plugin = "vlan", .kind = "vlan", .ipam_type = config.ipam_type};
  // The VLAN ID, and the MTU when the config sets one (upstream's checks).
  spec.check_link = [&](net::NetlinkSocket& sock, const net::LinkInfo& link) -> absl::Status {
    ASSIGN_OR_RETURN(int id, net::VlanIdOf(sock, link.index));
    if (id != config.vlan_id) {
      return absl::FailedPreconditionError(absl::StrCat("vlan: container interface \"", link.name,
                                                        "\" has VLAN ID ", id,
                                                        ", the config wants ", config.vlan_id));
    }
    if (config.mtu != 0 && link.mtu != config.mtu) {
      return absl::FailedPreconditionError(absl::StrCat("vlan: container interface \"", link.name,
                                                        "\" has MTU ", link.mtu,
                                                        ", the config wants ", config.mtu));
    }
    return absl::OkStatus();
  };
  return sublink::Check(args, spec);
}

absl::Status Gc(const CmdArgs& args, const Config& config) {
  return sublink::Gc(args, config.ipam_type);
}

absl::Status Status(const CmdArgs& args, const Config& config) {
  return sublink::Status(args, config.ipam_type);
}

PluginFuncs Funcs() {
  return Typed<Config>({.add = Add, .del = Del, .check = Check, .gc = Gc, .status = Status});
}

}  // namespace cni::vlan

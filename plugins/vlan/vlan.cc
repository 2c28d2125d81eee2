#include "vlan.h"

#include "absl/strings/str_cat.h"
#include "cni/base/status_macros.h"
#include "cni/net/vlan.h"
#include "cni/plugin/container_link.h"
#include "cni/plugin/sublink.h"
#include "config.h"

namespace cni::vlan {
namespace {

// CHECK: the VLAN ID, and the MTU when the config sets one (upstream's checks).
absl::Status CheckLink(net::NetlinkSocket& csock, const net::LinkInfo& link, const Config& config) {
  ASSIGN_OR_RETURN(int id, net::VlanIdOf(csock, link));
  if (id != config.vlan_id) {
    return container_link::Mismatch("vlan", link, "VLAN ID", absl::StrCat(id), absl::StrCat(config.vlan_id));
  }
  if (config.mtu != 0 && link.mtu != config.mtu) {
    return container_link::Mismatch("vlan", link, "MTU", absl::StrCat(link.mtu), absl::StrCat(config.mtu));
  }
  return absl::OkStatus();
}

}  // namespace

PluginFuncs Funcs() {
  return sublink::Funcs<Config>({
      .plugin = "vlan",
      .name_prefix = "vl",  // the link is made as "vl" + 8 hex digits
      .create = [](net::NetlinkSocket& master_sock, const net::MasterLink& link, const Config& config) {
        return net::CreateVlan(master_sock, link, config.vlan_id);
      },
      .check = CheckLink,
  });
}

}  // namespace cni::vlan

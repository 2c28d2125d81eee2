#include "cni/net/vlan.h"

#include <linux/if_link.h>
#include <netlink/attr.h>

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/quoted.h"
#include "cni/base/status_macros.h"
#include "link_on_master.h"

namespace cni::net {

absl::Status CreateVlan(NetlinkSocket& sock, const MasterLink& link, int vlan_id) {
  const std::string what = absl::StrCat("creating vlan \"", link.name, "\" (id ", vlan_id, ") on link #",
                                        link.master_index);
  if (vlan_id < 0 || vlan_id > 4094) {
    return Error(ErrorCode::kInvalidNetworkConfig, absl::StrCat(what, ": VLAN ID out of range"));
  }
  const uint16_t id = static_cast<uint16_t>(vlan_id);
  return internal::CreateOnMaster(sock, "vlan", link, nullptr,
                                  [id](nl_msg* m) { return nla_put_u16(m, IFLA_VLAN_ID, id); }, what);
}

absl::StatusOr<int> VlanIdOf(NetlinkSocket& sock, const LinkInfo& link) {
  ASSIGN_OR_RETURN(uint32_t id, internal::KindAttribute(sock, link.index, "vlan", IFLA_VLAN_ID, 2, std::nullopt,
                                                        absl::StrCat("reading VLAN ID of ", Quoted(link.name))));
  return static_cast<int>(id);
}

}  // namespace cni::net

#include "cni/net/vlan.h"

#include <netlink/route/link.h>
#include <netlink/route/link/vlan.h>

#include "absl/strings/str_cat.h"
#include "cni/error.h"
#include "cni/status_macros.h"
#include "link_on_master.h"

namespace cni::net {

namespace {
std::string What(const VlanSpec& spec) {
  return absl::StrCat("creating vlan \"", spec.name, "\" (id ", spec.vlan_id, ") on link #",
                      spec.master_index);
}
}  // namespace

absl::StatusOr<NlMsgPtr> BuildVlanRequest(const VlanSpec& spec) {
  std::string what = What(spec);
  if (spec.vlan_id < 0 || spec.vlan_id > 4094) {
    return Error(ErrorCode::kInvalidNetworkConfig, absl::StrCat(what, ": VLAN ID out of range"));
  }
  RtnlLinkPtr link(rtnl_link_vlan_alloc());
  if (!link) return absl::ResourceExhaustedError(absl::StrCat(what, ": out of memory"));
  if (int rc = rtnl_link_vlan_set_id(link.get(), static_cast<uint16_t>(spec.vlan_id)); rc < 0) {
    return NlError(rc, what);
  }
  return internal::BuildLinkOnMasterRequest(
      link.get(),
      {.name = spec.name, .master_index = spec.master_index, .mtu = spec.mtu, .netns = spec.netns},
      what);
}

absl::Status CreateVlan(NetlinkSocket& sock, const VlanSpec& spec) {
  ASSIGN_OR_RETURN(NlMsgPtr msg, BuildVlanRequest(spec));
  return sock.Transact(msg.get(), What(spec));
}

absl::StatusOr<int> VlanIdOf(NetlinkSocket& sock, int index) {
  std::string what = absl::StrCat("reading VLAN ID of link #", index);
  ASSIGN_OR_RETURN(RtnlLinkPtr link, internal::GetLinkObject(sock, index, what));
  if (!rtnl_link_is_vlan(link.get())) {
    return Error(ErrorCode::kInternal, absl::StrCat(what, ": not a vlan"));
  }
  return rtnl_link_vlan_get_id(link.get());
}

}  // namespace cni::net

#include "cni/net/vlan.h"

#include <linux/if_link.h>
#include <netlink/attr.h>

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "link_names.h"
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
  const uint16_t id = static_cast<uint16_t>(spec.vlan_id);
  return internal::BuildKindRequest(
      "vlan", {.name = spec.name, .master_index = spec.master_index, .mtu = spec.mtu, .netns = spec.netns},
      [id](nl_msg* m) { return nla_put_u16(m, IFLA_VLAN_ID, id); }, what);
}

absl::Status CreateVlan(NetlinkSocket& sock, const VlanSpec& spec) {
  ASSIGN_OR_RETURN(NlMsgPtr msg, BuildVlanRequest(spec));
  return internal::TransactNamingLinks(sock, msg.get(), What(spec));
}

absl::StatusOr<int> VlanIdOf(NetlinkSocket& sock, int index) {
  std::string what = absl::StrCat("reading VLAN ID of link #", index);
  ASSIGN_OR_RETURN(internal::KindData link, internal::GetKindData(sock, index, what));
  std::optional<uint16_t> id = link.U16(IFLA_VLAN_ID);
  if (link.kind() != "vlan" || !id) return Error(ErrorCode::kInternal, absl::StrCat(what, ": not a vlan"));
  return *id;
}

}  // namespace cni::net

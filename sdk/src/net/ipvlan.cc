#include "cni/net/ipvlan.h"

#include <linux/if_link.h>
#include <netlink/attr.h>

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/quoted.h"
#include "cni/base/status_macros.h"
#include "link_on_master.h"

namespace cni::net {

absl::StatusOr<IpvlanMode> ParseIpvlanMode(absl::string_view name) {
  if (name.empty() || name == "l2") return IpvlanMode::kL2;
  if (name == "l3") return IpvlanMode::kL3;
  if (name == "l3s") return IpvlanMode::kL3s;
  return Error(ErrorCode::kInvalidNetworkConfig,
               absl::StrCat("unknown ipvlan mode: \"", name, "\" (want l2, l3 or l3s)"));
}

std::string IpvlanModeName(IpvlanMode mode) {
  switch (mode) {
    case IpvlanMode::kL2: return "l2";
    case IpvlanMode::kL3: return "l3";
    case IpvlanMode::kL3s: return "l3s";
  }
  return "unknown";
}

absl::Status CreateIpvlan(NetlinkSocket& sock, const MasterLink& link, IpvlanMode mode) {
  const uint16_t m = static_cast<uint16_t>(mode);
  return internal::CreateOnMaster(
      sock, "ipvlan", link, nullptr, [m](nl_msg* msg) { return nla_put_u16(msg, IFLA_IPVLAN_MODE, m); },
      absl::StrCat("creating ipvlan \"", link.name, "\" on link #", link.master_index));
}

absl::StatusOr<IpvlanMode> IpvlanModeOf(NetlinkSocket& sock, const LinkInfo& link) {
  ASSIGN_OR_RETURN(uint32_t mode, internal::KindAttribute(sock, link.index, "ipvlan", IFLA_IPVLAN_MODE, 2, std::nullopt,
                                                          absl::StrCat("reading ipvlan mode of ", Quoted(link.name))));
  return static_cast<IpvlanMode>(mode);
}

}  // namespace cni::net

#include "cni/net/ipvlan.h"

#include <linux/if_link.h>
#include <netlink/attr.h>

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "link_names.h"
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

namespace {
std::string What(const IpvlanSpec& spec) {
  return absl::StrCat("creating ipvlan \"", spec.name, "\" on link #", spec.master_index);
}
}  // namespace

absl::StatusOr<NlMsgPtr> BuildIpvlanRequest(const IpvlanSpec& spec) {
  const uint16_t mode = static_cast<uint16_t>(spec.mode);
  return internal::BuildKindRequest(
      "ipvlan", {.name = spec.name, .master_index = spec.master_index, .mtu = spec.mtu, .netns = spec.netns},
      [mode](nl_msg* m) { return nla_put_u16(m, IFLA_IPVLAN_MODE, mode); }, What(spec));
}

absl::Status CreateIpvlan(NetlinkSocket& sock, const IpvlanSpec& spec) {
  ASSIGN_OR_RETURN(NlMsgPtr msg, BuildIpvlanRequest(spec));
  return internal::TransactNamingLinks(sock, msg.get(), What(spec));
}

absl::StatusOr<IpvlanMode> IpvlanModeOf(NetlinkSocket& sock, int index) {
  std::string what = absl::StrCat("reading ipvlan mode of link #", index);
  ASSIGN_OR_RETURN(internal::KindData link, internal::GetKindData(sock, index, what));
  std::optional<uint16_t> mode = link.U16(IFLA_IPVLAN_MODE);
  if (link.kind() != "ipvlan" || !mode) return Error(ErrorCode::kInternal, absl::StrCat(what, ": not an ipvlan"));
  return static_cast<IpvlanMode>(*mode);
}

}  // namespace cni::net

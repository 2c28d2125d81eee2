#include "cni/net/macvlan.h"

#include <linux/if_link.h>
#include <netlink/route/link.h>
#include <netlink/route/link/macvlan.h>

#include "absl/strings/str_cat.h"
#include "cni/error.h"
#include "cni/status_macros.h"
#include "link_on_master.h"

namespace cni::net {

absl::StatusOr<MacvlanMode> ParseMacvlanMode(absl::string_view name) {
  if (name.empty() || name == "bridge") return MacvlanMode::kBridge;
  if (name == "private") return MacvlanMode::kPrivate;
  if (name == "vepa") return MacvlanMode::kVepa;
  if (name == "passthru") return MacvlanMode::kPassthru;
  return Error(ErrorCode::kInvalidNetworkConfig,
               absl::StrCat("unknown macvlan mode \"", name,
                            "\" (want bridge, private, vepa or passthru)"));
}

std::string MacvlanModeName(MacvlanMode mode) {
  switch (mode) {
    case MacvlanMode::kPrivate: return "private";
    case MacvlanMode::kVepa: return "vepa";
    case MacvlanMode::kBridge: return "bridge";
    case MacvlanMode::kPassthru: return "passthru";
  }
  return "unknown";
}

namespace {
std::string What(const MacvlanSpec& spec) {
  return absl::StrCat("creating macvlan \"", spec.name, "\" on link #", spec.master_index);
}
}  // namespace

absl::StatusOr<NlMsgPtr> BuildMacvlanRequest(const MacvlanSpec& spec) {
  std::string what = What(spec);
  RtnlLinkPtr link(rtnl_link_macvlan_alloc());
  if (!link) return absl::ResourceExhaustedError(absl::StrCat(what, ": out of memory"));
  if (int rc = rtnl_link_macvlan_set_mode(link.get(), static_cast<uint32_t>(spec.mode)); rc < 0) {
    return NlError(rc, what);
  }
  return internal::BuildLinkOnMasterRequest(
      link.get(),
      {.name = spec.name, .master_index = spec.master_index, .mtu = spec.mtu, .mac = &spec.mac,
       .netns = spec.netns},
      what);
}

absl::Status CreateMacvlan(NetlinkSocket& sock, const MacvlanSpec& spec) {
  ASSIGN_OR_RETURN(NlMsgPtr msg, BuildMacvlanRequest(spec));
  return sock.Transact(msg.get(), What(spec));
}

absl::StatusOr<MacvlanMode> MacvlanModeOf(NetlinkSocket& sock, int index) {
  std::string what = absl::StrCat("reading macvlan mode of link #", index);
  ASSIGN_OR_RETURN(RtnlLinkPtr link, internal::GetLinkObject(sock, index, what));
  if (!rtnl_link_is_macvlan(link.get())) {
    return Error(ErrorCode::kInternal, absl::StrCat(what, ": not a macvlan"));
  }
  return static_cast<MacvlanMode>(rtnl_link_macvlan_get_mode(link.get()));
}

}  // namespace cni::net

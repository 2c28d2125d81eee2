#include "cni/net/macvlan.h"

#include <linux/if_link.h>
#include <linux/netlink.h>
#include <netlink/route/link.h>
#include <netlink/route/link/macvlan.h>

#include "absl/strings/str_cat.h"
#include "cni/error.h"
#include "cni/status_macros.h"
#include "nl_convert.h"

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
  rtnl_link_set_name(link.get(), spec.name.c_str());
  rtnl_link_set_link(link.get(), spec.master_index);
  if (int rc = rtnl_link_macvlan_set_mode(link.get(), static_cast<uint32_t>(spec.mode)); rc < 0) {
    return NlError(rc, what);
  }
  if (spec.mtu > 0) rtnl_link_set_mtu(link.get(), static_cast<unsigned>(spec.mtu));
  if (spec.mac) rtnl_link_set_addr(link.get(), internal::ToNlAddr(*spec.mac).get());
  // Born in the container: it never shows up (or collides) in the host.
  if (spec.netns != nullptr) rtnl_link_set_ns_fd(link.get(), spec.netns->fd());
  nl_msg* raw = nullptr;
  int rc = rtnl_link_build_add_request(link.get(), NLM_F_CREATE | NLM_F_EXCL, &raw);
  NlMsgPtr msg(raw);
  if (rc < 0) return NlError(rc, what);
  return msg;
}

absl::Status CreateMacvlan(NetlinkSocket& sock, const MacvlanSpec& spec) {
  ASSIGN_OR_RETURN(NlMsgPtr msg, BuildMacvlanRequest(spec));
  return sock.Transact(msg.get(), What(spec));
}

absl::StatusOr<MacvlanMode> MacvlanModeOf(NetlinkSocket& sock, int index) {
  std::string what = absl::StrCat("reading macvlan mode of link #", index);
  rtnl_link* raw = nullptr;
  int rc = rtnl_link_get_kernel(sock.get(), index, nullptr, &raw);
  RtnlLinkPtr link(raw);
  if (rc < 0) return NlError(rc, what);
  if (!rtnl_link_is_macvlan(link.get())) {
    return Error(ErrorCode::kInternal, absl::StrCat(what, ": not a macvlan"));
  }
  return static_cast<MacvlanMode>(rtnl_link_macvlan_get_mode(link.get()));
}

}  // namespace cni::net

#include "cni/net/macvlan.h"

#include <linux/if_link.h>
#include <netlink/attr.h>

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "link_names.h"
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
  const uint32_t mode = static_cast<uint32_t>(spec.mode);
  const uint32_t bc_queue_len = spec.bc_queue_len;
  return internal::BuildKindRequest(
      "macvlan",
      {.name = spec.name, .master_index = spec.master_index, .mtu = spec.mtu, .mac = &spec.mac,
       .netns = spec.netns},
      [mode, bc_queue_len](nl_msg* m) {
        int rc = nla_put_u32(m, IFLA_MACVLAN_MODE, mode);
        if (rc >= 0 && bc_queue_len > 0) rc = nla_put_u32(m, IFLA_MACVLAN_BC_QUEUE_LEN, bc_queue_len);
        return rc;
      },
      What(spec));
}

absl::Status CreateMacvlan(NetlinkSocket& sock, const MacvlanSpec& spec) {
  ASSIGN_OR_RETURN(NlMsgPtr msg, BuildMacvlanRequest(spec));
  return internal::TransactNamingLinks(sock, msg.get(), What(spec));
}

absl::StatusOr<MacvlanMode> MacvlanModeOf(NetlinkSocket& sock, int index) {
  std::string what = absl::StrCat("reading macvlan mode of link #", index);
  ASSIGN_OR_RETURN(internal::KindData link, internal::GetKindData(sock, index, what));
  if (link.kind() != "macvlan") return Error(ErrorCode::kInternal, absl::StrCat(what, ": not a macvlan"));
  // A macvlan made without a mode is the kernel's default, vepa.
  return static_cast<MacvlanMode>(link.U32(IFLA_MACVLAN_MODE).value_or(MACVLAN_MODE_VEPA));
}

}  // namespace cni::net

#include "cni/net/macvlan.h"

#include <linux/if_link.h>
#include <netlink/attr.h>

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/quoted.h"
#include "cni/base/status_macros.h"
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

absl::Status CreateMacvlan(NetlinkSocket& sock, const MasterLink& link, const MacvlanOptions& options) {
  const uint32_t mode = static_cast<uint32_t>(options.mode);
  const uint32_t bc_queue_len = options.bc_queue_len;
  return internal::CreateOnMaster(
      sock, "macvlan", link, &options.mac,
      [mode, bc_queue_len](nl_msg* m) {
        int rc = nla_put_u32(m, IFLA_MACVLAN_MODE, mode);
        if (rc >= 0 && bc_queue_len > 0) rc = nla_put_u32(m, IFLA_MACVLAN_BC_QUEUE_LEN, bc_queue_len);
        return rc;
      },
      absl::StrCat("creating macvlan \"", link.name, "\" on link #", link.master_index));
}

absl::StatusOr<MacvlanMode> MacvlanModeOf(NetlinkSocket& sock, const LinkInfo& link) {
  // A macvlan made without a mode is the kernel's default, vepa.
  ASSIGN_OR_RETURN(uint32_t mode, internal::KindAttribute(sock, link.index, "macvlan", IFLA_MACVLAN_MODE, 4, MACVLAN_MODE_VEPA,
                                                          absl::StrCat("reading macvlan mode of ", Quoted(link.name))));
  return static_cast<MacvlanMode>(mode);
}

}  // namespace cni::net

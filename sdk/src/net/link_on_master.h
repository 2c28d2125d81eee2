// Internal: the part of an RTM_NEWLINK request every link on a master shares
// (macvlan, ipvlan, vlan): name, master, MTU, MAC and the namespace it is
// born in.
#pragma once

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "cni/net/ip.h"
#include "cni/net/netlink.h"
#include "cni/net/netns.h"

namespace cni::net::internal {

struct LinkOnMaster {
  const std::string& name;
  int master_index = 0;
  int mtu = 0;                          // 0: the master's
  const std::optional<MacAddress>* mac = nullptr;  // none: the kernel's choice
  const Netns* netns = nullptr;         // nullptr: next to its master
};

// Sets the shared attributes on `link` (already allocated with its kind and
// kind data) and builds the create request (NLM_F_CREATE | NLM_F_EXCL).
absl::StatusOr<NlMsgPtr> BuildLinkOnMasterRequest(rtnl_link* link, const LinkOnMaster& common,
                                                  absl::string_view what);

// Names `link` (allocated with its kind and kind data) and builds its create
// request (NLM_F_CREATE | NLM_F_EXCL), for links with no master: dummy, ifb, vrf.
absl::StatusOr<NlMsgPtr> BuildCreateRequest(rtnl_link* link, const std::string& name, absl::string_view what);

// The link `index` as libnl reads it, for the kind readers (MacvlanModeOf...).
absl::StatusOr<RtnlLinkPtr> GetLinkObject(NetlinkSocket& sock, int index, absl::string_view what);

}  // namespace cni::net::internal

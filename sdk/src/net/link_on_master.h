// Internal: the create request every kind of link the SDK makes by kind
// shares (macvlan, ipvlan, vlan on a master; vrf and dummy without one):
// name, master, MTU, MAC, the namespace it is born in, and the kind with its
// data. And the reading of that kind data back. Both written here with
// libnl's message and attribute calls, not its rtnl_link objects (see
// link.cc).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/base/ip.h"
#include "cni/net/master_link.h"
#include "cni/net/netlink.h"
#include "cni/net/netns.h"

struct nl_msg;

namespace cni::net::internal {

struct LinkOnMaster {
  const std::string& name;
  int master_index = 0;                 // IFLA_LINK; 0: a link with no master
  int mtu = 0;                          // 0: the master's
  const std::optional<MacAddress>* mac = nullptr;  // none: the kernel's choice
  const Netns* netns = nullptr;         // nullptr: next to its master
  // IFLA_TXQLEN; nullopt: not sent. 0 by default, as upstream's macvlan,
  // ipvlan and vlan links have it (its netlink library sends the zero of an
  // unset field).
  std::optional<int> txqlen = 0;
  bool up = false;                      // born up (IFF_UP)
};

// The create request (NLM_F_CREATE | NLM_F_EXCL) of a link of `kind`, with
// the shared attributes and IFLA_INFO_DATA filled by `put_data` (libnl
// nla_put* calls; a negative libnl error fails the build).
absl::StatusOr<NlMsgPtr> BuildKindRequest(absl::string_view kind, const LinkOnMaster& common,
                                          const std::function<int(nl_msg*)>& put_data, absl::string_view what);

// The kind of link `index` and its IFLA_INFO_DATA attributes, for the kind
// readers (MacvlanModeOf...).
class KindData {
 public:
  const std::string& kind() const { return kind_; }
  std::optional<uint32_t> U32(int type) const;
  std::optional<uint16_t> U16(int type) const;

 private:
  friend absl::StatusOr<KindData> GetKindData(NetlinkSocket& sock, int index, absl::string_view what);
  std::string kind_;
  std::string data_;  // the nested attributes of IFLA_INFO_DATA
};
absl::StatusOr<KindData> GetKindData(NetlinkSocket& sock, int index, absl::string_view what);

// The create request of `link` as a link of `kind` (BuildKindRequest, with
// `mac` when given), sent through `sock`; `what` names it in errors.
absl::Status CreateOnMaster(NetlinkSocket& sock, absl::string_view kind, const MasterLink& link,
                            const std::optional<MacAddress>* mac, const std::function<int(nl_msg*)>& put_data,
                            absl::string_view what);

// Attribute `type` of link `index`'s kind data, read as `bytes` (2 or 4)
// bytes, `absent` when the link lacks it. Code 999, "<what>: not a <kind>",
// when the link is of another kind, or lacks it and `absent` is nullopt.
absl::StatusOr<uint32_t> KindAttribute(NetlinkSocket& sock, int index, absl::string_view kind, int type,
                                       int bytes, std::optional<uint32_t> absent, absl::string_view what);

}  // namespace cni::net::internal

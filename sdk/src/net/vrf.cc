#include "cni/net/vrf.h"

#include <linux/if_link.h>
#include <netlink/attr.h>

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/quoted.h"
#include "cni/base/status_macros.h"
#include "link_on_master.h"

namespace cni::net {

namespace {
std::string What(absl::string_view name, uint32_t table) {
  return absl::StrCat("creating vrf ", Quoted(name), " (table ", table, ")");
}
}  // namespace

absl::StatusOr<NlMsgPtr> BuildVrfRequest(absl::string_view name, uint32_t table) {
  std::string what = What(name, table);
  if (table == 0) return Error(ErrorCode::kInvalidNetworkConfig, absl::StrCat(what, ": table 0"));
  const std::string n(name);
  return internal::BuildKindRequest(
      "vrf", {.name = n, .txqlen = std::nullopt}, [table](nl_msg* m) { return nla_put_u32(m, IFLA_VRF_TABLE, table); },
      what);
}

absl::Status CreateVrf(NetlinkSocket& sock, absl::string_view name, uint32_t table) {
  ASSIGN_OR_RETURN(NlMsgPtr msg, BuildVrfRequest(name, table));
  return sock.Transact(msg.get(), What(name, table));
}

absl::StatusOr<uint32_t> VrfTableOf(NetlinkSocket& sock, const LinkInfo& link) {
  return internal::KindAttribute(sock, link.index, "vrf", IFLA_VRF_TABLE, 4, std::nullopt,
                                 absl::StrCat("reading the table of vrf ", Quoted(link.name)));
}

}  // namespace cni::net

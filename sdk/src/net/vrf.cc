#include "cni/net/vrf.h"

#include <netlink/route/link.h>
#include <netlink/route/link/vrf.h>

#include "absl/strings/str_cat.h"
#include "cni/error.h"
#include "cni/quoted.h"
#include "cni/status_macros.h"
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
  RtnlLinkPtr link(rtnl_link_vrf_alloc());
  if (!link) return absl::ResourceExhaustedError(absl::StrCat(what, ": out of memory"));
  if (int rc = rtnl_link_vrf_set_tableid(link.get(), table); rc < 0) return NlError(rc, what);
  return internal::BuildCreateRequest(link.get(), std::string(name), what);
}

absl::Status CreateVrf(NetlinkSocket& sock, absl::string_view name, uint32_t table) {
  ASSIGN_OR_RETURN(NlMsgPtr msg, BuildVrfRequest(name, table));
  return sock.Transact(msg.get(), What(name, table));
}

absl::StatusOr<uint32_t> VrfTableOf(NetlinkSocket& sock, int index) {
  std::string what = absl::StrCat("reading the table of vrf link #", index);
  ASSIGN_OR_RETURN(RtnlLinkPtr link, internal::GetLinkObject(sock, index, what));
  uint32_t table = 0;
  if (!rtnl_link_is_vrf(link.get()) || rtnl_link_vrf_get_tableid(link.get(), &table) < 0) {
    return Error(ErrorCode::kInternal, absl::StrCat(what, ": not a vrf"));
  }
  return table;
}

}  // namespace cni::net

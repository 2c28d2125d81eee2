#include "link_on_master.h"

#include <linux/netlink.h>
#include <netlink/route/link.h>

#include "nl_convert.h"

namespace cni::net::internal {

absl::StatusOr<NlMsgPtr> BuildLinkOnMasterRequest(rtnl_link* link, const LinkOnMaster& common,
                                                  absl::string_view what) {
  rtnl_link_set_name(link, common.name.c_str());
  rtnl_link_set_link(link, common.master_index);
  if (common.mtu > 0) rtnl_link_set_mtu(link, static_cast<unsigned>(common.mtu));
  // txqueuelen 0, as upstream's macvlan, ipvlan and vlan links have it (its
  // netlink library sends the zero of an unset field). These links queue
  // nothing themselves (noqueue); the value is what `ip link` shows and the
  // limit a qdisc added later would take.
  rtnl_link_set_txqlen(link, 0);
  if (common.mac != nullptr && common.mac->has_value()) {
    rtnl_link_set_addr(link, ToNlAddr(**common.mac).get());
  }
  // Born in the container: it never shows up (or collides) in the host.
  if (common.netns != nullptr) rtnl_link_set_ns_fd(link, common.netns->fd());
  nl_msg* raw = nullptr;
  int rc = rtnl_link_build_add_request(link, NLM_F_CREATE | NLM_F_EXCL, &raw);
  NlMsgPtr msg(raw);
  if (rc < 0) return NlError(rc, what);
  return msg;
}

absl::StatusOr<NlMsgPtr> BuildCreateRequest(rtnl_link* link, const std::string& name, absl::string_view what) {
  rtnl_link_set_name(link, name.c_str());
  nl_msg* raw = nullptr;
  int rc = rtnl_link_build_add_request(link, NLM_F_CREATE | NLM_F_EXCL, &raw);
  NlMsgPtr msg(raw);
  if (rc < 0) return NlError(rc, what);
  return msg;
}

absl::StatusOr<RtnlLinkPtr> GetLinkObject(NetlinkSocket& sock, int index, absl::string_view what) {
  rtnl_link* raw = nullptr;
  int rc = rtnl_link_get_kernel(sock.get(), index, nullptr, &raw);
  RtnlLinkPtr link(raw);
  if (rc < 0) return NlError(rc, what);
  return link;
}

}  // namespace cni::net::internal

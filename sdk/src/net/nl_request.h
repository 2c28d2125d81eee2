// Internal: a netlink request with its family header (ifinfomsg, tcmsg,
// ifaddrmsg, ...), attributes to follow, written with libnl's message calls.
#pragma once

#include <linux/rtnetlink.h>
#include <netlink/msg.h>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "cni/net/netlink.h"

namespace cni::net::internal {

// The error of a message that could not be allocated or grown.
inline absl::Status NoMemory(absl::string_view what) {
  return absl::ResourceExhaustedError(absl::StrCat(what, ": out of memory"));
}

template <typename Header>
absl::StatusOr<NlMsgPtr> RequestWith(int type, int flags, const Header& header, absl::string_view what) {
  NlMsgPtr msg(nlmsg_alloc_simple(type, flags));
  if (!msg) return NoMemory(what);
  if (int rc = nlmsg_append(msg.get(), const_cast<Header*>(&header), sizeof(header), NLMSG_ALIGNTO); rc < 0) {
    return NlError(rc, what);
  }
  return msg;
}

// A link request (RTM_*LINK) with its ifinfomsg header: `family`, link
// `index` (0: none), the IFF_* bits `ifi_change` set to their value in
// `ifi_flags`. Attributes follow.
inline absl::StatusOr<NlMsgPtr> LinkRequest(int type, int flags, int index, absl::string_view what,
                                            unsigned char family = 0, unsigned ifi_flags = 0,
                                            unsigned ifi_change = 0) {
  ifinfomsg ifi{};
  ifi.ifi_family = family;
  ifi.ifi_index = index;
  ifi.ifi_flags = ifi_flags;
  ifi.ifi_change = ifi_change;
  return RequestWith(type, flags, ifi, what);
}

}  // namespace cni::net::internal

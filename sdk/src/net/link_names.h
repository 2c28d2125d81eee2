// Internal: failures that name links by name. Requests carry ifindexes; a
// message saying "dev #3" leaves the reader to find link 3 in a namespace
// that may be gone by then. On failure only (one more request, never on
// the success path), the links are looked up on the same socket.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "cni/net/netlink.h"

namespace cni::net::internal {

// The name of link `ifindex` in the socket's namespace, or nullopt when it
// cannot be looked up (gone, or the socket is not usable).
std::optional<std::string> LinkName(NetlinkSocket& sock, int ifindex);

// `failed` (from a request described as `what`, which begins its message)
// with `what` replaced by `named()`: the same failure, code and errno, its
// links by name. Any other status is returned as it is.
absl::Status NameLinks(const absl::Status& failed, absl::string_view what,
                       const std::function<std::string()>& named);

// sock.Transact(msg, what), where `what` names links as "link #<ifindex>":
// on failure each of them is named by name instead ("link #5" becomes
// "\"eth0\""), those that can no longer be looked up keeping their number.
absl::Status TransactNamingLinks(NetlinkSocket& sock, nl_msg* msg, const std::string& what);

}  // namespace cni::net::internal

// libnl's caches and addresses: their deleters and NetlinkSocket::Dump, in a
// file of their own so that only programs that fill a libnl cache (portmap's
// conntrack cleanup) link libnl's object code (see netlink.cc).
#include <netlink/addr.h>
#include <netlink/cache.h>
#include <netlink/errno.h>

#include "cni/base/status_macros.h"
#include "cni/net/netlink.h"

namespace cni::net {

void NlDeleter::operator()(nl_cache* p) const { nl_cache_free(p); }
void NlDeleter::operator()(nl_addr* p) const { nl_addr_put(p); }

absl::StatusOr<NlCachePtr> NetlinkSocket::Dump(
    const std::function<int(nl_sock*, nl_cache**)>& alloc, absl::string_view what) {
  // libnl reads the answers itself: nothing of an earlier request may be
  // left on the socket.
  if (dirty_) RETURN_IF_ERROR(Reconnect(), what);
  int rc = 0;
  // A dump racing with a change is flagged NLM_F_DUMP_INTR; libnl reports it
  // as NLE_DUMP_INTR and the answer is simply to ask again.
  for (int attempt = 0; attempt < 5; ++attempt) {
    nl_cache* raw = nullptr;
    rc = alloc(sock_.get(), &raw);
    NlCachePtr cache(raw);
    if (rc >= 0) return cache;
    if (rc != -NLE_DUMP_INTR) break;
  }
  dirty_ = true;  // libnl may have stopped reading midway
  return NlError(rc, what);
}

}  // namespace cni::net

// UDP conntrack flushing. A UDP "connection" to a host port made before the
// mapping existed would keep bypassing the new DNAT rule, so ADD and DEL drop
// the entries for mapped UDP host ports (upstream does the same via netlink).
//
// Through libnl-nf (ctnetlink), linked statically like the rest of libnl: one
// dump of the table, then one delete per matching entry.
#include <netinet/in.h>
#include <netlink/netfilter/ct.h>
#include <netlink/netfilter/nfnl.h>
#include <sys/socket.h>

#include <memory>

#include "absl/strings/str_cat.h"
#include "cni/error.h"
#include "cni/net/netlink.h"
#include "portmap.h"

namespace cni::portmap {
namespace {

// libnl reports "no such entry" as its own code, not -ENOENT.
bool Gone(int err) { return err == -NLE_OBJ_NOTFOUND || err == -NLE_NOADDR; }

bool Matches(nfnl_ct* ct, int family, const std::vector<int>& ports) {
  if (nfnl_ct_get_family(ct) != family || nfnl_ct_get_proto(ct) != IPPROTO_UDP) return false;
  if (!nfnl_ct_test_dst_port(ct, /*repl=*/0)) return false;
  // libnl keeps ports in host byte order.
  int port = nfnl_ct_get_dst_port(ct, /*repl=*/0);
  for (int p : ports) {
    if (p == port) return true;
  }
  return false;
}

}  // namespace

absl::Status FlushUdpConntrack(bool ipv6, const std::vector<int>& ports) {
  if (ports.empty()) return absl::OkStatus();
  net::NlSockPtr sock(nl_socket_alloc());
  if (!sock) return Error(ErrorCode::kInternal, "conntrack: cannot allocate a netlink socket");
  if (int err = nfnl_connect(sock.get()); err < 0) {
    return Error(ErrorCode::kInternal, absl::StrCat("conntrack: connecting to ctnetlink: ", nl_geterror(err)));
  }
  nl_cache* raw = nullptr;
  if (int err = nfnl_ct_alloc_cache(sock.get(), &raw); err < 0) {
    return Error(ErrorCode::kInternal, absl::StrCat("conntrack: dumping the table: ", nl_geterror(err)));
  }
  net::NlCachePtr cache(raw);
  int family = ipv6 ? AF_INET6 : AF_INET;
  for (nl_object* obj = nl_cache_get_first(cache.get()); obj != nullptr; obj = nl_cache_get_next(obj)) {
    auto* ct = reinterpret_cast<nfnl_ct*>(obj);
    if (!Matches(ct, family, ports)) continue;
    // Gone already (expired, or deleted by someone else): fine.
    if (int err = nfnl_ct_del(sock.get(), ct, 0); err < 0 && !Gone(err)) {
      return Error(ErrorCode::kInternal, absl::StrCat("conntrack: deleting an entry: ", nl_geterror(err)));
    }
  }
  return absl::OkStatus();
}

}  // namespace cni::portmap

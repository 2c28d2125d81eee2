// UDP conntrack flushing. A UDP "connection" to a host port made before the
// mapping existed would keep bypassing the new DNAT rule, so ADD and DEL drop
// the entries for mapped UDP host ports (upstream does the same via netlink).
//
// Through libnl-nf (ctnetlink), linked statically like the rest of libnl, on
// the call's netfilter socket: one dump of the table, then one delete per
// matching entry.
#include <netinet/in.h>
#include <netlink/netfilter/ct.h>
#include <netlink/netfilter/nfnl.h>
#include <sys/socket.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "cni/net/netlink.h"
#include "portmap.h"

namespace cni::portmap {
namespace {

// libnl reports "no such entry" as its own code, not -ENOENT.
bool Gone(int err) { return err == -NLE_OBJ_NOTFOUND || err == -NLE_NOADDR; }

bool Matches(nfnl_ct* ct, const std::vector<int>& families, const std::vector<int>& ports) {
  if (std::find(families.begin(), families.end(), nfnl_ct_get_family(ct)) == families.end()) return false;
  if (nfnl_ct_get_proto(ct) != IPPROTO_UDP || !nfnl_ct_test_dst_port(ct, /*repl=*/0)) return false;
  // libnl keeps ports in host byte order.
  return std::find(ports.begin(), ports.end(), nfnl_ct_get_dst_port(ct, /*repl=*/0)) != ports.end();
}

}  // namespace

absl::Status FlushUdpConntrack(LazyNetfilter& nf, const std::vector<int>& families, const std::vector<int>& ports) {
  if (ports.empty() || families.empty()) return absl::OkStatus();
  ASSIGN_OR_RETURN(net::NetlinkSocket * nl, nf.Get(), "conntrack");
  ASSIGN_OR_RETURN(net::NlCachePtr cache, nl->Dump(nfnl_ct_alloc_cache, "conntrack: dumping the table"));
  for (nl_object* obj = nl_cache_get_first(cache.get()); obj != nullptr; obj = nl_cache_get_next(obj)) {
    auto* ct = reinterpret_cast<nfnl_ct*>(obj);
    if (!Matches(ct, families, ports)) continue;
    // Gone already (expired, or deleted by someone else): fine.
    if (int err = nfnl_ct_del(nl->get(), ct, 0); err < 0 && !Gone(err)) {
      return Error(ErrorCode::kInternal, absl::StrCat("conntrack: deleting an entry: ", nl_geterror(err)));
    }
  }
  return absl::OkStatus();
}

}  // namespace cni::portmap

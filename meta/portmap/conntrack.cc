// UDP conntrack flushing. A UDP "connection" to a host port made before the
// mapping existed would keep bypassing the new DNAT rule, so ADD and DEL drop
// the entries for mapped UDP host ports (upstream does the same via netlink).
#include <arpa/inet.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>
#include <netinet/in.h>

#include <memory>

#include "absl/strings/str_cat.h"
#include "cni/error.h"
#include "portmap.h"

namespace cni::portmap {
namespace {

struct HandleCloser {
  void operator()(nfct_handle* h) const { nfct_close(h); }
};
struct CtFree {
  void operator()(nf_conntrack* ct) const { nfct_destroy(ct); }
};

struct DumpState {
  const std::vector<int>* ports;
  std::vector<std::unique_ptr<nf_conntrack, CtFree>> doomed;
};

int Collect(enum nf_conntrack_msg_type, struct nf_conntrack* ct, void* data) {
  auto* st = static_cast<DumpState*>(data);
  if (nfct_get_attr_u8(ct, ATTR_ORIG_L4PROTO) != IPPROTO_UDP) return NFCT_CB_CONTINUE;
  int port = ntohs(nfct_get_attr_u16(ct, ATTR_ORIG_PORT_DST));
  for (int p : *st->ports) {
    if (p == port) {
      st->doomed.emplace_back(nfct_clone(ct));
      break;
    }
  }
  return NFCT_CB_CONTINUE;
}

}  // namespace

absl::Status FlushUdpConntrack(bool ipv6, const std::vector<int>& ports) {
  if (ports.empty()) return absl::OkStatus();
  // The handle is used for the dump and then for the deletes: a callback may
  // not issue queries on the handle it runs on.
  std::unique_ptr<nfct_handle, HandleCloser> h(nfct_open(CONNTRACK, 0));
  if (!h) return Error(ErrorCode::kInternal, "opening ctnetlink failed");
  DumpState st{&ports, {}};
  nfct_callback_register(h.get(), NFCT_T_ALL, Collect, &st);
  uint32_t family = ipv6 ? AF_INET6 : AF_INET;
  if (nfct_query(h.get(), NFCT_Q_DUMP, &family) != 0) {
    return Error(ErrorCode::kInternal, absl::StrCat("dumping conntrack entries: ", strerror(errno)));
  }
  nfct_callback_unregister(h.get());
  for (auto& ct : st.doomed) {
    // Gone already (expired, or deleted by someone else): fine.
    if (nfct_query(h.get(), NFCT_Q_DESTROY, ct.get()) != 0 && errno != ENOENT) {
      return Error(ErrorCode::kInternal, absl::StrCat("deleting a conntrack entry: ", strerror(errno)));
    }
  }
  return absl::OkStatus();
}

}  // namespace cni::portmap

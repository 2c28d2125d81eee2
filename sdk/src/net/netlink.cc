#include "cni/net/netlink.h"

#include <linux/netlink.h>
#include <netlink/cache.h>
#include <netlink/errno.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/action.h>
#include <netlink/route/classifier.h>
#include <netlink/route/nexthop.h>
#include <netlink/route/qdisc.h>
#include <netlink/route/route.h>
#include <netlink/socket.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"
#include "cni/error.h"

namespace cni::net {

void NlDeleter::operator()(nl_sock* p) const { nl_socket_free(p); }
void NlDeleter::operator()(nl_msg* p) const { nlmsg_free(p); }
void NlDeleter::operator()(nl_cache* p) const { nl_cache_free(p); }
void NlDeleter::operator()(nl_addr* p) const { nl_addr_put(p); }
void NlDeleter::operator()(rtnl_link* p) const { rtnl_link_put(p); }
void NlDeleter::operator()(rtnl_addr* p) const { rtnl_addr_put(p); }
void NlDeleter::operator()(rtnl_route* p) const { rtnl_route_put(p); }
void NlDeleter::operator()(rtnl_nexthop* p) const { rtnl_route_nh_free(p); }
void NlDeleter::operator()(rtnl_qdisc* p) const { rtnl_qdisc_put(p); }
void NlDeleter::operator()(rtnl_cls* p) const { rtnl_cls_put(p); }
void NlDeleter::operator()(rtnl_act* p) const { rtnl_act_put(p); }

namespace {

struct CbDeleter {
  void operator()(nl_cb* p) const { nl_cb_put(p); }
};
using NlCbPtr = std::unique_ptr<nl_cb, CbDeleter>;

// libnl folds kernel errnos into its own NLE_* codes (nl_syserr2nlerr); undo
// that where the mapping is one-to-one so messages read like the kernel's.
std::optional<int> ErrnoOf(int nlerr) {
  switch (nlerr < 0 ? -nlerr : nlerr) {
    case NLE_EXIST: return EEXIST;
    case NLE_NOADDR: return EADDRNOTAVAIL;
    case NLE_OBJ_NOTFOUND: return ENOENT;
    case NLE_INTR: return EINTR;
    case NLE_AGAIN: return EAGAIN;
    case NLE_NOACCESS: return EACCES;
    case NLE_INVAL: return EINVAL;
    case NLE_NOMEM: return ENOMEM;
    case NLE_AF_NOSUPPORT: return EAFNOSUPPORT;
    case NLE_OPNOTSUPP: return EOPNOTSUPP;
    case NLE_PERM: return EPERM;
    case NLE_BUSY: return EBUSY;
    case NLE_RANGE: return ERANGE;
    case NLE_NODEV: return ENODEV;
    default: return std::nullopt;
  }
}

// What the error callback saw in the kernel's NLMSG_ERROR.
struct AckState {
  int err = 0;          // positive errno, 0 for an ack
  std::string extack;   // NLMSGERR_ATTR_MSG, if the kernel sent one
};


int OnError(sockaddr_nl*, nlmsgerr* e, void* arg) {
  auto* state = static_cast<AckState*>(arg);
  state->err = -e->error;
  state->extack = ExtackMessage(e);
  return NL_STOP;
}

int OnAck(nl_msg*, void*) { return NL_STOP; }

}  // namespace

std::string ExtackMessage(const nlmsgerr* e) {
  const auto* hdr = reinterpret_cast<const nlmsghdr*>(
      reinterpret_cast<const char*>(e) - NLMSG_HDRLEN);
  if (!(hdr->nlmsg_flags & NLM_F_ACK_TLVS)) return {};
  size_t offset = sizeof(nlmsgerr);
  if (!(hdr->nlmsg_flags & NLM_F_CAPPED)) offset += e->msg.nlmsg_len - NLMSG_HDRLEN;
  const char* begin = reinterpret_cast<const char*>(e) + NLMSG_ALIGN(offset);
  const char* end = reinterpret_cast<const char*>(hdr) + hdr->nlmsg_len;
  while (begin + sizeof(nlattr) <= end) {
    const auto* attr = reinterpret_cast<const nlattr*>(begin);
    if (attr->nla_len < sizeof(nlattr) || begin + attr->nla_len > end) break;
    if ((attr->nla_type & NLA_TYPE_MASK) == NLMSGERR_ATTR_MSG) {
      const char* text = begin + NLA_HDRLEN;
      return std::string(text, strnlen(text, attr->nla_len - NLA_HDRLEN));
    }
    begin += NLA_ALIGN(attr->nla_len);
  }
  return {};
}

absl::Status KernelError(int err, absl::string_view what, absl::string_view detail) {
  std::string msg = absl::StrCat(what, ": ", std::strerror(err));
  if (!detail.empty()) absl::StrAppend(&msg, " (", detail, ")");
  switch (err) {
    case EEXIST:
      return absl::AlreadyExistsError(msg);
    case ENOENT:
    case ENODEV:
    case ESRCH:
    case EADDRNOTAVAIL:
      return absl::NotFoundError(msg);
    case EAGAIN:
      return WithCode(absl::UnavailableError(msg), ErrorCode::kTryAgainLater);
    default:
      return absl::InternalError(msg);
  }
}

absl::Status NlError(int nlerr, absl::string_view what) {
  if (std::optional<int> err = ErrnoOf(nlerr)) return KernelError(*err, what);
  return absl::InternalError(absl::StrCat(what, ": ", nl_geterror(nlerr)));
}

absl::StatusOr<NlSockPtr> NetlinkSocket::Connect() {
  NlSockPtr sock(nl_socket_alloc());
  if (!sock) return absl::ResourceExhaustedError("allocating netlink socket: out of memory");
  if (int rc = nl_connect(sock.get(), NETLINK_ROUTE); rc < 0) {
    return NlError(rc, "connecting netlink socket");
  }
  // Ask for the kernel's explanation of failures, and not to echo our request
  // back in error replies (keeps replies small). Both are best effort: kernels
  // before 4.12 lack extended acks and errors are still reported without them.
  int one = 1;
  int fd = nl_socket_get_fd(sock.get());
  setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
  setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
  return sock;
}

absl::StatusOr<NetlinkSocket> NetlinkSocket::Open() {
  absl::StatusOr<Netns> ns = Netns::Current();
  if (!ns.ok()) return ns.status();
  absl::StatusOr<NlSockPtr> sock = Connect();
  if (!sock.ok()) return sock.status();
  return NetlinkSocket(std::move(*sock), std::move(*ns));
}

absl::StatusOr<NetlinkSocket> NetlinkSocket::OpenIn(const Netns& ns) {
  // A socket belongs to the namespace of the thread that created it; enter
  // only long enough to create it.
  absl::StatusOr<NlSockPtr> sock = ns.RunFor<NlSockPtr>([] { return Connect(); });
  if (!sock.ok()) return Annotate(sock.status(), absl::StrCat("in netns \"", ns.path(), "\""));
  absl::StatusOr<Netns> dup = ns.Dup();
  if (!dup.ok()) return dup.status();
  return NetlinkSocket(std::move(*sock), std::move(*dup));
}

absl::Status NetlinkSocket::Transact(nl_msg* msg, absl::string_view what) {
  if (int rc = nl_send_auto(sock_.get(), msg); rc < 0) return NlError(rc, what);
  nl_cb* base = nl_socket_get_cb(sock_.get());  // takes a reference
  NlCbPtr cb(nl_cb_clone(base));
  nl_cb_put(base);
  if (!cb) return absl::ResourceExhaustedError(absl::StrCat(what, ": out of memory"));
  AckState state;
  nl_cb_err(cb.get(), NL_CB_CUSTOM, OnError, &state);
  nl_cb_set(cb.get(), NL_CB_ACK, NL_CB_CUSTOM, OnAck, nullptr);
  int rc = nl_recvmsgs(sock_.get(), cb.get());
  if (state.err != 0) return KernelError(state.err, what, state.extack);
  if (rc < 0) return NlError(rc, what);
  return absl::OkStatus();
}

absl::StatusOr<NlCachePtr> NetlinkSocket::Dump(
    const std::function<int(nl_sock*, nl_cache**)>& alloc, absl::string_view what) {
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
  return NlError(rc, what);
}

}  // namespace cni::net

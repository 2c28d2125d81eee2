#include "cni/net/netlink.h"

#include <linux/netlink.h>
#include <netlink/errno.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"

namespace cni::net {

void NlDeleter::operator()(nl_sock* p) const { nl_socket_free(p); }
void NlDeleter::operator()(nl_msg* p) const { nlmsg_free(p); }
// The deleters of libnl's object model (caches, addresses, rtnl_* objects)
// and Dump live in nl_objects.cc and rtnl_objects.cc: a static archive's
// member is linked whole, so a program that drives only messages never links
// libnl-route's object code, nor runs its start-up registrations.

namespace {

// libnl folds kernel errnos into its own NLE_* codes (nl_syserr2nlerr); undo
// that where the mapping is one-to-one so messages read like the kernel's.
std::optional<int> ErrnoOfNl(int nlerr) {
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
      return WithErrno(absl::AlreadyExistsError(msg), err);
    case ENOENT:
    case ENODEV:
    case ESRCH:
    case EADDRNOTAVAIL:
      return WithErrno(absl::NotFoundError(msg), err);
    case EAGAIN:
      return WithErrno(WithCode(absl::UnavailableError(msg), ErrorCode::kTryAgainLater), err);
    default:
      return WithErrno(absl::InternalError(msg), err);
  }
}

absl::Status NlError(int nlerr, absl::string_view what) {
  if (std::optional<int> err = ErrnoOfNl(nlerr)) return KernelError(*err, what);
  return absl::InternalError(absl::StrCat(what, ": ", nl_geterror(nlerr)));
}

absl::StatusOr<NlSockPtr> NetlinkSocket::Connect(NetlinkProtocol protocol) {
  NlSockPtr sock(nl_socket_alloc());
  if (!sock) return absl::ResourceExhaustedError("allocating netlink socket: out of memory");
  if (int rc = nl_connect(sock.get(), static_cast<int>(protocol)); rc < 0) {
    return NlError(rc, "connecting netlink socket");
  }
  // Our receive loop matches answers to requests by sequence number itself;
  // libnl's own check (used by its cache fills) would expect the numbers it
  // handed out to come back in order, which requests sent through Exchange
  // break.
  nl_socket_disable_seq_check(sock.get());
  // Ask for the kernel's explanation of failures, and not to echo our request
  // back in error replies (keeps replies small). Both are best effort: kernels
  // before 4.12 lack extended acks and errors are still reported without them.
  int one = 1;
  int fd = nl_socket_get_fd(sock.get());
  setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
  setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
  return sock;
}

absl::StatusOr<NetlinkSocket> NetlinkSocket::Open(NetlinkProtocol protocol) {
  ASSIGN_OR_RETURN(NlSockPtr sock, Connect(protocol));
  // The namespace is remembered when it can be: asked of the socket itself
  // (no /proc lookup: netns.cc, Current, says why that matters on a thread),
  // else of /proc. A plugin in a minimal chroot can still talk netlink in its
  // own namespace.
  absl::StatusOr<Netns> ns =
      Netns::OfSocket(nl_socket_get_fd(sock.get()), "/proc/thread-self/ns/net");
  if (!ns.ok()) ns = Netns::Current();
  return NetlinkSocket(std::move(sock), ns.ok() ? std::optional<Netns>(*std::move(ns)) : std::nullopt, protocol);
}

absl::StatusOr<NetlinkSocket> NetlinkSocket::OpenIn(const Netns& ns, NetlinkProtocol protocol) {
  // A socket belongs to the namespace of the thread that created it; enter
  // only long enough to create it.
  ASSIGN_OR_RETURN(NlSockPtr sock, ns.RunFor<NlSockPtr>([protocol] { return Connect(protocol); }),
                   "in netns \"", ns.path(), "\"");
  ASSIGN_OR_RETURN(Netns dup, ns.Dup());
  return NetlinkSocket(std::move(sock), std::move(dup), protocol);
}

absl::Status NetlinkSocket::Reconnect() {
  // In the socket's namespace: directly when the calling thread is there
  // (the usual case), else on a helper thread, as OpenIn does.
  // An unknown namespace is the calling thread's (see Open).
  absl::StatusOr<Netns> here = netns_.has_value() ? Netns::Current() : absl::StatusOr<Netns>(absl::UnknownError(""));
  absl::StatusOr<NlSockPtr> fresh = !netns_.has_value() || (here.ok() && Netns::Same(*here, *netns_))
                                        ? Connect(protocol_)
                                        : netns_->RunFor<NlSockPtr>([p = protocol_] { return Connect(p); });
  RETURN_IF_ERROR(fresh, "reopening the netlink socket");
  sock_ = *std::move(fresh);
  dirty_ = false;
  sndbuf_ = rcvbuf_ = 0;
  return absl::OkStatus();
}

absl::Status NetlinkSocket::Transact(nl_msg* msg, absl::string_view what) {
  return Exchange(msg, NlExchange{.until = NlAnswer::kAck}, what);
}

}  // namespace cni::net

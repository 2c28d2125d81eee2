// The one netlink send / receive loop (NetlinkSocket::Exchange): requests of
// every family (rtnetlink, nf_tables, tc) go through it.
//
// Answers are read straight off the socket into one large buffer, without
// libnl's receive loop (a peek and a copy per message: listing 2,000 nf_tables
// rules that way cost ~3 ms, about as much as the rest of a portmap ADD).
#include <linux/netlink.h>
#include <netlink/msg.h>
#include <netlink/socket.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "cni/net/netlink.h"

namespace cni::net {
namespace {

// The kernel fills a dump datagram up to the reader's buffer size, at most
// 32 KiB; twice that holds any usual answer. A bigger answer (a link with
// hundreds of VFs) makes the buffer grow.
constexpr size_t kMinBuffer = 64 * 1024;
// A dump interrupted by concurrent changes, or cut by a small buffer, is
// asked again this many times before giving up.
constexpr int kMaxAttempts = 10;

}  // namespace

uint32_t NetlinkSocket::NextSeq(uint32_t count) {
  // libnl's counter, so that its cache fills on this socket never reuse ours.
  uint32_t first = nl_socket_use_seq(sock_.get());
  for (uint32_t i = 1; i < count; ++i) nl_socket_use_seq(sock_.get());
  return first;
}

void NetlinkSocket::GrowBuffer(int option, int force_option, size_t bytes) {
  size_t& known = option == SO_SNDBUF ? sndbuf_ : rcvbuf_;
  if (bytes <= known) return;
  int fd = nl_socket_get_fd(sock_.get());
  int have = 0;
  socklen_t len = sizeof(have);
  int want = static_cast<int>(bytes);
  // Root may go past net.core.[rw]mem_max (FORCE), as nft does; else ask
  // for what the limit allows.
  if (getsockopt(fd, SOL_SOCKET, option, &have, &len) == 0 && have < want &&
      setsockopt(fd, SOL_SOCKET, force_option, &want, sizeof(want)) != 0) {
    setsockopt(fd, SOL_SOCKET, option, &want, sizeof(want));
  }
  known = bytes;
}

absl::Status NetlinkSocket::Exchange(nl_msg* msg, const NlExchange& how, absl::string_view what) {
  nlmsghdr* h = nlmsg_hdr(msg);
  h->nlmsg_seq = NextSeq();
  h->nlmsg_flags |= NLM_F_REQUEST;
  if (how.until == NlAnswer::kAck) h->nlmsg_flags |= NLM_F_ACK;
  if (how.until == NlAnswer::kDump) h->nlmsg_flags |= NLM_F_DUMP;
  return Exchange(absl::string_view(reinterpret_cast<const char*>(h), h->nlmsg_len), h->nlmsg_seq, 1, how, what);
}

absl::Status NetlinkSocket::Exchange(absl::string_view request, uint32_t first_seq, uint32_t count,
                                     const NlExchange& how, absl::string_view what) {
  std::string again_request;  // a copy with a new sequence number, to ask again
  for (int attempt = 1;; ++attempt) {
    if (dirty_) RETURN_IF_ERROR(Reconnect(), what);
    // The request is one datagram: the send buffer must hold all of it.
    GrowBuffer(SO_SNDBUF, SO_SNDBUFFORCE, request.size() + 4096);
    // Answers queued before they are read must all fit, or some are lost.
    if (how.queued_bytes > 0) GrowBuffer(SO_RCVBUF, SO_RCVBUFFORCE, how.queued_bytes);
    const int fd = nl_socket_get_fd(sock_.get());
    ssize_t sent;
    do {
      sent = send(fd, request.data(), request.size(), 0);
    } while (sent < 0 && errno == EINTR);
    if (sent < 0) return KernelError(errno, what);
    bool again = false;
    RETURN_IF_ERROR(Receive(first_seq, count, how, what, again));
    if (!again) return absl::OkStatus();
    if (attempt >= kMaxAttempts || count != 1) {
      dirty_ = true;
      return WithErrno(absl::AbortedError(absl::StrCat(what, ": the listing kept changing while it was read")),
                       EINTR);
    }
    if (how.restart) how.restart();
    // A new number, so that nothing left of this attempt passes for an answer.
    again_request.assign(request.data(), request.size());
    first_seq = NextSeq();
    std::memcpy(again_request.data() + offsetof(nlmsghdr, nlmsg_seq), &first_seq, sizeof(first_seq));
    request = again_request;
  }
}

bool NetlinkSocket::EndOfStoppedDump(nlmsghdr* stopped_at, int left, uint32_t first, uint32_t count) {
  auto ends_ours = [&](nlmsghdr* h, int len) {
    for (; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
      if (h->nlmsg_seq - first >= count) continue;
      if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR) return true;
    }
    return false;
  };
  // Some dumps (rtnetlink's, lately) end in the datagram that holds their
  // last objects.
  int rest = left;
  nlmsghdr* next = NLMSG_NEXT(stopped_at, rest);
  if (ends_ours(next, rest)) return true;
  // Others (nf_tables') end in a datagram of their own, which the kernel
  // made while the one in hand was read (netlink_recvmsg goes on with the
  // dump then), so it is already queued: reading it, without waiting,
  // finishes the dump. Anything else queued (more objects) means the dump
  // goes on, and only a new socket is rid of it.
  const int fd = nl_socket_get_fd(sock_.get());
  ssize_t n;
  do {
    n = recv(fd, buf_.get(), buf_size_, MSG_TRUNC | MSG_DONTWAIT);
  } while (n < 0 && errno == EINTR);
  if (n < 0 || static_cast<size_t>(n) > buf_size_) return false;
  return ends_ours(reinterpret_cast<nlmsghdr*>(buf_.get()), static_cast<int>(n));
}

absl::Status NetlinkSocket::Receive(uint32_t first, uint32_t count, const NlExchange& how,
                                    absl::string_view what, bool& again) {
  again = false;
  if (buf_size_ == 0) {
    // Left uninitialised: the kernel writes what it sends, and zeroing 64 KiB
    // in a fresh process is 16 page faults on every request.
    buf_size_ = kMinBuffer;
    buf_ = std::make_unique_for_overwrite<char[]>(buf_size_);
  }
  const int fd = nl_socket_get_fd(sock_.get());
  const bool queued = how.until == NlAnswer::kQueued;
  absl::Status first_error;  // kQueued: every error is read, the first reported
  bool interrupted = false;
  auto name = [&](uint32_t seq) { return how.name ? how.name(seq) : std::string(what); };
  for (;;) {
    // MSG_TRUNC: the datagram's real length, so a cut one is noticed.
    ssize_t n = recv(fd, buf_.get(), buf_size_, MSG_TRUNC | (queued ? MSG_DONTWAIT : 0));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && queued && (errno == EAGAIN || errno == EWOULDBLOCK)) return first_error;
    if (n < 0) {
      // ENOBUFS: answers were lost (the receive buffer overflowed); the
      // outcome of a batch is then unknown, and the caller must look before
      // it retries.
      int err = errno;
      dirty_ = true;
      return first_error.ok() ? KernelError(err, what) : first_error;
    }
    if (static_cast<size_t>(n) > buf_size_) {
      // Cut: the rest of that message is lost. A dump or a GET is asked
      // again with a buffer that holds it; anything else fails.
      buf_size_ = (static_cast<size_t>(n) + 4095) & ~size_t{4095};
      buf_ = std::make_unique_for_overwrite<char[]>(buf_size_);
      dirty_ = how.until != NlAnswer::kOne;
      if (how.until == NlAnswer::kDump || how.until == NlAnswer::kOne) {
        again = true;
        return absl::OkStatus();
      }
      return KernelError(EMSGSIZE, what);
    }
    int left = static_cast<int>(n);
    for (auto* h = reinterpret_cast<nlmsghdr*>(buf_.get()); NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
      if (h->nlmsg_seq - first >= count) continue;  // an answer to an earlier request
      if (h->nlmsg_flags & NLM_F_DUMP_INTR) interrupted = true;
      if (h->nlmsg_type == NLMSG_DONE) {
        again = interrupted;
        return absl::OkStatus();
      }
      if (h->nlmsg_type == NLMSG_ERROR) {
        const auto* e = static_cast<const nlmsgerr*>(NLMSG_DATA(h));
        if (e->error == 0) {
          if (how.until == NlAnswer::kAck) return absl::OkStatus();
          continue;
        }
        absl::Status st = KernelError(-e->error, name(h->nlmsg_seq), ExtackMessage(e));
        if (!queued) return st;  // the answer ends with its error
        if (first_error.ok()) first_error = std::move(st);
        continue;
      }
      if (h->nlmsg_type < NLMSG_MIN_TYPE) continue;  // NOOP, OVERRUN
      if (how.each && !how.each(h)) {
        // Stopped early: an ack or the rest of a dump may still come.
        dirty_ = how.until == NlAnswer::kDump ? !EndOfStoppedDump(h, left, first, count) : how.until != NlAnswer::kOne;
        return absl::OkStatus();
      }
      if (how.until == NlAnswer::kOne) return absl::OkStatus();
    }
  }
}

}  // namespace cni::net

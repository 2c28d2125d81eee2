#include "nft_commit.h"

// <netinet/in.h> before the <linux/...> headers (see nft_dump.cc).
#include <netinet/in.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "cni/error.h"
#include "cni/net/netlink.h"
#include "nft_encode.h"

namespace cni::fw::internal {
namespace {

constexpr uint32_t kFirstSeq = 1;  // the batch begin; the commands follow

absl::Status Failed(absl::string_view what) {
  return Error(ErrorCode::kInternal, absl::StrCat("nftables transaction failed: ", what));
}

// NFNL_MSG_BATCH_BEGIN / _END: they frame the transaction for nfnetlink,
// which hands everything between them to nf_tables (res_id).
void AppendFrame(std::string& buf, uint16_t type, uint32_t seq) {
  nlmsghdr nlh{};
  nlh.nlmsg_len = NLMSG_LENGTH(sizeof(nfgenmsg));
  nlh.nlmsg_type = type;
  nlh.nlmsg_flags = NLM_F_REQUEST;
  nlh.nlmsg_seq = seq;
  nfgenmsg gen{.nfgen_family = AF_UNSPEC, .version = NFNETLINK_V0, .res_id = htons(NFNL_SUBSYS_NFTABLES)};
  std::string msg(NLMSG_ALIGN(nlh.nlmsg_len), '\0');
  std::memcpy(msg.data(), &nlh, sizeof(nlh));
  std::memcpy(msg.data() + NLMSG_HDRLEN, &gen, sizeof(gen));
  buf += msg;
}

// The kernel's text for a failure: strerror, plus its extended-ack message
// when it gave one.
std::string Reason(const nlmsghdr* h) {
  const auto* err = static_cast<const nlmsgerr*>(NLMSG_DATA(h));
  std::string extack = net::ExtackMessage(err);
  std::string reason = strerror(-err->error);
  return extack.empty() ? reason : absl::StrCat(reason, " (", extack, ")");
}

}  // namespace

absl::Status CommitOverNetlink(const std::vector<NftCommand>& commands) {
  std::string buf;
  AppendFrame(buf, NFNL_MSG_BATCH_BEGIN, kFirstSeq);
  for (size_t i = 0; i < commands.size(); ++i) {
    absl::StatusOr<net::NlMsgPtr> msg = EncodeCommand(commands[i], kFirstSeq + 1 + i);
    if (!msg.ok()) return msg.status();
    const nlmsghdr* h = nlmsg_hdr(msg->get());
    buf.append(reinterpret_cast<const char*>(h), h->nlmsg_len);
    buf.resize(NLMSG_ALIGN(buf.size()), '\0');
  }
  AppendFrame(buf, NFNL_MSG_BATCH_END, kFirstSeq + 1 + commands.size());

  net::NlSockPtr sock(nl_socket_alloc());
  if (!sock) return Failed("out of memory");
  if (int err = nl_connect(sock.get(), NETLINK_NETFILTER); err < 0) return Failed(nl_geterror(err));
  int fd = nl_socket_get_fd(sock.get());
  int one = 1;
  // Errors without the request echoed, plus the kernel's explanation.
  setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
  setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
  // The batch is one datagram: the send buffer must hold all of it (root may
  // go past net.core.wmem_max; nft does the same).
  int want = static_cast<int>(buf.size()) + 4096;
  int have = 0;
  socklen_t len = sizeof(have);
  if (getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &have, &len) == 0 && have < want) {
    if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &want, sizeof(want)) != 0) {
      setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &want, sizeof(want));
    }
  }
  if (int err = nl_sendto(sock.get(), buf.data(), buf.size()); err < 0) return Failed(nl_geterror(err));

  // Every failure report is queued by now: read until the queue is empty.
  std::string first_error;
  std::string reply(64 * 1024, '\0');
  for (;;) {
    ssize_t n = recv(fd, reply.data(), reply.size(), MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    // ENOBUFS: reports were lost, which only happens when there were some.
    if (n < 0) return Failed(first_error.empty() ? strerror(errno) : first_error);
    int left = static_cast<int>(n);
    for (auto* h = reinterpret_cast<nlmsghdr*>(reply.data()); NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
      if (h->nlmsg_type != NLMSG_ERROR || !first_error.empty()) continue;
      if (static_cast<const nlmsgerr*>(NLMSG_DATA(h))->error == 0) continue;
      size_t index = h->nlmsg_seq - kFirstSeq - 1;
      std::string where = index < commands.size() ? commands[index].ToText() : "batch";
      first_error = absl::StrCat(where, ": ", Reason(h));
    }
  }
  if (!first_error.empty()) return Failed(first_error);
  return absl::OkStatus();
}

}  // namespace cni::fw::internal

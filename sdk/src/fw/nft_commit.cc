#include "nft_commit.h"

// <netinet/in.h> before the <linux/...> headers (see nft_dump.cc).
#include <netinet/in.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <sys/socket.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "cni/error.h"
#include "cni/net/netlink.h"
#include "nft_dump.h"
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

absl::Status CommitOverNetlink(const std::vector<NftCommand>& commands, std::vector<NftRule>* added) {
  std::string buf;
  size_t rules_added = 0;
  AppendFrame(buf, NFNL_MSG_BATCH_BEGIN, kFirstSeq);
  for (size_t i = 0; i < commands.size(); ++i) {
    absl::StatusOr<net::NlMsgPtr> msg = EncodeCommand(commands[i], kFirstSeq + 1 + i);
    if (!msg.ok()) return msg.status();
    nlmsghdr* h = nlmsg_hdr(msg->get());
    // NLM_F_ECHO: when the transaction commits, the kernel sends us the new
    // rule as it lists it, handle included.
    if (added != nullptr &&
        (commands[i].op == NftCommand::Op::kAddRule || commands[i].op == NftCommand::Op::kInsertRule)) {
      h->nlmsg_flags |= NLM_F_ECHO;
      ++rules_added;
    }
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
  // The echoed rules must all fit in the receive buffer, or some are lost.
  // (Each is ~0.5 KiB; the kernel packs them into a few large buffers.)
  int want_rcv = static_cast<int>(rules_added * 2048 + 65536);
  if (want_rcv > 0 && getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &have, &len) == 0 && have < want_rcv) {
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &want_rcv, sizeof(want_rcv)) != 0) {
      setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &want_rcv, sizeof(want_rcv));
    }
  }
  if (int err = nl_sendto(sock.get(), buf.data(), buf.size()); err < 0) return Failed(nl_geterror(err));

  // Every failure report (and every echo) is queued by now: read until the
  // queue is empty.
  std::string first_error;
  std::vector<std::pair<size_t, NftRule>> echoed;  // command index, rule
  std::string reply(64 * 1024, '\0');
  for (;;) {
    ssize_t n = recv(fd, reply.data(), reply.size(), MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    // ENOBUFS: reports were lost, which only happens when there were some
    // (failures, or echoes the buffer could not hold: then the outcome is
    // unknown, and the caller must look before it retries).
    if (n < 0) return Failed(first_error.empty() ? strerror(errno) : first_error);
    int left = static_cast<int>(n);
    for (auto* h = reinterpret_cast<nlmsghdr*>(reply.data()); NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
      size_t index = h->nlmsg_seq - kFirstSeq - 1;
      if (h->nlmsg_type == ((NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWRULE) && index < commands.size()) {
        NftRule r = RuleFromMessage(h);
        r.family = commands[index].family;
        echoed.emplace_back(index, std::move(r));
        continue;
      }
      if (h->nlmsg_type != NLMSG_ERROR || !first_error.empty()) continue;
      if (static_cast<const nlmsgerr*>(NLMSG_DATA(h))->error == 0) continue;
      std::string where = index < commands.size() ? commands[index].ToText() : "batch";
      first_error = absl::StrCat(where, ": ", Reason(h));
    }
  }
  if (!first_error.empty()) return Failed(first_error);
  if (added != nullptr) {
    if (echoed.size() != rules_added) {
      // Committed, but we cannot say which handles the rules got.
      return Failed(absl::StrCat("committed, but the kernel echoed ", echoed.size(), " of ", rules_added,
                                 " new rules"));
    }
    std::sort(echoed.begin(), echoed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    added->clear();
    for (auto& [index, rule] : echoed) added->push_back(std::move(rule));
  }
  return absl::OkStatus();
}

}  // namespace cni::fw::internal

// RAII for libnl handles, and the rtnetlink socket every net/ call goes through.
//
// Handles are std::unique_ptr with one overloaded deleter, so no code outside
// sdk/src/net calls a *_free / *_put. The libnl types are only forward-declared
// here; include <netlink/...> in the .cc that needs their functions.
//
// A NetlinkSocket belongs to the namespace it was created in, for its whole life:
// OpenIn(ns) enters `ns` on a short-lived helper thread only to create and bind
// the socket, after which it can be driven from any (single) thread. A socket is
// not thread-safe; use one per thread. Open a socket once and hand it to every
// call that needs one: each new socket costs a few system calls, and one
// opened in another namespace a thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/net/netns.h"

// libnl's handle types, opaque here (see above).
struct nl_sock;
struct nl_msg;
struct nl_cache;
struct nl_addr;
struct rtnl_link;
struct rtnl_addr;
struct rtnl_route;
struct rtnl_nexthop;
struct rtnl_qdisc;
struct rtnl_cls;
struct rtnl_act;
struct nlmsgerr;
struct nlmsghdr;

namespace cni::net {

// Frees / drops the reference of each libnl handle type.
struct NlDeleter {
  void operator()(nl_sock* p) const;       // nl_socket_free
  void operator()(nl_msg* p) const;        // nlmsg_free
  void operator()(nl_cache* p) const;      // nl_cache_free (drops the objects' references)
  void operator()(nl_addr* p) const;       // nl_addr_put
  void operator()(rtnl_link* p) const;     // rtnl_link_put
  void operator()(rtnl_addr* p) const;     // rtnl_addr_put
  void operator()(rtnl_route* p) const;    // rtnl_route_put
  void operator()(rtnl_nexthop* p) const;  // rtnl_route_nh_free (only for one no route owns)
  void operator()(rtnl_qdisc* p) const;    // rtnl_qdisc_put
  void operator()(rtnl_cls* p) const;      // rtnl_cls_put
  void operator()(rtnl_act* p) const;      // rtnl_act_put
};

// Owning handles, one per libnl type. A pointer libnl hands out as a borrowed
// reference (e.g. an object inside a cache) must not be put in one.
using NlSockPtr = std::unique_ptr<nl_sock, NlDeleter>;           // a netlink socket
using NlMsgPtr = std::unique_ptr<nl_msg, NlDeleter>;             // a netlink message (a request)
using NlCachePtr = std::unique_ptr<nl_cache, NlDeleter>;         // a dump's objects
using NlAddrPtr = std::unique_ptr<nl_addr, NlDeleter>;           // an address (IP or MAC)
using RtnlLinkPtr = std::unique_ptr<rtnl_link, NlDeleter>;       // a link object
using RtnlAddrPtr = std::unique_ptr<rtnl_addr, NlDeleter>;       // an interface address object
using RtnlRoutePtr = std::unique_ptr<rtnl_route, NlDeleter>;     // a route object
using RtnlNexthopPtr = std::unique_ptr<rtnl_nexthop, NlDeleter>; // a next hop no route owns yet
using RtnlQdiscPtr = std::unique_ptr<rtnl_qdisc, NlDeleter>;     // a qdisc object
using RtnlClsPtr = std::unique_ptr<rtnl_cls, NlDeleter>;         // a classifier (tc filter) object
using RtnlActPtr = std::unique_ptr<rtnl_act, NlDeleter>;         // a tc action object

// The extended-ack text (NLMSGERR_ATTR_MSG) of a kernel error reply, "" when
// it has none. Works whether or not the request was echoed (NETLINK_CAP_ACK).
std::string ExtackMessage(const nlmsgerr* e);

// A status for a kernel errno (positive), `what` naming the operation and the
// object: `creating veth "veth1a2b3c4d": File exists`. The canonical code tells
// the kind of failure so callers can branch without string matching:
//   EEXIST                           -> absl::IsAlreadyExists (retry a new name)
//   ENOENT ENODEV ESRCH EADDRNOTAVAIL -> absl::IsNotFound (DEL: already gone)
//   EAGAIN                           -> absl::IsUnavailable, CNI code 11
//   anything else                    -> internal (CNI code 999, as upstream)
// `detail`, when given, is the kernel's extended ack message. The errno rides
// on the status (cni::ErrnoOf), for callers that must tell causes apart.
absl::Status KernelError(int err, absl::string_view what, absl::string_view detail = {});

// Same for a libnl error code (negative or positive NLE_*), mapped back to the
// errno it most likely came from.
absl::Status NlError(int nlerr, absl::string_view what);

// The netlink families a NetlinkSocket can talk to (the protocol argument
// of socket(AF_NETLINK, ...), values of <linux/netlink.h>).
enum class NetlinkProtocol : int {
  kRoute = 0,       // NETLINK_ROUTE: links, addresses, routes, tc (rtnetlink)
  kNetfilter = 12,  // NETLINK_NETFILTER: nf_tables, conntrack (nfnetlink)
  kGeneric = 16,    // NETLINK_GENERIC: families resolved by name (genetlink)
};

// How the kernel's answer to a request ends, i.e. when Exchange stops reading.
enum class NlAnswer {
  kAck,     // the acknowledgement (NLMSG_ERROR 0) or the error; NLM_F_ACK is set
  kDump,    // NLMSG_DONE; NLM_F_DUMP is set, and the dump is asked again (up to
            // 10 times) when the kernel marks it interrupted by a concurrent
            // change (NLM_F_DUMP_INTR)
  kOne,     // the first answer: one object or an error (a GET without NLM_F_ACK)
  kQueued,  // whatever is queued when the send returns (nf_tables batches,
            // which the kernel handles inside the send); every error is read,
            // the first one is reported
};

// How the answer to one request is handled (see NetlinkSocket::Exchange).
struct NlExchange {
  NlAnswer until = NlAnswer::kAck;  // when to stop reading
  // Every answer message but NLMSG_DONE and the acknowledgement; returns
  // false to stop reading (a dump stopped early is abandoned: the kernel
  // produces a dump only as it is read, so the rest is never made). Null:
  // answer messages are skipped.
  std::function<bool(nlmsghdr*)> each;
  // Called before a dump is asked again (interrupted, or a message did not
  // fit the buffer), to forget what `each` collected. Null: nothing to forget.
  std::function<void()> restart;
  // Names the request a failure answers, from its sequence number, for a
  // request of several messages (a batch); null names it by `what`.
  std::function<std::string(uint32_t seq)> name;
  // Bytes of answers the socket must be able to queue before they are read
  // (echoed rules of a batch); 0: the default receive buffer.
  size_t queued_bytes = 0;
};

// The netlink transport: a socket of one netlink family bound to one
// network namespace for its whole life, and the one send / receive loop
// every request of the SDK goes through (rtnetlink, nf_tables, tc, bridge).
// libnl still builds route objects and fills its caches (Dump) on the same
// socket. Kernel failures carry their errno (cni::ErrnoOf) and the kernel's
// extended-ack text. Move-only; not thread-safe (one per thread).
class NetlinkSocket {
 public:
  // A socket of `protocol` in the calling thread's namespace.
  static absl::StatusOr<NetlinkSocket> Open(NetlinkProtocol protocol = NetlinkProtocol::kRoute);
  // A socket of `protocol` in `ns` (created on a helper thread inside `ns`).
  static absl::StatusOr<NetlinkSocket> OpenIn(const Netns& ns,
                                              NetlinkProtocol protocol = NetlinkProtocol::kRoute);

  // Movable; a moved-from socket must not be used.
  NetlinkSocket(NetlinkSocket&&) noexcept = default;
  // Move assignment; closes the socket this one held.
  NetlinkSocket& operator=(NetlinkSocket&&) noexcept = default;

  // The raw libnl socket, still owned by this object (for libnl calls in
  // sdk/src/net; needs <netlink/...> headers to be of any use).
  nl_sock* get() const { return sock_.get(); }
  // The namespace this socket works in (for sysctls, which need a thread
  // there). Not known, and not to be asked, for a socket from Open() in a
  // process without /proc (a minimal chroot), which needs none.
  const Netns& netns() const { return *netns_; }
  // The netlink family it talks to.
  NetlinkProtocol protocol() const { return protocol_; }

  // Sends a request (built with libnl's rtnl_*_build_*_request) and waits for
  // the kernel's acknowledgement. Failures carry the kernel's own errno and its
  // extended-ack text, unlike libnl's lossy NLE_* mapping.
  absl::Status Transact(nl_msg* msg, absl::string_view what);

  // Sends `msg` (its sequence number and NLM_F_REQUEST are filled in, plus
  // NLM_F_ACK / NLM_F_DUMP as `how.until` needs) and reads the answer as
  // `how` says. A kernel error fails with "<what>: <strerror> (<extack>)",
  // its errno attached and the canonical code of KernelError.
  absl::Status Exchange(nl_msg* msg, const NlExchange& how, absl::string_view what);
  // Same for a request of `count` messages already encoded in `request`,
  // whose sequence numbers run from `first_seq` (reserved with NextSeq).
  // Sent as one datagram: the send buffer grows to hold it.
  absl::Status Exchange(absl::string_view request, uint32_t first_seq, uint32_t count,
                        const NlExchange& how, absl::string_view what);
  // Reserves `count` consecutive sequence numbers for a request built by
  // hand and returns the first.
  uint32_t NextSeq(uint32_t count = 1);

  // Fills a libnl cache with a dump (e.g. rtnl_link_alloc_cache). A dump that
  // the kernel marks as interrupted by a concurrent change (NLM_F_DUMP_INTR) is
  // retried a few times before failing.
  absl::StatusOr<NlCachePtr> Dump(const std::function<int(nl_sock*, nl_cache**)>& alloc,
                                  absl::string_view what);

 private:
  NetlinkSocket(NlSockPtr sock, std::optional<Netns> netns, NetlinkProtocol protocol)
      : sock_(std::move(sock)), netns_(std::move(netns)), protocol_(protocol) {}
  static absl::StatusOr<NlSockPtr> Connect(NetlinkProtocol protocol);
  // A fresh socket in place of one whose answers are not all read (a dump
  // stopped early, a failure midway), so none reaches the next request.
  absl::Status Reconnect();
  // Reads answers to the sequence numbers [first, first + count) as `how` says.
  absl::Status Receive(uint32_t first, uint32_t count, const NlExchange& how, absl::string_view what,
                       bool& again);
  // After a dump of the request numbers [first, first + count) was stopped at
  // `stopped_at` (`left` bytes of the datagram from there on): whether its
  // end has been read too, so the socket is clean. A dump stopped while
  // short (a chain's first rules of a few) usually ends right after; a long
  // one goes on, and the socket needs Reconnect.
  bool EndOfStoppedDump(nlmsghdr* stopped_at, int left, uint32_t first, uint32_t count);
  // Grows the kernel's send / receive buffer of the socket to `bytes`.
  void GrowBuffer(int option, int force_option, size_t bytes);

  NlSockPtr sock_;
  std::optional<Netns> netns_;  // nullopt: opened here, namespace not known
  NetlinkProtocol protocol_ = NetlinkProtocol::kRoute;
  bool dirty_ = false;                  // answers may be left unread: Reconnect first
  std::unique_ptr<char[]> buf_;         // the receive buffer, made on first use
  size_t buf_size_ = 0;                 // its size
  size_t sndbuf_ = 0, rcvbuf_ = 0;      // kernel buffer sizes asked for so far
};

}  // namespace cni::net

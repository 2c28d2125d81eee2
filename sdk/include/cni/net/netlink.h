// RAII for libnl handles, and the rtnetlink socket every net/ call goes through.
//
// Handles are std::unique_ptr with one overloaded deleter, so no code outside
// sdk/src/net calls a *_free / *_put. The libnl types are only forward-declared
// here; include <netlink/...> in the .cc that needs their functions.
//
// A NetlinkSocket belongs to the namespace it was created in, for its whole life:
// OpenIn(ns) enters `ns` on a short-lived helper thread only to create and bind
// the socket, after which it can be driven from any (single) thread. A socket is
// not thread-safe; use one per thread.
#pragma once

#include <functional>
#include <memory>
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
// `detail`, when given, is the kernel's extended ack message.
absl::Status KernelError(int err, absl::string_view what, absl::string_view detail = {});

// Same for a libnl error code (negative or positive NLE_*), mapped back to the
// errno it most likely came from.
absl::Status NlError(int nlerr, absl::string_view what);

// An rtnetlink (NETLINK_ROUTE) socket bound to one network namespace for its
// whole life. Move-only; not thread-safe (one per thread).
class NetlinkSocket {
 public:
  // A NETLINK_ROUTE socket in the calling thread's namespace.
  static absl::StatusOr<NetlinkSocket> Open();
  // A NETLINK_ROUTE socket in `ns` (created on a helper thread inside `ns`).
  static absl::StatusOr<NetlinkSocket> OpenIn(const Netns& ns);

  // Movable; a moved-from socket must not be used.
  NetlinkSocket(NetlinkSocket&&) noexcept = default;
  // Move assignment; closes the socket this one held.
  NetlinkSocket& operator=(NetlinkSocket&&) noexcept = default;

  // The raw libnl socket, still owned by this object (for libnl calls in
  // sdk/src/net; needs <netlink/...> headers to be of any use).
  nl_sock* get() const { return sock_.get(); }
  // The namespace this socket works in (for sysctls, which need a thread there).
  const Netns& netns() const { return netns_; }

  // Sends a request (built with libnl's rtnl_*_build_*_request) and waits for
  // the kernel's acknowledgement. Failures carry the kernel's own errno and its
  // extended-ack text, unlike libnl's lossy NLE_* mapping.
  absl::Status Transact(nl_msg* msg, absl::string_view what);

  // Fills a libnl cache with a dump (e.g. rtnl_link_alloc_cache). A dump that
  // the kernel marks as interrupted by a concurrent change (NLM_F_DUMP_INTR) is
  // retried a few times before failing.
  absl::StatusOr<NlCachePtr> Dump(const std::function<int(nl_sock*, nl_cache**)>& alloc,
                                  absl::string_view what);

 private:
  NetlinkSocket(NlSockPtr sock, Netns netns) : sock_(std::move(sock)), netns_(std::move(netns)) {}
  static absl::StatusOr<NlSockPtr> Connect();

  NlSockPtr sock_;
  Netns netns_;
};

}  // namespace cni::net

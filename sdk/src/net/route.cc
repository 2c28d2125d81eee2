#include "cni/net/route.h"

#include <linux/rtnetlink.h>
#include <netlink/cache.h>
#include <netlink/msg.h>
#include <netlink/route/nexthop.h>
#include <netlink/route/route.h>

#include <array>

#include "absl/strings/str_cat.h"
#include "cni/status_macros.h"
#include "nl_convert.h"

namespace cni::net {
namespace {

using internal::AfOf;
using internal::FromNlAddr;
using internal::ToNlAddr;

// Builds the libnl route object for `r`. Addresses handed to libnl are
// reference-counted and copied in, so the temporaries can go at scope end.
absl::StatusOr<RtnlRoutePtr> Build(const RouteSpec& r, RouteOp op, absl::string_view what) {
  auto oom = [&] { return absl::ResourceExhaustedError(absl::StrCat(what, ": out of memory")); };
  RtnlRoutePtr route(rtnl_route_alloc());
  if (!route) return oom();
  rtnl_route_set_family(route.get(), static_cast<uint8_t>(AfOf(r.dst.family())));
  NlAddrPtr dst = ToNlAddr(r.dst.Network());
  if (!dst) return oom();
  rtnl_route_set_dst(route.get(), dst.get());
  rtnl_route_set_table(route.get(), r.table != 0 ? static_cast<uint32_t>(r.table) : RT_TABLE_MAIN);
  if (r.type != 0) rtnl_route_set_type(route.get(), static_cast<uint8_t>(r.type));
  if (r.scope) {
    rtnl_route_set_scope(route.get(), static_cast<uint8_t>(*r.scope));
  } else if (op == RouteOp::kDelete) {
    // libnl would otherwise guess a scope; RT_SCOPE_NOWHERE is the kernel's
    // "any scope" on delete.
    rtnl_route_set_scope(route.get(), RT_SCOPE_NOWHERE);
  }
  // The kernel matches the protocol on delete unless it is 0 (RTPROT_UNSPEC).
  int protocol = r.protocol.value_or(op == RouteOp::kDelete ? RTPROT_UNSPEC : RTPROT_BOOT);
  rtnl_route_set_protocol(route.get(), static_cast<uint8_t>(protocol));
  if (r.priority) rtnl_route_set_priority(route.get(), *r.priority);
  if (r.src) {
    NlAddrPtr src = ToNlAddr(*r.src);
    if (!src) return oom();
    rtnl_route_set_pref_src(route.get(), src.get());
  }
  if (r.mtu) rtnl_route_set_metric(route.get(), RTAX_MTU, static_cast<unsigned>(*r.mtu));
  if (r.advmss) rtnl_route_set_metric(route.get(), RTAX_ADVMSS, static_cast<unsigned>(*r.advmss));

  std::vector<Nexthop> paths = r.multipath;
  if (paths.empty() && (r.gw || r.ifindex != 0)) paths.push_back({r.gw, r.ifindex, 1});
  for (const Nexthop& p : paths) {
    RtnlNexthopPtr nh(rtnl_route_nh_alloc());
    if (!nh) return oom();
    if (p.ifindex != 0) rtnl_route_nh_set_ifindex(nh.get(), p.ifindex);
    if (r.onlink && r.multipath.empty()) rtnl_route_nh_set_flags(nh.get(), RTNH_F_ONLINK);
    if (p.gw) {
      NlAddrPtr gw = ToNlAddr(*p.gw);
      if (!gw) return oom();
      rtnl_route_nh_set_gateway(nh.get(), gw.get());
    }
    // libnl stores the raw rtnh_hops, which is weight - 1.
    if (r.multipath.size() > 0 && p.weight > 1) {
      rtnl_route_nh_set_weight(nh.get(), static_cast<uint8_t>(p.weight - 1));
    }
    rtnl_route_add_nexthop(route.get(), nh.release());  // the route owns it now
  }
  return route;
}

std::string What(const RouteSpec& r, RouteOp op) {
  const char* verb = op == RouteOp::kAdd || op == RouteOp::kAddAlongside ? "adding"
                     : op == RouteOp::kReplace                            ? "replacing"
                                                                          : "deleting";
  return absl::StrCat(verb, " route ", r.ToString());
}

absl::StatusOr<NlMsgPtr> BuildRequest(const RouteSpec& r, RouteOp op) {
  std::string what = What(r, op);
  ASSIGN_OR_RETURN(RtnlRoutePtr route, Build(r, op, what));
  nl_msg* raw = nullptr;
  int rc = 0;
  switch (op) {
    case RouteOp::kAdd:
      rc = rtnl_route_build_add_request(route.get(), NLM_F_EXCL, &raw);
      break;
    case RouteOp::kAddAlongside:
      // Neither EXCL nor REPLACE: the kernel adds the route next to any other
      // one to the same destination and refuses only an identical route
      // (`ip route prepend`). libnl adds NLM_F_CREATE itself.
      rc = rtnl_route_build_add_request(route.get(), 0, &raw);
      break;
    case RouteOp::kReplace:
      rc = rtnl_route_build_add_request(route.get(), NLM_F_REPLACE, &raw);
      break;
    case RouteOp::kDelete:
      rc = rtnl_route_build_del_request(route.get(), 0, &raw);
      break;
  }
  NlMsgPtr msg(raw);
  if (rc < 0) return NlError(rc, what);
  return msg;
}

absl::Status Send(NetlinkSocket& sock, const RouteSpec& r, RouteOp op) {
  ASSIGN_OR_RETURN(NlMsgPtr msg, BuildRequest(r, op));
  return sock.Transact(msg.get(), What(r, op));
}

RouteSpec SpecOf(rtnl_route* route) {
  RouteSpec r;
  int family = rtnl_route_get_family(route);
  nl_addr* dst = rtnl_route_get_dst(route);
  int len = dst ? static_cast<int>(nl_addr_get_prefixlen(dst)) : 0;
  std::optional<IpAddress> ip = FromNlAddr(dst);
  if (!ip) {  // no RTA_DST: a default route
    ip = family == AF_INET6 ? IpAddress::V6({}) : IpAddress::V4({});
  }
  r.dst = IpPrefix(*ip, len);
  r.scope = rtnl_route_get_scope(route);
  r.table = static_cast<int>(rtnl_route_get_table(route));
  r.priority = rtnl_route_get_priority(route);
  r.protocol = rtnl_route_get_protocol(route);
  r.type = rtnl_route_get_type(route);
  r.src = FromNlAddr(rtnl_route_get_pref_src(route));
  uint32_t val = 0;
  if (rtnl_route_get_metric(route, RTAX_MTU, &val) == 0) r.mtu = static_cast<int>(val);
  if (rtnl_route_get_metric(route, RTAX_ADVMSS, &val) == 0) r.advmss = static_cast<int>(val);
  int n = rtnl_route_get_nnexthops(route);
  for (int i = 0; i < n; ++i) {
    rtnl_nexthop* nh = rtnl_route_nexthop_n(route, i);
    Nexthop p;
    p.ifindex = rtnl_route_nh_get_ifindex(nh);
    p.gw = FromNlAddr(rtnl_route_nh_get_gateway(nh));
    p.weight = rtnl_route_nh_get_weight(nh) + 1;
    if (n == 1) {
      r.gw = p.gw;
      r.ifindex = p.ifindex;
      r.onlink = (rtnl_route_nh_get_flags(nh) & RTNH_F_ONLINK) != 0;
    } else {
      r.multipath.push_back(p);
    }
  }
  return r;
}

}  // namespace

std::string RouteSpec::ToString() const {
  std::string s = dst.Network().ToString();
  if (gw) absl::StrAppend(&s, " via ", gw->ToString());
  if (ifindex != 0) absl::StrAppend(&s, " dev #", ifindex);
  for (const Nexthop& p : multipath) {
    absl::StrAppend(&s, " nexthop");
    if (p.gw) absl::StrAppend(&s, " via ", p.gw->ToString());
    if (p.ifindex != 0) absl::StrAppend(&s, " dev #", p.ifindex);
    if (p.weight != 1) absl::StrAppend(&s, " weight ", p.weight);
  }
  if (table != 0 && table != RT_TABLE_MAIN) absl::StrAppend(&s, " table ", table);
  if (scope) absl::StrAppend(&s, " scope ", *scope);
  if (priority) absl::StrAppend(&s, " metric ", *priority);
  if (onlink) absl::StrAppend(&s, " onlink");
  return s;
}

bool HasPath(const RouteSpec& route, const std::optional<IpAddress>& gw, int ifindex) {
  auto matches = [&](const std::optional<IpAddress>& path_gw, int path_ifindex) {
    return (!gw || path_gw == gw) && (ifindex == 0 || path_ifindex == ifindex);
  };
  if (route.multipath.empty()) return matches(route.gw, route.ifindex);
  for (const Nexthop& p : route.multipath) {
    if (matches(p.gw, p.ifindex)) return true;
  }
  return false;
}

std::vector<RouteSpec> PathsThrough(const std::vector<RouteSpec>& routes, int ifindex) {
  std::vector<RouteSpec> out;
  for (const RouteSpec& r : routes) {
    if (r.multipath.empty()) {
      if (r.ifindex == ifindex) out.push_back(r);
      continue;
    }
    for (const Nexthop& p : r.multipath) {
      if (p.ifindex != ifindex) continue;
      RouteSpec one = r;
      one.multipath.clear();
      one.gw = p.gw;
      one.ifindex = p.ifindex;
      out.push_back(std::move(one));
    }
  }
  return out;
}

absl::Status AddRoute(NetlinkSocket& sock, const RouteSpec& route) {
  return Send(sock, route, RouteOp::kAdd);
}

absl::Status AddRouteAlongside(NetlinkSocket& sock, const RouteSpec& route) {
  return Send(sock, route, RouteOp::kAddAlongside);
}

absl::Status ReplaceRoute(NetlinkSocket& sock, const RouteSpec& route) {
  return Send(sock, route, RouteOp::kReplace);
}

absl::Status DeleteRoute(NetlinkSocket& sock, const RouteSpec& route) {
  return Send(sock, route, RouteOp::kDelete);
}

absl::StatusOr<NlMsgPtr> BuildRouteRequest(const RouteSpec& route, RouteOp op) {
  return BuildRequest(route, op);
}

absl::StatusOr<std::vector<RouteSpec>> ListRoutes(NetlinkSocket& sock, const RouteFilter& filter) {
  const char* what = "listing routes";
  NlMsgPtr msg(nlmsg_alloc_simple(RTM_GETROUTE, 0));
  if (!msg) return absl::ResourceExhaustedError(absl::StrCat(what, ": out of memory"));
  rtmsg rtm{};
  rtm.rtm_family = static_cast<unsigned char>(filter.family ? AfOf(*filter.family) : AF_UNSPEC);
  if (int rc = nlmsg_append(msg.get(), &rtm, sizeof(rtm), NLMSG_ALIGNTO); rc < 0) return NlError(rc, what);
  // Each message is parsed on its own, not through a libnl cache: the cache
  // keys routes by destination, table and metric only, and keeps one of two
  // routes that differ by device (fe80::/64 on two links, a default route
  // through each of two interfaces).
  std::vector<RouteSpec> out;
  auto each = [&](nlmsghdr* h) {
    if (h->nlmsg_type != RTM_NEWROUTE) return true;
    const auto* m = static_cast<const rtmsg*>(nlmsg_data(h));
    if (m->rtm_family != AF_INET && m->rtm_family != AF_INET6) return true;
    if (m->rtm_flags & RTM_F_CLONED) return true;  // cached clones are not routes
    rtnl_route* raw = nullptr;
    if (rtnl_route_parse(h, &raw) < 0) return true;
    RtnlRoutePtr route(raw);
    if (filter.table && static_cast<int>(rtnl_route_get_table(route.get())) != *filter.table) return true;
    RouteSpec r = SpecOf(route.get());
    if (filter.ifindex != 0) {
      bool through = r.ifindex == filter.ifindex;
      for (const Nexthop& p : r.multipath) through = through || p.ifindex == filter.ifindex;
      if (!through) return true;
    }
    out.push_back(std::move(r));
    return true;
  };
  RETURN_IF_ERROR(sock.Exchange(msg.get(),
                                NlExchange{.until = NlAnswer::kDump, .each = each, .restart = [&out] { out.clear(); }},
                                what));
  return out;
}

absl::StatusOr<int> RouteOutputInterface(NetlinkSocket& sock, const IpAddress& dst) {
  const std::string what = absl::StrCat("looking up the route to ", dst.ToString());
  NlMsgPtr msg(nlmsg_alloc_simple(RTM_GETROUTE, 0));
  if (!msg) return absl::ResourceExhaustedError(absl::StrCat(what, ": out of memory"));
  rtmsg rtm{};
  rtm.rtm_family = static_cast<unsigned char>(AfOf(dst.family()));
  rtm.rtm_dst_len = static_cast<unsigned char>(dst.bit_length());
  if (int rc = nlmsg_append(msg.get(), &rtm, sizeof(rtm), NLMSG_ALIGNTO); rc < 0) return NlError(rc, what);
  if (int rc = nla_put(msg.get(), RTA_DST, dst.byte_length(), dst.data()); rc < 0) return NlError(rc, what);
  int oif = 0;
  NlExchange how{.until = NlAnswer::kOne, .each = [&oif](nlmsghdr* h) {
                   std::array<nlattr*, RTA_MAX + 1> tb{};
                   if (h->nlmsg_type == RTM_NEWROUTE &&
                       nlmsg_parse(h, sizeof(rtmsg), tb.data(), RTA_MAX, nullptr) == 0 && tb[RTA_OIF] != nullptr) {
                     oif = static_cast<int>(nla_get_u32(tb[RTA_OIF]));
                   }
                   return false;
                 }};
  RETURN_IF_ERROR(sock.Exchange(msg.get(), how, what));
  return oif;
}

}  // namespace cni::net

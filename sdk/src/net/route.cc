#include "cni/net/route.h"

#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>

#include <array>
#include <functional>
#include <string>

#include "absl/strings/str_cat.h"
#include "cni/base/status_macros.h"
#include "link_names.h"
#include "nl_convert.h"
#include "nl_request.h"

namespace cni::net {
namespace {

using internal::AfOf;
using internal::PutAddress;

// The route message (`type`, `flags`) for `r`, written here as libnl's route
// builder writes it (rtmsg, RTA_TABLE always, RTA_DST, priority, preferred
// source, metrics, then one path as RTA_GATEWAY/RTA_OIF with its flags in
// the header, or RTA_MULTIPATH with one rtnexthop per path), without its
// rtnl_route objects (see link.cc).
absl::StatusOr<NlMsgPtr> RouteMessage(int type, int flags, const RouteSpec& r, RouteOp op, absl::string_view what) {
  std::vector<Nexthop> paths = r.multipath;
  if (paths.empty() && (r.gw || r.ifindex != 0)) paths.push_back({r.gw, r.ifindex, 1});
  const uint32_t table = r.table != 0 ? static_cast<uint32_t>(r.table) : RT_TABLE_MAIN;
  rtmsg rtm{};
  rtm.rtm_family = static_cast<unsigned char>(AfOf(r.dst.family()));
  rtm.rtm_dst_len = static_cast<unsigned char>(r.dst.len());
  // Tables above 255 only RTA_TABLE can name (the kernel reads it first).
  rtm.rtm_table = static_cast<unsigned char>(table < 256 ? table : RT_TABLE_UNSPEC);
  // The kernel matches the protocol on delete unless it is 0 (RTPROT_UNSPEC).
  rtm.rtm_protocol = static_cast<unsigned char>(r.protocol.value_or(op == RouteOp::kDelete ? RTPROT_UNSPEC : RTPROT_BOOT));
  rtm.rtm_type = static_cast<unsigned char>(r.type != 0 ? r.type : RTN_UNICAST);
  if (r.scope) {
    rtm.rtm_scope = static_cast<unsigned char>(*r.scope);
  } else if (op == RouteOp::kDelete) {
    rtm.rtm_scope = RT_SCOPE_NOWHERE;  // the kernel's "any scope" on delete
  } else {
    // As `ip route`: host for a local route, universe when a path has a
    // gateway, else link.
    const bool via = std::any_of(paths.begin(), paths.end(), [](const Nexthop& p) { return p.gw.has_value(); });
    rtm.rtm_scope = r.type == RTN_LOCAL ? RT_SCOPE_HOST : via ? RT_SCOPE_UNIVERSE : RT_SCOPE_LINK;
  }
  const bool one_path = paths.size() == 1;
  if (one_path && r.onlink && r.multipath.empty()) rtm.rtm_flags |= RTNH_F_ONLINK;
  ASSIGN_OR_RETURN(NlMsgPtr msg, internal::RequestWith(type, flags, rtm, what));
  nl_msg* m = msg.get();
  int rc = nla_put_u32(m, RTA_TABLE, table);
  if (rc >= 0) rc = PutAddress(m, RTA_DST, r.dst.Network().addr());
  if (rc >= 0 && r.priority) rc = nla_put_u32(m, RTA_PRIORITY, *r.priority);
  if (rc >= 0 && r.src) rc = PutAddress(m, RTA_PREFSRC, *r.src);
  if (rc >= 0 && (r.mtu || r.advmss)) {
    nlattr* metrics = nla_nest_start(m, RTA_METRICS);
    if (metrics == nullptr) rc = -NLE_NOMEM;
    if (rc >= 0 && r.mtu) rc = nla_put_u32(m, RTAX_MTU, static_cast<uint32_t>(*r.mtu));
    if (rc >= 0 && r.advmss) rc = nla_put_u32(m, RTAX_ADVMSS, static_cast<uint32_t>(*r.advmss));
    if (rc >= 0) nla_nest_end(m, metrics);
  }
  if (rc >= 0 && one_path) {
    if (paths[0].gw) rc = PutAddress(m, RTA_GATEWAY, *paths[0].gw);
    if (rc >= 0 && paths[0].ifindex != 0) rc = nla_put_u32(m, RTA_OIF, static_cast<uint32_t>(paths[0].ifindex));
  } else if (rc >= 0 && paths.size() > 1) {
    nlattr* multipath = nla_nest_start(m, RTA_MULTIPATH);
    if (multipath == nullptr) rc = -NLE_NOMEM;
    for (const Nexthop& p : paths) {
      if (rc < 0) break;
      auto* nh = static_cast<rtnexthop*>(nlmsg_reserve(m, sizeof(rtnexthop), NLMSG_ALIGNTO));
      if (nh == nullptr) {
        rc = -NLE_NOMEM;
        break;
      }
      nh->rtnh_flags = 0;
      // rtnh_hops is the weight minus one.
      nh->rtnh_hops = static_cast<unsigned char>(r.multipath.size() > 0 && p.weight > 1 ? p.weight - 1 : 0);
      nh->rtnh_ifindex = p.ifindex;
      if (p.gw) rc = PutAddress(m, RTA_GATEWAY, *p.gw);
      // libnl's message buffer never moves (a put that does not fit fails).
      nh->rtnh_len = static_cast<unsigned short>(reinterpret_cast<char*>(nlmsg_tail(nlmsg_hdr(m))) - reinterpret_cast<char*>(nh));
    }
    if (rc >= 0) nla_nest_end(m, multipath);
  }
  if (rc < 0) return NlError(rc, what);
  return msg;
}

// `route` as `ip route` prints it, its devices named by `dev`.
std::string Describe(const RouteSpec& route, const std::function<std::string(int)>& dev);

std::string What(const RouteSpec& r, RouteOp op, const std::function<std::string(int)>& dev) {
  const char* verb = op == RouteOp::kAdd || op == RouteOp::kAddAlongside ? "adding"
                     : op == RouteOp::kReplace                            ? "replacing"
                                                                          : "deleting";
  return absl::StrCat(verb, " route ", Describe(r, dev));
}

std::string What(const RouteSpec& r, RouteOp op) { return What(r, op, nullptr); }

absl::StatusOr<NlMsgPtr> BuildRequest(const RouteSpec& r, RouteOp op) {
  std::string what = What(r, op);
  int type = RTM_NEWROUTE, flags = NLM_F_CREATE;
  switch (op) {
    case RouteOp::kAdd:
      flags |= NLM_F_EXCL;
      break;
    case RouteOp::kAddAlongside:
      // Neither EXCL nor REPLACE: the kernel adds the route next to any other
      // one to the same destination and refuses only an identical route
      // (`ip route prepend`).
      break;
    case RouteOp::kReplace:
      flags |= NLM_F_REPLACE;
      break;
    case RouteOp::kDelete:
      type = RTM_DELROUTE;
      flags = 0;
      break;
  }
  return RouteMessage(type, flags, r, op, what);
}

absl::Status Send(NetlinkSocket& sock, const RouteSpec& r, RouteOp op) {
  ASSIGN_OR_RETURN(NlMsgPtr msg, BuildRequest(r, op));
  const std::string what = What(r, op);
  return internal::NameLinks(sock.Transact(msg.get(), what), what, [&] {
    return What(r, op, [&](int ifindex) {
      return internal::LinkName(sock, ifindex).value_or(absl::StrCat("#", ifindex));
    });
  });
}

// The route of one RTM_NEWROUTE message, read as `ip route` shows it: the
// table from RTA_TABLE (rtm_table holds only tables below 256), the metric
// (0 when absent), and the paths: RTA_MULTIPATH's rtnexthops (weight =
// rtnh_hops + 1), or the single RTA_OIF/RTA_GATEWAY with its flags in the
// header. One path, either way, fills gw/ifindex/onlink; several fill
// multipath. nullopt for a message too short to be a route.
std::optional<RouteSpec> RouteSpecOf(nlmsghdr* h) {
  if (h->nlmsg_len < NLMSG_LENGTH(sizeof(rtmsg))) return std::nullopt;
  const auto* rtm = static_cast<const rtmsg*>(nlmsg_data(h));
  std::array<nlattr*, RTA_MAX + 1> tb{};
  if (nlmsg_parse(h, sizeof(rtmsg), tb.data(), RTA_MAX, nullptr) < 0) return std::nullopt;
  const Family family = rtm->rtm_family == AF_INET6 ? Family::kV6 : Family::kV4;
  auto u32 = [](const nlattr* a) { return nla_len(a) >= 4 ? nla_get_u32(const_cast<nlattr*>(a)) : 0u; };
  RouteSpec r;
  // No RTA_DST: a default route (rtm_dst_len 0).
  std::optional<IpAddress> dst = internal::AddressOf(tb[RTA_DST], family);
  r.dst = IpPrefix(dst ? *dst : family == Family::kV6 ? IpAddress::V6({}) : IpAddress::V4({}), rtm->rtm_dst_len);
  r.scope = rtm->rtm_scope;
  r.table = static_cast<int>(tb[RTA_TABLE] != nullptr ? u32(tb[RTA_TABLE]) : rtm->rtm_table);
  r.priority = tb[RTA_PRIORITY] != nullptr ? u32(tb[RTA_PRIORITY]) : 0;
  r.protocol = rtm->rtm_protocol;
  r.type = rtm->rtm_type;
  r.src = internal::AddressOf(tb[RTA_PREFSRC], family);
  if (tb[RTA_METRICS] != nullptr) {
    std::array<nlattr*, RTAX_MAX + 1> metrics{};
    if (nla_parse_nested(metrics.data(), RTAX_MAX, tb[RTA_METRICS], nullptr) == 0) {
      if (metrics[RTAX_MTU] != nullptr) r.mtu = static_cast<int>(u32(metrics[RTAX_MTU]));
      if (metrics[RTAX_ADVMSS] != nullptr) r.advmss = static_cast<int>(u32(metrics[RTAX_ADVMSS]));
    }
  }
  std::vector<Nexthop> paths;
  unsigned single_flags = rtm->rtm_flags;
  if (tb[RTA_MULTIPATH] != nullptr) {
    const auto* nh = static_cast<const rtnexthop*>(nla_data(tb[RTA_MULTIPATH]));
    int left = nla_len(tb[RTA_MULTIPATH]);
    while (left >= static_cast<int>(sizeof(rtnexthop)) && nh->rtnh_len >= sizeof(rtnexthop) &&
           nh->rtnh_len <= left) {
      Nexthop p{.ifindex = nh->rtnh_ifindex, .weight = nh->rtnh_hops + 1};
      std::array<nlattr*, RTA_MAX + 1> ntb{};
      // A path's own attributes (RTA_GATEWAY) follow its rtnexthop.
      auto* attrs = reinterpret_cast<nlattr*>(RTNH_DATA(nh));
      if (nla_parse(ntb.data(), RTA_MAX, attrs, nh->rtnh_len - static_cast<int>(RTNH_LENGTH(0)), nullptr) == 0) {
        p.gw = internal::AddressOf(ntb[RTA_GATEWAY], family);
      }
      single_flags = nh->rtnh_flags;
      paths.push_back(p);
      left -= RTNH_ALIGN(nh->rtnh_len);
      nh = RTNH_NEXT(nh);
    }
  } else if (tb[RTA_OIF] != nullptr || tb[RTA_GATEWAY] != nullptr) {
    paths.push_back({.gw = internal::AddressOf(tb[RTA_GATEWAY], family),
                     .ifindex = tb[RTA_OIF] != nullptr ? static_cast<int>(u32(tb[RTA_OIF])) : 0,
                     .weight = 1});
  }
  if (paths.size() == 1) {
    r.gw = paths[0].gw;
    r.ifindex = paths[0].ifindex;
    r.onlink = (single_flags & RTNH_F_ONLINK) != 0;
  } else {
    r.multipath = std::move(paths);
  }
  return r;
}

}  // namespace

namespace {

std::string Describe(const RouteSpec& route, const std::function<std::string(int)>& dev) {
  auto device = [&](int ifindex) { return dev ? dev(ifindex) : absl::StrCat("#", ifindex); };
  const RouteSpec& r = route;
  std::string s = r.dst.Network().ToString();
  if (r.gw) absl::StrAppend(&s, " via ", r.gw->ToString());
  if (r.ifindex != 0) absl::StrAppend(&s, " dev ", device(r.ifindex));
  for (const Nexthop& p : r.multipath) {
    absl::StrAppend(&s, " nexthop");
    if (p.gw) absl::StrAppend(&s, " via ", p.gw->ToString());
    if (p.ifindex != 0) absl::StrAppend(&s, " dev ", device(p.ifindex));
    if (p.weight != 1) absl::StrAppend(&s, " weight ", p.weight);
  }
  if (r.table != 0 && r.table != RT_TABLE_MAIN) absl::StrAppend(&s, " table ", r.table);
  if (r.scope) absl::StrAppend(&s, " scope ", *r.scope);
  if (r.priority) absl::StrAppend(&s, " metric ", *r.priority);
  if (r.onlink) absl::StrAppend(&s, " onlink");
  return s;
}

}  // namespace

std::string RouteSpec::ToString() const { return Describe(*this, nullptr); }

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
  rtmsg rtm{};
  rtm.rtm_family = static_cast<unsigned char>(filter.family ? AfOf(*filter.family) : AF_UNSPEC);
  ASSIGN_OR_RETURN(NlMsgPtr msg, internal::RequestWith(RTM_GETROUTE, 0, rtm, what));
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
    std::optional<RouteSpec> parsed = RouteSpecOf(h);
    if (!parsed) return true;
    RouteSpec& r = *parsed;
    if (filter.table && r.table != *filter.table) return true;
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
  rtmsg rtm{};
  rtm.rtm_family = static_cast<unsigned char>(AfOf(dst.family()));
  rtm.rtm_dst_len = static_cast<unsigned char>(dst.bit_length());
  ASSIGN_OR_RETURN(NlMsgPtr msg, internal::RequestWith(RTM_GETROUTE, 0, rtm, what));
  if (int rc = PutAddress(msg.get(), RTA_DST, dst); rc < 0) return NlError(rc, what);
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

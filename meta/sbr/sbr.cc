#include "sbr.h"

#include <linux/rtnetlink.h>

#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cni/base/error.h"
#include "cni/base/fs.h"
#include "cni/base/status_macros.h"
#include "cni/net/addr.h"
#include "cni/net/link.h"
#include "cni/net/netlink.h"
#include "cni/net/netns.h"
#include "cni/net/route.h"
#include "cni/net/rule.h"
#include "cni/plugin/locked_netns.h"

namespace cni::sbr {
namespace {

absl::Status Invalid(absl::string_view msg) { return InvalidConfig("sbr", msg); }

absl::Status Mismatch(absl::string_view msg) {
  return Error(ErrorCode::kInternal, absl::StrCat("sbr: ", msg));
}

// ADD and CHECK refuse an unchained call: the prevResult they pass on.
absl::StatusOr<Result> PrevResult(const Config& c) {
  RETURN_IF_ERROR(c.prev_result, "sbr: could not parse prevResult");
  if (!*c.prev_result) return Invalid("must be called as a chained plugin (prevResult is required)");
  return **c.prev_result;
}

// The addresses ADD and CHECK work on: at least one.
absl::StatusOr<std::vector<IpConfig>> RequiredAddresses(const Result& prev, absl::string_view ifname) {
  std::vector<IpConfig> ips = AddressesOf(prev, ifname);
  if (ips.empty()) {
    return Invalid(absl::StrCat("prevResult has no IP address of interface \"", ifname, "\""));
  }
  return ips;
}

net::RuleSpec SourceRule(const net::IpAddress& ip, uint32_t table) {
  return {.family = ip.family(), .src = net::IpPrefix::Host(ip), .table = static_cast<int>(table)};
}

net::IpPrefix DefaultOf(net::Family family) {
  return family == net::Family::kV4 ? net::IpPrefix(net::IpAddress::V4({}), 0)
                                    : net::IpPrefix(net::IpAddress::V6({}), 0);
}

// Upstream's test for "this route belongs to this address": its preferred
// source or its gateway lies in the address's subnet, or it has neither (a
// device route, such as an IPv6 subnet route).
bool RouteOfAddress(const net::RouteSpec& r, const net::IpPrefix& address) {
  return (r.src && address.Contains(*r.src)) || (r.gw && address.Contains(*r.gw)) || (!r.src && !r.gw);
}

// The steps ADD has taken, undone in reverse order when it fails.
class Undo {
 public:
  explicit Undo(net::NetlinkSocket& sock) : sock_(sock) {}
  Undo(const Undo&) = delete;
  Undo& operator=(const Undo&) = delete;
  ~Undo() {
    for (auto it = steps_.rbegin(); it != steps_.rend(); ++it) (*it)();
  }
  void Cancel() { steps_.clear(); }

  void RuleAdded(net::RuleSpec rule) {
    steps_.push_back([this, rule] { (void)net::DeleteRule(sock_, rule); });
  }
  void RouteAdded(net::RouteSpec route) {
    steps_.push_back([this, route] { (void)net::DeleteRoute(sock_, route); });
  }
  // A main-table route that was deleted or replaced: it comes back (next to
  // any other route to the same destination, as it was).
  void RouteRemoved(net::RouteSpec route) {
    steps_.push_back([this, route] { (void)net::AddRouteAlongside(sock_, route); });
  }

 private:
  net::NetlinkSocket& sock_;
  std::vector<std::function<void()>> steps_;
};

// The first table from `candidate` on that no rule and no route uses, and
// not `taken` by an earlier address of this call.
uint32_t FreeTable(const std::set<uint32_t>& used, uint32_t candidate) {
  while (used.count(candidate) != 0) ++candidate;
  return candidate;
}

// `table` set: one rule per address, nothing else (the routes are the IPAM's).
absl::Status AddRules(net::NetlinkSocket& sock, const std::vector<IpConfig>& ips, uint32_t table, Undo& undo) {
  for (const IpConfig& ip : ips) {
    net::RuleSpec rule = SourceRule(ip.address.addr(), table);
    RETURN_IF_ERROR(net::AddRule(sock, rule), "sbr");
    undo.RuleAdded(rule);
  }
  return absl::OkStatus();
}

// No `table`: a table per address, its rule, its default route and copies of
// the link's routes; then the link's routes leave the main table.
absl::Status AddRoutes(net::NetlinkSocket& sock, const CmdArgs& args, const Config& c,
                       const std::vector<IpConfig>& ips, Undo& undo) {
  ASSIGN_OR_RETURN(std::vector<net::RuleSpec> rules, net::ListRules(sock), "sbr");
  ASSIGN_OR_RETURN(std::vector<net::RouteSpec> all, net::ListRoutes(sock, {.table = std::nullopt}), "sbr");
  std::set<uint32_t> used;
  for (const net::RuleSpec& r : rules) used.insert(static_cast<uint32_t>(r.table));
  for (const net::RouteSpec& r : all) used.insert(static_cast<uint32_t>(r.table));

  ASSIGN_OR_RETURN(net::LinkInfo link, net::LinkByName(sock, args.ifname), "sbr");
  ASSIGN_OR_RETURN(std::vector<net::RouteSpec> main_routes,
                   net::ListRoutes(sock, {.table = RT_TABLE_MAIN, .ifindex = link.index}), "sbr");
  std::vector<net::RouteSpec> routes = net::PathsThrough(main_routes, link.index);

  uint32_t table = kFirstTable;
  for (const IpConfig& ip : ips) {
    table = FreeTable(used, table);
    used.insert(table);
    net::RuleSpec rule = SourceRule(ip.address.addr(), table);
    RETURN_IF_ERROR(net::AddRule(sock, rule), "sbr");
    undo.RuleAdded(rule);

    const std::optional<net::IpAddress>& fixed = c.Gateway(ip.address.family());
    std::optional<net::IpAddress> gateway = fixed ? fixed : ip.gateway;
    if (gateway) {
      net::RouteSpec def{.dst = DefaultOf(ip.address.family()), .gw = *gateway, .ifindex = link.index,
                         .table = static_cast<int>(table)};
      RETURN_IF_ERROR(net::AddRoute(sock, def), "sbr: adding the default route of table ", table);
      undo.RouteAdded(def);
    }
    // Copies, not moves: two addresses of one subnet both need the subnet's
    // routes. A copy replaces the default route added just above when the
    // main table had the same one.
    for (const net::RouteSpec& r : routes) {
      if (!RouteOfAddress(r, ip.address)) continue;
      // A static gateway is the table's default route: the main table's
      // default route does not replace it (upstream's copy did).
      if (fixed && r.dst.len() == 0) continue;
      net::RouteSpec copy = r;
      copy.table = static_cast<int>(table);
      RETURN_IF_ERROR(net::ReplaceRoute(sock, copy), "sbr: copying a route to table ", table);
      undo.RouteAdded(copy);
    }
  }

  if (c.add_source_hints) {
    // Subnet routes stay in the main table with the address as preferred
    // source, so destination-based routing still picks this link for its
    // subnets; every other route of the link leaves the main table.
    for (const IpConfig& ip : ips) {
      net::RouteSpec hint{.dst = ip.address.Network(), .ifindex = link.index, .scope = RT_SCOPE_LINK,
                          .table = RT_TABLE_MAIN, .src = ip.address.addr(), .protocol = RTPROT_BOOT};
      RETURN_IF_ERROR(net::ReplaceRoute(sock, hint), "sbr: adding a source hint");
      undo.RouteAdded(hint);
    }
    for (const net::RouteSpec& r : routes) {
      if (r.scope == RT_SCOPE_LINK) continue;
      absl::Status st = net::DeleteRoute(sock, r);
      if (absl::IsNotFound(st)) continue;
      RETURN_IF_ERROR(st, "sbr");
      undo.RouteRemoved(r);
    }
    // A subnet route the hint replaced comes back on failure too.
    for (const net::RouteSpec& r : routes) {
      if (r.scope == RT_SCOPE_LINK) undo.RouteRemoved(r);
    }
  } else {
    for (const net::RouteSpec& r : routes) {
      RETURN_IF_ERROR(net::DeleteRoute(sock, r), "sbr");
      undo.RouteRemoved(r);
    }
  }
  return absl::OkStatus();
}

// The addresses DEL looks for in rules: those on the link, and prevResult's
// for the interface (the only record left when the link is gone).
std::set<net::IpAddress> DelAddresses(net::NetlinkSocket& sock, const CmdArgs& args, const Config& c,
                                      const std::optional<net::LinkInfo>& link, std::vector<std::string>& errors) {
  std::set<net::IpAddress> out;
  if (link) {
    absl::StatusOr<std::vector<net::AddressInfo>> addrs = net::ListAddresses(sock, link->index);
    if (addrs.ok()) {
      for (const net::AddressInfo& a : *addrs) out.insert(a.prefix.addr());
    } else {
      errors.emplace_back(addrs.status().message());
    }
  }
  if (c.prev_result.ok() && *c.prev_result) {
    for (const IpConfig& ip : AddressesOf(**c.prev_result, args.ifname)) out.insert(ip.address.addr());
  }
  return out;
}

absl::Status DelHere(net::NetlinkSocket& sock, const CmdArgs& args, const Config& c) {
  std::vector<std::string> errors;
  absl::StatusOr<net::LinkInfo> found = net::LinkByName(sock, args.ifname);
  if (!found.ok() && !absl::IsNotFound(found.status())) return found.status();
  std::optional<net::LinkInfo> link;
  if (found.ok()) link = *found;

  std::set<net::IpAddress> addresses = DelAddresses(sock, args, c, link, errors);
  ASSIGN_OR_RETURN(std::vector<net::RuleSpec> rules, net::ListRules(sock), "sbr");
  std::set<int> tables;
  for (const net::RuleSpec& r : rules) {
    if (!r.src || r.src->len() != r.src->addr().bit_length() || r.dst) continue;
    if (c.table && r.table != static_cast<int>(*c.table)) continue;
    if (addresses.count(r.src->addr()) == 0) continue;
    absl::Status st = net::DeleteRule(sock, r);
    if (!st.ok() && !absl::IsNotFound(st)) errors.emplace_back(st.message());
    tables.insert(r.table);
  }
  // The routes ADD put into its tables (a fixed table's routes are not ours).
  if (!c.table && link && !tables.empty()) {
    absl::StatusOr<std::vector<net::RouteSpec>> routes = net::ListRoutes(sock, {.table = std::nullopt});
    if (!routes.ok()) {
      errors.emplace_back(routes.status().message());
    } else {
      for (const net::RouteSpec& r : net::PathsThrough(*routes, link->index)) {
        if (tables.count(r.table) == 0 || r.table == RT_TABLE_MAIN || r.table == RT_TABLE_LOCAL) continue;
        absl::Status st = net::DeleteRoute(sock, r);
        if (!st.ok() && !absl::IsNotFound(st)) errors.emplace_back(st.message());
      }
    }
  }
  if (errors.empty()) return absl::OkStatus();
  return Error(ErrorCode::kInternal, absl::StrCat("sbr: ", absl::StrJoin(errors, "; ")));
}

absl::Status CheckHere(net::NetlinkSocket& sock, const CmdArgs& args, const Config& c,
                       const std::vector<IpConfig>& ips) {
  ASSIGN_OR_RETURN(net::LinkInfo link, net::LinkByName(sock, args.ifname), "sbr");
  ASSIGN_OR_RETURN(std::vector<net::RuleSpec> rules, net::ListRules(sock), "sbr");
  ASSIGN_OR_RETURN(std::vector<net::RouteSpec> routes, net::ListRoutes(sock, {.table = std::nullopt}), "sbr");
  std::vector<net::RouteSpec> paths = net::PathsThrough(routes, link.index);
  for (const IpConfig& ip : ips) {
    net::IpPrefix src = net::IpPrefix::Host(ip.address.addr());
    const net::RuleSpec* rule = nullptr;
    for (const net::RuleSpec& r : rules) {
      if (r.src == src && !r.dst && (!c.table || r.table == static_cast<int>(*c.table))) {
        rule = &r;
        break;
      }
    }
    if (rule == nullptr) return Mismatch(absl::StrCat("no rule \"from ", src.ToString(), "\""));
    if (c.table) continue;
    std::optional<net::IpAddress> gateway = c.Gateway(ip.address.family());
    if (!gateway) gateway = ip.gateway;
    bool any = false, has_default = false;
    for (const net::RouteSpec& r : paths) {
      if (r.table != rule->table || r.dst.family() != ip.address.family()) continue;
      any = true;
      has_default = has_default || (r.dst.len() == 0 && r.gw == gateway);
    }
    if (!any) {
      return Mismatch(absl::StrCat("table ", rule->table, " has no route through \"", args.ifname, "\""));
    }
    if (gateway && !has_default) {
      return Mismatch(absl::StrCat("table ", rule->table, " has no default route via ", gateway->ToString()));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Result> Add(const CmdArgs& args, const Config& config) {
  ASSIGN_OR_RETURN(Result result, PrevResult(config));
  ASSIGN_OR_RETURN(std::vector<IpConfig> ips, RequiredAddresses(result, args.ifname));
  ASSIGN_OR_RETURN(net::Netns ns, net::Netns::Open(args.netns));
  // One sbr at a time per container: two interfaces' ADDs must not pick the
  // same free table.
  ASSIGN_OR_RETURN(UniqueFd lock, LockFile(args.netns), "sbr");
  ASSIGN_OR_RETURN(net::NetlinkSocket sock, net::NetlinkSocket::OpenIn(ns));
  Undo undo(sock);
  if (config.table) {
    RETURN_IF_ERROR(AddRules(sock, ips, *config.table, undo));
  } else {
    RETURN_IF_ERROR(AddRoutes(sock, args, config, ips, undo));
  }
  undo.Cancel();
  result.cni_version = args.conf.cni_version;
  return result;
}

absl::Status Del(const CmdArgs& args, const Config& config) {
  return locked_netns::Teardown(args, "sbr", [&](net::NetlinkSocket& sock) { return DelHere(sock, args, config); });
}

absl::Status Check(const CmdArgs& args, const Config& config) {
  ASSIGN_OR_RETURN(Result prev, PrevResult(config));
  ASSIGN_OR_RETURN(std::vector<IpConfig> ips, RequiredAddresses(prev, args.ifname));
  ASSIGN_OR_RETURN(net::Netns ns, net::Netns::Open(args.netns));
  ASSIGN_OR_RETURN(net::NetlinkSocket sock, net::NetlinkSocket::OpenIn(ns));
  return CheckHere(sock, args, config, ips);
}

// Chained and stateless: nothing to collect (GC), nothing to report beyond a
// valid configuration (STATUS), as upstream.
// DEL reads only what the teardown needs (TeardownConfig).
PluginFuncs Funcs() { return TypedWithTeardown<Config, TeardownConfig>({.add = Add, .check = Check}, {.del = Del}); }

}  // namespace cni::sbr

#include "vrf.h"

#include <linux/if_addr.h>
#include <linux/rtnetlink.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/fs.h"
#include "cni/base/quoted.h"
#include "cni/base/status_macros.h"
#include "cni/net/addr.h"
#include "cni/net/link.h"
#include "cni/net/netlink.h"
#include "cni/net/netns.h"
#include "cni/net/route.h"
#include "cni/net/vrf.h"
#include "cni/plugin/locked_netns.h"
#include "cni/protocol/version.h"

namespace cni::vrf {
namespace {

absl::Status Failed(absl::string_view msg) { return Error(ErrorCode::kInternal, absl::StrCat("vrf: ", msg)); }

// ADD and CHECK refuse an unchained call: the prevResult they pass on.
absl::StatusOr<Result> PrevResult(const Config& c) {
  RETURN_IF_ERROR(c.prev_result, "vrf: could not parse prevResult");
  if (!*c.prev_result) {
    return Error(ErrorCode::kInvalidNetworkConfig, "vrf: missing prevResult from earlier plugin");
  }
  return **c.prev_result;
}

// A VRF device: its link and its table.
struct Vrf {
  net::LinkInfo link;
  uint32_t table = 0;
};

// The VRF called `name`: nullopt when there is no such link; an error when
// the link is not a VRF.
absl::StatusOr<std::optional<Vrf>> FindVrf(net::NetlinkSocket& sock, const std::string& name) {
  absl::StatusOr<net::LinkInfo> link = net::LinkByName(sock, name);
  if (absl::IsNotFound(link.status())) return std::nullopt;
  RETURN_IF_ERROR(link, "vrf");
  if (link->kind != "vrf") return Failed(absl::StrCat("link ", Quoted(name), " is not a VRF"));
  ASSIGN_OR_RETURN(uint32_t table, net::VrfTableOf(sock, *link), "vrf");
  return Vrf{*link, table};
}

// The first table from 1 on that no VRF in the namespace uses (upstream's choice).
absl::StatusOr<uint32_t> FreeTable(const std::vector<net::LinkInfo>& links, net::NetlinkSocket& sock) {
  std::set<uint32_t> taken;
  for (const net::LinkInfo& l : links) {
    if (l.kind != "vrf") continue;
    absl::StatusOr<uint32_t> t = net::VrfTableOf(sock, l);
    if (t.ok()) taken.insert(*t);
  }
  uint32_t table = 1;
  while (taken.count(table) != 0) ++table;
  return table;
}

// The links enslaved to link `master`.
absl::StatusOr<std::vector<net::LinkInfo>> Members(net::NetlinkSocket& sock, int master) {
  ASSIGN_OR_RETURN(std::vector<net::LinkInfo> links, net::ListLinks(sock), "vrf");
  std::vector<net::LinkInfo> out;
  for (net::LinkInfo& l : links) {
    if (l.master == master) out.push_back(std::move(l));
  }
  return out;
}

// The VRF `config` names, made (and brought up) when missing; `created` tells
// whether this call made it. A VRF with another table than `table` (when set)
// is refused.
absl::StatusOr<Vrf> FindOrCreateVrf(net::NetlinkSocket& sock, const Config& c, bool& created) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    ASSIGN_OR_RETURN(std::optional<Vrf> found, FindVrf(sock, c.vrf_name));
    if (found) {
      if (c.table != 0 && found->table != c.table) {
        return Error(ErrorCode::kInvalidNetworkConfig,
                     absl::StrCat("vrf: VRF ", Quoted(c.vrf_name), " already exists with routing table ",
                                  found->table, ", not ", c.table));
      }
      return *found;
    }
    uint32_t table = c.table;
    if (table == 0) {
      ASSIGN_OR_RETURN(std::vector<net::LinkInfo> links, net::ListLinks(sock), "vrf");
      ASSIGN_OR_RETURN(table, FreeTable(links, sock));
    }
    absl::Status st = net::CreateVrf(sock, c.vrf_name, table);
    // Another ADD made it meanwhile: use that one.
    if (absl::IsAlreadyExists(st)) continue;
    RETURN_IF_ERROR(st, "vrf");
    ASSIGN_OR_RETURN(net::LinkInfo link, net::LinkByName(sock, c.vrf_name), "vrf");
    created = true;
    if (absl::Status up = net::SetLinkUp(sock, link); !up.ok()) {
      (void)net::DeleteLink(sock, link);
      created = false;
      return Annotate(up, "vrf");
    }
    return Vrf{link, table};
  }
  return Failed(absl::StrCat("VRF ", Quoted(c.vrf_name), " keeps appearing and disappearing"));
}

// The global (scope universe) IPv6 addresses of `link`: the kernel drops them
// when enslaving cycles the link, unless keep_addr_on_down is set.
absl::StatusOr<std::vector<net::AddressInfo>> GlobalV6(net::NetlinkSocket& sock, int ifindex) {
  ASSIGN_OR_RETURN(std::vector<net::AddressInfo> all, net::ListAddresses(sock, ifindex, net::Family::kV6),
                   "vrf");
  std::vector<net::AddressInfo> out;
  for (net::AddressInfo& a : all) {
    if (a.scope == RT_SCOPE_UNIVERSE) out.push_back(std::move(a));
  }
  return out;
}

bool Has(const std::vector<net::AddressInfo>& list, const net::IpPrefix& p) {
  for (const net::AddressInfo& a : list) {
    if (a.prefix == p) return true;
  }
  return false;
}

// Waits (up to ~2.5 s, as upstream) for the kernel to put the local route of
// a re-added IPv6 address into the VRF's table: routes through the address's
// subnet can only be re-added after it.
absl::Status WaitForLocalRoute(net::NetlinkSocket& sock, const net::IpAddress& ip, int ifindex, uint32_t table) {
  net::IpPrefix host = net::IpPrefix::Host(ip);
  auto delay = std::chrono::milliseconds(10);
  for (int attempt = 0;; ++attempt) {
    ASSIGN_OR_RETURN(std::vector<net::RouteSpec> routes,
                     net::ListRoutes(sock, {.family = net::Family::kV6, .table = static_cast<int>(table),
                                            .ifindex = ifindex}),
                     "vrf");
    for (const net::RouteSpec& r : routes) {
      if (r.dst == host) return absl::OkStatus();
    }
    if (attempt == 8) {
      return Failed(absl::StrCat("no local route for ", ip.ToString(), " in table ", table));
    }
    std::this_thread::sleep_for(delay);
    delay *= 2;
  }
}

// What enslaving changes, saved before, put back by Restore when ADD fails
// after enslaving.
struct Saved {
  std::vector<net::AddressInfo> v6;     // global IPv6 addresses
  std::vector<net::RouteSpec> routes;   // non-local routes through the link, main table
};

// Releases `link` from its VRF and puts its addresses and main-table routes
// back (releasing cycles the link again, which drops them once more).
void Restore(net::NetlinkSocket& sock, const net::LinkInfo& link, const Saved& saved) {
  (void)net::SetLinkNoMaster(sock, link);
  for (const net::AddressInfo& a : saved.v6) {
    (void)net::AddAddress(sock, link.index, a.prefix, {.flags = a.flags & IFA_F_NODAD});
  }
  for (const net::RouteSpec& r : saved.routes) (void)net::AddRouteAlongside(sock, r);
}

absl::Status AddHere(net::NetlinkSocket& sock, const CmdArgs& args, const Config& c) {
  bool created = false;
  ASSIGN_OR_RETURN(Vrf vrf, FindOrCreateVrf(sock, c, created));
  absl::Cleanup drop_vrf = [&] {
    if (created) (void)net::DeleteLink(sock, vrf.link);
  };

  ASSIGN_OR_RETURN(net::LinkInfo link, net::LinkByName(sock, args.ifname), "vrf");
  if (link.master != 0) {
    absl::StatusOr<net::LinkInfo> master = net::LinkByIndex(sock, link.master);
    return Failed(absl::StrCat("interface ", Quoted(args.ifname), " has already a master set",
                               master.ok() ? absl::StrCat(": ", master->name) : std::string()));
  }
  Saved saved;
  ASSIGN_OR_RETURN(saved.v6, GlobalV6(sock, link.index));
  // The kernel's own routes (local, connected, IPv6 prefix and link-local:
  // "proto kernel") come back by themselves, in the VRF's table; the others
  // must be re-added there, device routes (scope link) before the routes
  // whose gateways they reach.
  ASSIGN_OR_RETURN(std::vector<net::RouteSpec> main,
                   net::ListRoutes(sock, {.table = RT_TABLE_MAIN, .ifindex = link.index}), "vrf");
  for (net::RouteSpec& r : net::PathsThrough(main, link.index)) {
    if (r.protocol != RTPROT_KERNEL) saved.routes.push_back(std::move(r));
  }
  std::stable_sort(saved.routes.begin(), saved.routes.end(), [](const net::RouteSpec& a, const net::RouteSpec& b) {
    return a.scope.value_or(RT_SCOPE_UNIVERSE) > b.scope.value_or(RT_SCOPE_UNIVERSE);
  });

  RETURN_IF_ERROR(net::SetLinkMaster(sock, link, vrf.link.index), "vrf: enslaving ", Quoted(args.ifname),
                  " to ", Quoted(c.vrf_name));
  absl::Cleanup release = [&] { Restore(sock, link, saved); };

  ASSIGN_OR_RETURN(std::vector<net::AddressInfo> after, GlobalV6(sock, link.index));
  for (const net::AddressInfo& a : saved.v6) {
    if (Has(after, a.prefix)) continue;
    RETURN_IF_ERROR(net::AddAddress(sock, link.index, a.prefix, {.flags = a.flags & IFA_F_NODAD}),
                    "vrf: restoring an address");
    RETURN_IF_ERROR(WaitForLocalRoute(sock, a.prefix.addr(), link.index, vrf.table));
  }
  for (const net::RouteSpec& r : saved.routes) {
    net::RouteSpec moved = r;
    moved.table = static_cast<int>(vrf.table);
    RETURN_IF_ERROR(net::ReplaceRoute(sock, moved), "vrf: re-adding a route in table ", vrf.table);
  }
  std::move(release).Cancel();
  std::move(drop_vrf).Cancel();
  return absl::OkStatus();
}

absl::Status DelHere(net::NetlinkSocket& sock, const CmdArgs& args, const Config& c) {
  absl::StatusOr<net::LinkInfo> vrf = net::LinkByName(sock, c.vrf_name);
  if (absl::IsNotFound(vrf.status())) return absl::OkStatus();
  RETURN_IF_ERROR(vrf, "vrf");
  // A link of that name that is not a VRF is not ours: nothing to undo.
  if (vrf->kind != "vrf") return absl::OkStatus();
  absl::StatusOr<net::LinkInfo> link = net::LinkByName(sock, args.ifname);
  if (!link.ok() && !absl::IsNotFound(link.status())) return Annotate(link.status(), "vrf");
  if (link.ok() && link->master == vrf->index) RETURN_IF_ERROR(net::SetLinkNoMaster(sock, *link), "vrf");
  ASSIGN_OR_RETURN(std::vector<net::LinkInfo> members, Members(sock, vrf->index));
  if (!members.empty()) return absl::OkStatus();
  absl::Status st = net::DeleteLink(sock, *vrf);
  if (absl::IsNotFound(st)) return absl::OkStatus();
  return Annotate(st, "vrf");
}

absl::Status CheckHere(net::NetlinkSocket& sock, const CmdArgs& args, const Config& c) {
  ASSIGN_OR_RETURN(std::optional<Vrf> vrf, FindVrf(sock, c.vrf_name));
  if (!vrf) return Failed(absl::StrCat("VRF ", Quoted(c.vrf_name), " not found"));
  if (c.table != 0 && vrf->table != c.table) {
    return Failed(absl::StrCat("VRF ", Quoted(c.vrf_name), " has routing table ", vrf->table, ", not ", c.table));
  }
  ASSIGN_OR_RETURN(net::LinkInfo link, net::LinkByName(sock, args.ifname), "vrf");
  if (link.master != vrf->link.index) {
    return Failed(absl::StrCat("failed to find ", args.ifname, " associated to vrf ", c.vrf_name));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Result> Add(const CmdArgs& args, const Config& config) {
  ASSIGN_OR_RETURN(Result result, PrevResult(config));
  ASSIGN_OR_RETURN(net::Netns ns, net::Netns::Open(args.netns));
  // One vrf call at a time per container: two ADDs must not pick the same
  // free table, nor a DEL delete a VRF an ADD is about to enslave to.
  ASSIGN_OR_RETURN(UniqueFd lock, LockFile(args.netns), "vrf");
  ASSIGN_OR_RETURN(net::NetlinkSocket sock, net::NetlinkSocket::OpenIn(ns));
  RETURN_IF_ERROR(AddHere(sock, args, config));
  result.cni_version = args.conf.cni_version;
  return result;
}

absl::Status Del(const CmdArgs& args, const Config& config) {
  return locked_netns::Teardown(args, "vrf", [&](net::NetlinkSocket& sock) { return DelHere(sock, args, config); });
}

absl::Status Check(const CmdArgs& args, const Config& config) {
  RETURN_IF_ERROR(PrevResult(config));
  ASSIGN_OR_RETURN(net::Netns ns, net::Netns::Open(args.netns));
  ASSIGN_OR_RETURN(net::NetlinkSocket sock, net::NetlinkSocket::OpenIn(ns));
  return CheckHere(sock, args, config);
}

std::vector<std::string> Versions() { return VersionsFrom("0.3.1"); }

// Chained and stateless: nothing to collect (GC), nothing to report beyond a
// valid configuration (STATUS), as upstream.
PluginFuncs Funcs() { return Typed<Config>({.add = Add, .del = Del, .check = Check}); }

}  // namespace cni::vrf

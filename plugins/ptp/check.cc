// CHECK: the state ADD created is still there, as prevResult describes it.
// Upstream checks the container interface, its addresses and the IPAM routes;
// we also check ptp's own routes and the host side (gateway address, host
// route), since a container without them is just as broken.
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "cni/net/addr.h"
#include "cni/net/link.h"
#include "cni/net/netlink.h"
#include "cni/net/netns.h"
#include "cni/net/route.h"
#include "cni/plugin/check.h"
#include "cni/protocol/invoke.h"
#include "config.h"
#include "ptp.h"

namespace cni::ptp {
namespace {

// CHECK failures carry no particular CNI code (upstream reports them as 999).
absl::Status Failed(absl::string_view msg) {
  return absl::FailedPreconditionError(absl::StrCat("ptp: ", msg));
}

// The interface, found by the rules of the spec: the container end is named
// CNI_IFNAME and lives in CNI_NETNS; the host end has no sandbox.
std::optional<int> FindInterface(const Result& prev, absl::string_view name,
                                 absl::string_view sandbox) {
  for (size_t i = 0; i < prev.interfaces.size(); ++i) {
    if (prev.interfaces[i].name == name && prev.interfaces[i].sandbox == sandbox) {
      return static_cast<int>(i);
    }
  }
  return std::nullopt;
}

std::optional<int> FindHostInterface(const Result& prev) {
  for (size_t i = 0; i < prev.interfaces.size(); ++i) {
    if (prev.interfaces[i].sandbox.empty()) return static_cast<int>(i);
  }
  return std::nullopt;
}

// The link exists, is a veth and (when prevResult names one) has its MAC.
absl::StatusOr<net::LinkInfo> CheckVeth(net::NetlinkSocket& sock, const Interface& want,
                                        absl::string_view where) {
  absl::StatusOr<net::LinkInfo> link = net::LinkByName(sock, want.name);
  if (absl::IsNotFound(link.status())) {
    return Failed(absl::StrCat(where, " interface \"", want.name, "\" not found"));
  }
  RETURN_IF_ERROR(link);
  if (link->kind != "veth") {
    return Failed(absl::StrCat(where, " interface \"", want.name, "\" is of type \"", link->kind,
                               "\", not veth"));
  }
  if (!want.mac.empty() && absl::AsciiStrToLower(want.mac) != link->mac.ToString()) {
    return Failed(absl::StrCat(where, " interface \"", want.name, "\" has MAC ",
                               link->mac.ToString(), ", prevResult says ", want.mac));
  }
  return *link;
}

absl::Status CheckAddress(net::NetlinkSocket& sock, const net::LinkInfo& link,
                          const net::IpPrefix& want, absl::string_view where) {
  ASSIGN_OR_RETURN(std::vector<net::AddressInfo> addrs, net::ListAddresses(sock, link.index));
  for (const net::AddressInfo& a : addrs) {
    if (a.prefix == want) return absl::OkStatus();
  }
  return Failed(absl::StrCat("address ", want.ToString(), " is missing on ", where, " interface \"",
                             link.name, "\""));
}

// A route matches on destination (host bits ignored), and on gateway and
// output device when `want` names them.
bool RouteMatches(const net::RouteSpec& have, const net::RouteSpec& want) {
  return have.dst.Network() == want.dst.Network() && net::HasPath(have, want.gw, want.ifindex);
}

absl::Status CheckRoute(const std::vector<net::RouteSpec>& table, const net::RouteSpec& want,
                        absl::string_view dev, absl::string_view where) {
  for (const net::RouteSpec& have : table) {
    if (RouteMatches(have, want)) return absl::OkStatus();
  }
  std::string text = want.dst.Network().ToString();
  if (want.gw) absl::StrAppend(&text, " via ", want.gw->ToString());
  if (!dev.empty()) absl::StrAppend(&text, " dev ", dev);
  return Failed(absl::StrCat("route ", text, " is missing in the ", where, " namespace"));
}

// Container: the veth, its addresses, ptp's routes and the IPAM routes.
absl::Status CheckContainer(const net::Netns& ns, const Result& prev, int index) {
  ASSIGN_OR_RETURN(net::NetlinkSocket sock, net::NetlinkSocket::OpenIn(ns));
  ASSIGN_OR_RETURN(net::LinkInfo link, CheckVeth(sock, prev.interfaces[index], "container"));
  ASSIGN_OR_RETURN(std::vector<net::RouteSpec> table, net::ListRoutes(sock));
  for (const IpConfig& ip : prev.ips) {
    if (ip.interface && *ip.interface != index) continue;
    RETURN_IF_ERROR(CheckAddress(sock, link, ip.address, "container"));
    if (!ip.gateway) continue;  // not made by ptp's ADD; nothing more to expect
    for (const net::RouteSpec& r : ContainerRoutes(ip, link.index)) {
      RETURN_IF_ERROR(CheckRoute(table, r, link.name, "container"));
    }
  }
  for (const Route& r : prev.routes) {
    net::RouteSpec want_route;
    want_route.dst = r.dst;
    want_route.gw = r.gw;
    RETURN_IF_ERROR(CheckRoute(table, want_route, "", "container"));
  }
  return absl::OkStatus();
}

// Host: the veth, the gateway address on it and the host route to each
// container address.
absl::Status CheckHost(const Result& prev, int index) {
  ASSIGN_OR_RETURN(net::NetlinkSocket sock, net::NetlinkSocket::Open());
  ASSIGN_OR_RETURN(net::LinkInfo link, CheckVeth(sock, prev.interfaces[index], "host"));
  ASSIGN_OR_RETURN(std::vector<net::RouteSpec> table, net::ListRoutes(sock));
  for (const IpConfig& ip : prev.ips) {
    if (!ip.gateway) continue;
    RETURN_IF_ERROR(CheckAddress(sock, link, HostGatewayAddress(ip), "host"));
    RETURN_IF_ERROR(CheckRoute(table, HostRoute(ip, link.index), link.name, "host"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status Check(const CmdArgs& args, const Config& config) {
  RETURN_IF_ERROR(RequireSupported(config));
  ASSIGN_OR_RETURN(net::CheckStart start, net::StartCheck(args, config.ipam_type, "ptp"));
  const Result* prev = &start.prev;
  const net::Netns& container = start.container;

  std::optional<int> cindex = FindInterface(*prev, args.ifname, args.netns);
  if (!cindex) {
    return Failed(absl::StrCat("prevResult has no interface \"", args.ifname, "\" with sandbox \"",
                               args.netns, "\""));
  }
  RETURN_IF_ERROR(CheckContainer(container, *prev, *cindex));
  // A prevResult without the host end (trimmed by a runtime) checks the container only.
  if (std::optional<int> hindex = FindHostInterface(*prev)) return CheckHost(*prev, *hindex);
  return absl::OkStatus();
}

}  // namespace cni::ptp

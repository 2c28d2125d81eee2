// CHECK: the state ADD created is still there, as prevResult describes it.
// Upstream checks the container interface, its addresses and the IPAM routes;
// we also check ptp's own routes and the host side (gateway address, host
// route), since a container without them is just as broken.
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "cni/error.h"
#include "cni/invoke.h"
#include "cni/net/addr.h"
#include "cni/net/link.h"
#include "cni/net/netlink.h"
#include "cni/net/netns.h"
#include "cni/net/route.h"
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
  if (!link.ok()) return link.status();
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
  absl::StatusOr<std::vector<net::AddressInfo>> addrs = net::ListAddresses(sock, link.index);
  if (!addrs.ok()) return addrs.status();
  for (const net::AddressInfo& a : *addrs) {
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
  const Interface& want = prev.interfaces[index];
  absl::StatusOr<net::NetlinkSocket> sock = net::NetlinkSocket::OpenIn(ns);
  if (!sock.ok()) return sock.status();
  absl::StatusOr<net::LinkInfo> link = CheckVeth(*sock, want, "container");
  if (!link.ok()) return link.status();

  absl::StatusOr<std::vector<net::RouteSpec>> table = net::ListRoutes(*sock);
  if (!table.ok()) return table.status();
  for (const IpConfig& ip : prev.ips) {
    if (ip.interface && *ip.interface != index) continue;
    if (absl::Status st = CheckAddress(*sock, *link, ip.address, "container"); !st.ok()) return st;
    if (!ip.gateway) continue;  // not made by ptp's ADD; nothing more to expect
    for (const net::RouteSpec& r : ContainerRoutes(ip, link->index)) {
      if (absl::Status st = CheckRoute(*table, r, link->name, "container"); !st.ok()) return st;
    }
  }
  for (const Route& r : prev.routes) {
    net::RouteSpec want_route;
    want_route.dst = r.dst;
    want_route.gw = r.gw;
    if (absl::Status st = CheckRoute(*table, want_route, "", "container"); !st.ok()) return st;
  }
  return absl::OkStatus();
}

// Host: the veth, the gateway address on it and the host route to each
// container address.
absl::Status CheckHost(const Result& prev, int index) {
  absl::StatusOr<net::NetlinkSocket> sock = net::NetlinkSocket::Open();
  if (!sock.ok()) return sock.status();
  absl::StatusOr<net::LinkInfo> link = CheckVeth(*sock, prev.interfaces[index], "host");
  if (!link.ok()) return link.status();
  absl::StatusOr<std::vector<net::RouteSpec>> table = net::ListRoutes(*sock);
  if (!table.ok()) return table.status();
  for (const IpConfig& ip : prev.ips) {
    if (!ip.gateway) continue;
    if (absl::Status st = CheckAddress(*sock, *link, HostGatewayAddress(ip), "host"); !st.ok()) {
      return st;
    }
    absl::Status st = CheckRoute(*table, HostRoute(ip, link->index), link->name, "host");
    if (!st.ok()) return st;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status Check(const CmdArgs& args) {
  absl::StatusOr<Config> config = ParseConfig(args.conf);
  if (!config.ok()) return config.status();
  if (absl::Status st = RequireSupported(*config); !st.ok()) return st;
  absl::StatusOr<std::optional<Result>> prev = ParsePrevResult(args.conf);
  if (!prev.ok()) return prev.status();
  if (!*prev) return Error(ErrorCode::kInvalidNetworkConfig, "ptp: required prevResult missing");

  absl::StatusOr<net::Netns> container = net::Netns::Open(args.netns);
  if (!container.ok()) return container.status();
  if (absl::Status st = DelegateCheck(config->ipam_type, args); !st.ok()) return st;

  std::optional<int> cindex = FindInterface(**prev, args.ifname, args.netns);
  if (!cindex) {
    return Failed(absl::StrCat("prevResult has no interface \"", args.ifname, "\" with sandbox \"",
                               args.netns, "\""));
  }
  if (absl::Status st = CheckContainer(*container, **prev, *cindex); !st.ok()) return st;
  // A prevResult without the host end (trimmed by a runtime) checks the container only.
  if (std::optional<int> hindex = FindHostInterface(**prev)) return CheckHost(**prev, *hindex);
  return absl::OkStatus();
}

}  // namespace cni::ptp

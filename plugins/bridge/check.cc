// CHECK: the state ADD created is still there, as prevResult describes it.
// Upstream checks the bridge (type, MAC, promiscuous mode), the container
// veth, the host veth (peer of the container end, enslaved to the bridge),
// the container's addresses and the result's routes. We also check the port
// flags and the gateway address, since a container without them is broken too.
#include <optional>
#include <string>
#include <vector>

#include <linux/if.h>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "bridge.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "cni/net/addr.h"
#include "cni/net/bridge.h"
#include "cni/net/link.h"
#include "cni/net/netlink.h"
#include "cni/net/netns.h"
#include "cni/net/route.h"
#include "cni/plugin/check.h"
#include "cni/protocol/invoke.h"
#include "cni/protocol/skel.h"
#include "config.h"

namespace cni::bridge {
namespace {

// CHECK failures carry no particular CNI code (upstream reports them as 999).
absl::Status Failed(absl::string_view msg) {
  return absl::FailedPreconditionError(absl::StrCat("bridge: ", msg));
}

bool MacDiffers(const Interface& want, const net::LinkInfo& have) {
  return !want.mac.empty() && absl::AsciiStrToLower(want.mac) != have.mac.ToString();
}

absl::StatusOr<net::LinkInfo> CheckBridge(net::NetlinkSocket& sock, const Config& config,
                                          const Result& prev) {
  const Interface* want = nullptr;
  for (const Interface& i : prev.interfaces) {
    if (i.name == config.bridge && i.sandbox.empty()) want = &i;
  }
  if (want == nullptr) return Failed(absl::StrCat("prevResult has no bridge \"", config.bridge, "\""));
  absl::StatusOr<net::LinkInfo> br = net::LinkByName(sock, config.bridge);
  if (absl::IsNotFound(br.status())) {
    return Failed(absl::StrCat("bridge \"", config.bridge, "\" not found"));
  }
  RETURN_IF_ERROR(br);
  if (br->kind != "bridge") {
    return Failed(absl::StrCat("interface \"", config.bridge, "\" is not a bridge"));
  }
  if (MacDiffers(*want, *br)) {
    return Failed(absl::StrCat("bridge \"", config.bridge, "\" has MAC ", br->mac.ToString(),
                               ", prevResult says ", want->mac));
  }
  const bool promisc = (br->flags & IFF_PROMISC) != 0;
  if (promisc != config.promisc) {
    return Failed(absl::StrCat("bridge \"", config.bridge, "\" promiscuous mode is ",
                               promisc ? "on" : "off", ", the config wants it ",
                               config.promisc ? "on" : "off"));
  }
  return br;
}

// A route matches on destination (host bits ignored) and gateway if given, on
// any of its paths (IPv6 default routes of two networks are one multipath route).
bool HasRoute(const std::vector<net::RouteSpec>& table, const Route& want) {
  for (const net::RouteSpec& have : table) {
    if (have.dst.Network() == want.dst.Network() && net::HasPath(have, want.gw)) return true;
  }
  return false;
}

// The container veth (returned): its MAC, addresses and the result's routes.
absl::StatusOr<net::LinkInfo> CheckContainer(net::NetlinkSocket& sock, const CmdArgs& args,
                                             const Result& prev, int index) {
  const Interface& want = prev.interfaces[index];
  absl::StatusOr<net::LinkInfo> got = net::LinkByName(sock, args.ifname);
  if (absl::IsNotFound(got.status())) {
    return Failed(absl::StrCat("container interface \"", args.ifname, "\" not found"));
  }
  RETURN_IF_ERROR(got);
  const net::LinkInfo& link = *got;
  if (link.kind != "veth") {
    return Failed(absl::StrCat("container interface \"", args.ifname, "\" is not a veth"));
  }
  if (MacDiffers(want, link)) {
    return Failed(absl::StrCat("container interface \"", args.ifname, "\" has MAC ",
                               link.mac.ToString(), ", prevResult says ", want.mac));
  }
  ASSIGN_OR_RETURN(std::vector<net::AddressInfo> addrs, net::ListAddresses(sock, link.index));
  for (const IpConfig& ip : prev.ips) {
    if (ip.interface && *ip.interface != index) continue;
    bool found = false;
    for (const net::AddressInfo& a : addrs) found = found || a.prefix == ip.address;
    if (!found) {
      return Failed(absl::StrCat("address ", ip.address.ToString(),
                                 " is missing on container interface \"", args.ifname, "\""));
    }
  }
  ASSIGN_OR_RETURN(std::vector<net::RouteSpec> table, net::ListRoutes(sock));
  for (const Route& r : prev.routes) {
    if (!HasRoute(table, r)) {
      std::string text = r.dst.Network().ToString();
      if (r.gw) absl::StrAppend(&text, " via ", r.gw->ToString());
      return Failed(absl::StrCat("route ", text, " is missing in the container"));
    }
  }
  return link;
}

// The host veth: the container end's peer, enslaved to the bridge, with the
// port flags the config asks for.
absl::Status CheckHostVeth(net::NetlinkSocket& sock, const Config& config, const Result& prev,
                           const net::LinkInfo& br, int peer_index) {
  absl::StatusOr<net::LinkInfo> veth = net::LinkByIndex(sock, peer_index);
  if (!veth.ok()) {
    return Failed(absl::StrCat("the host end of the container veth was not found"));
  }
  bool listed = false;
  for (const Interface& i : prev.interfaces) {
    if (i.name != veth->name || !i.sandbox.empty()) continue;
    listed = true;
    if (MacDiffers(i, *veth)) {
      return Failed(absl::StrCat("host interface \"", veth->name, "\" has MAC ", veth->mac.ToString(),
                                 ", prevResult says ", i.mac));
    }
  }
  if (!listed) {
    return Failed(absl::StrCat("CNI veth created for bridge \"", config.bridge, "\" was not found (",
                               "the container's peer is \"", veth->name, "\")"));
  }
  if (veth->master != br.index) {
    return Failed(absl::StrCat("host interface \"", veth->name, "\" is not a port of bridge \"",
                               config.bridge, "\""));
  }
  ASSIGN_OR_RETURN(net::BridgePortInfo port, net::GetBridgePort(sock, *veth));
  if (port.hairpin != config.hairpin) {
    return Failed(absl::StrCat("hairpin mode of port \"", veth->name, "\" is ",
                               port.hairpin ? "on" : "off"));
  }
  if (port.isolated != config.port_isolation) {
    return Failed(absl::StrCat("isolation of port \"", veth->name, "\" is ",
                               port.isolated ? "on" : "off"));
  }
  return absl::OkStatus();
}

absl::Status CheckGatewayAddresses(net::NetlinkSocket& sock, const Config& config,
                                   const Result& prev, const net::LinkInfo& br) {
  if (!config.is_gateway) return absl::OkStatus();
  std::string name = br.name;
  int index = br.index;
  if (config.vlan != 0) {
    name = absl::StrCat(br.name, ".", config.vlan);
    absl::StatusOr<net::LinkInfo> l = net::LinkByName(sock, name);
    if (!l.ok()) return Failed(absl::StrCat("VLAN gateway interface \"", name, "\" not found"));
    index = l->index;
  }
  ASSIGN_OR_RETURN(std::vector<net::AddressInfo> addrs, net::ListAddresses(sock, index));
  for (const IpConfig& ip : prev.ips) {
    if (!ip.gateway) continue;
    net::IpPrefix want(*ip.gateway, ip.address.len());
    bool found = false;
    for (const net::AddressInfo& a : addrs) found = found || a.prefix == want;
    if (!found) {
      return Failed(absl::StrCat("gateway address ", want.ToString(), " is missing on \"", name, "\""));
    }
  }
  return absl::OkStatus();
}

// Which of prevResult's interfaces is the container's: CNI_IFNAME in CNI_NETNS.
absl::StatusOr<int> ContainerInterfaceIndex(const CmdArgs& args, const Result& prev) {
  for (size_t i = 0; i < prev.interfaces.size(); ++i) {
    const Interface& itf = prev.interfaces[i];
    if (itf.name == args.ifname && itf.sandbox == args.netns) return static_cast<int>(i);
  }
  return Failed(absl::StrCat("prevResult has no interface \"", args.ifname, "\" with sandbox \"",
                             args.netns, "\""));
}

}  // namespace

absl::Status Check(const CmdArgs& args, const Config& config) {
  RETURN_IF_ERROR(RequireSupported(config));
  ASSIGN_OR_RETURN(net::CheckStart start, net::StartCheck(args, config.ipam_type, "bridge"));
  const Result* prev = &start.prev;
  ASSIGN_OR_RETURN(int cindex, ContainerInterfaceIndex(args, *prev));

  ASSIGN_OR_RETURN(net::NetlinkSocket hsock, net::NetlinkSocket::Open());
  ASSIGN_OR_RETURN(net::LinkInfo br, CheckBridge(hsock, config, *prev));
  ASSIGN_OR_RETURN(net::NetlinkSocket csock, net::NetlinkSocket::OpenIn(start.container));
  ASSIGN_OR_RETURN(net::LinkInfo cont, CheckContainer(csock, args, *prev, cindex));
  RETURN_IF_ERROR(CheckHostVeth(hsock, config, *prev, br, cont.link));
  return CheckGatewayAddresses(hsock, config, *prev, br);
}

}  // namespace cni::bridge

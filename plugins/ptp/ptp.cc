#include "ptp.h"

#include <linux/if_addr.h>
#include <linux/rtnetlink.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "cni/net/addr.h"
#include "cni/net/devconf.h"
#include "cni/net/link.h"
#include "cni/net/netlink.h"
#include "cni/net/netns.h"
#include "cni/net/veth.h"
#include "cni/plugin/host_attachment.h"
#include "cni/plugin/ipam_apply.h"
#include "cni/plugin/ipam_lease.h"
#include "cni/protocol/invoke.h"
#include "config.h"

namespace cni::ptp {

std::vector<net::RouteSpec> ContainerRoutes(const IpConfig& ip, int ifindex) {
  std::vector<net::RouteSpec> routes;
  net::RouteSpec to_gw;
  to_gw.dst = net::IpPrefix::Host(*ip.gateway);
  to_gw.ifindex = ifindex;
  to_gw.scope = RT_SCOPE_LINK;
  to_gw.src = ip.address.addr();
  routes.push_back(to_gw);
  if (ip.address.len() < ip.address.addr().bit_length()) {
    net::RouteSpec subnet;
    subnet.dst = ip.address.Network();
    subnet.gw = ip.gateway;
    subnet.ifindex = ifindex;
    subnet.scope = RT_SCOPE_UNIVERSE;
    subnet.src = ip.address.addr();
    routes.push_back(subnet);
  }
  return routes;
}

net::RouteSpec HostRoute(const IpConfig& ip, int host_ifindex) {
  net::RouteSpec r;
  r.dst = net::IpPrefix::Host(ip.address.addr());
  r.ifindex = host_ifindex;
  r.scope = RT_SCOPE_HOST;
  return r;
}

net::IpPrefix HostGatewayAddress(const IpConfig& ip) { return net::IpPrefix::Host(*ip.gateway); }

namespace {

// ptp routes everything through the gateway, so every address needs one, of
// its own family. Checked right after IPAM ADD, before the host-wide
// forwarding sysctls are written (the lease is released on failure).
absl::Status ValidateIpamResult(const IpamLease& lease) {
  RETURN_IF_ERROR(lease.RequireAddresses(), "ptp");
  for (const IpConfig& ip : lease.result().ips) {
    if (!ip.gateway) {
      return Error(ErrorCode::kInvalidNetworkConfig,
                   absl::StrCat("ptp: IPAM address ", ip.address.ToString(),
                                " has no gateway; ptp routes all container traffic through it"));
    }
    if (ip.gateway->family() != ip.address.family()) {
      return Error(ErrorCode::kInvalidNetworkConfig,
                   absl::StrCat("ptp: IPAM address ", ip.address.ToString(), " has gateway ",
                                ip.gateway->ToString(), " of the other IP family"));
    }
  }
  // No printability check here: skel accepted the config's version, and a
  // result with an address (RequireAddresses) prints at every version.
  return absl::OkStatus();
}

// CNI_IFNAME must be free in the container. SetupVeth finds out too, but only
// after IPAM and the host-wide forwarding sysctls: "lo", say, would have
// enabled ip_forward on the host for an ADD bound to fail. Same message as
// SetupVeth's.
absl::Status RequireFreeIfname(net::NetlinkSocket& csock, absl::string_view ifname) {
  ASSIGN_OR_RETURN(bool taken, net::LinkExists(csock, ifname));
  if (!taken) return absl::OkStatus();
  return absl::AlreadyExistsError(absl::StrCat("container veth name \"", ifname, "\" already exists"));
}

// What ADD returns: both ends of the pair, IPAM's addresses (on the container
// end) and routes, and the config's dns when it sets something.
Result BuildResult(const CmdArgs& args, const Config& config, const net::VethPair& pair,
                   const IpamLease& lease) {
  Result result;
  result.cni_version = args.conf.cni_version;
  result.interfaces = {Interface{.name = pair.host.name, .mac = pair.host.mac},
                       Interface{.name = pair.container.name, .mac = pair.container.mac,
                                 .sandbox = pair.container.sandbox}};
  lease.CopyInto(result, kContainerIndex);
  if (config.dns) result.dns = *config.dns;
  return result;
}

// Container side, after ConfigureInterface has added the addresses, brought
// the link up and added the IPAM routes: swap each kernel subnet route for
// the two ptp routes, so that even neighbours in the subnet are reached
// through the gateway (veth cannot be IFF_POINTOPOINT).
absl::Status ConfigureContainerRoutes(net::NetlinkSocket& sock, int ifindex, const Result& result) {
  for (const IpConfig& ip : result.ips) {
    net::RouteSpec kernel_route;
    kernel_route.dst = ip.address.Network();
    kernel_route.ifindex = ifindex;
    // Missing is fine: a host prefix has no subnet route, and two addresses in
    // one subnet share one.
    absl::Status st = net::DeleteRoute(sock, kernel_route);
    if (!st.ok() && !absl::IsNotFound(st)) return st;
    for (const net::RouteSpec& r : ContainerRoutes(ip, ifindex)) {
      st = net::AddRoute(sock, r);
      // Two addresses with one gateway want the same gateway route.
      if (!st.ok() && !absl::IsAlreadyExists(st)) return st;
    }
  }
  return absl::OkStatus();
}

// Host side: the gateway address on the host veth and a host route to each
// container address.
absl::Status ConfigureHost(net::NetlinkSocket& sock, int host_ifindex, const Result& result) {
  for (const IpConfig& ip : result.ips) {
    net::AddressOptions opts;
    // Unlike upstream, skip DAD for the gateway: the same address sits on
    // every ptp host veth by design, and while it is "tentative" the container
    // cannot reach its IPv6 gateway (upstream's first second of no IPv6).
    if (!ip.address.is_v4()) opts.flags |= IFA_F_NODAD;
    absl::Status st = net::AddAddress(sock, host_ifindex, HostGatewayAddress(ip), opts);
    if (!st.ok() && !absl::IsAlreadyExists(st)) return st;  // shared gateway
    st = net::AddRoute(sock, HostRoute(ip, host_ifindex));
    if (!st.ok() && !absl::IsAlreadyExists(st)) return st;
  }
  return absl::OkStatus();
}

absl::StatusOr<Result> Add(const CmdArgs& args, const Config& config) {
  RETURN_IF_ERROR(RequireSupported(config));
  // Both namespaces are opened, and CNI_IFNAME checked, before IPAM: a bad
  // CNI_NETNS or CNI_IFNAME must not cost an address or touch a sysctl, and
  // nothing below has to undo a failed open.
  ASSIGN_OR_RETURN(net::Netns container, net::Netns::Open(args.netns));
  ASSIGN_OR_RETURN(net::NetlinkSocket csock, net::NetlinkSocket::OpenIn(container));
  ASSIGN_OR_RETURN(net::NetlinkSocket hsock, net::NetlinkSocket::Open());
  RETURN_IF_ERROR(RequireFreeIfname(csock, args.ifname));

  // Every return before lease.Commit releases the address again.
  ASSIGN_OR_RETURN(IpamLease lease, IpamLease::Acquire(args, config.ipam_type));
  RETURN_IF_ERROR(ValidateIpamResult(lease));
  RETURN_IF_ERROR(host_attachment::EnableForwarding(hsock, lease.result().ips), "ptp: enabling IP forwarding");

  // With IPv6, the host end routes for the container from the moment ADD
  // returns: its link-local address skips DAD (see SetupVeth).
  const bool v6 = std::any_of(lease.result().ips.begin(), lease.result().ips.end(),
                              [](const IpConfig& ip) { return !ip.address.is_v4(); });
  ASSIGN_OR_RETURN(net::VethPair pair,
                   net::SetupVeth(csock, hsock, args.ifname, config.mtu, std::nullopt, /*host_skips_dad=*/v6));
  // Declared after the lease, so it runs first: link, then address. Deleting
  // the container end takes the host end with it.
  absl::Cleanup remove_link = [&] { (void)net::DeleteLinkByNameIfExists(csock, args.ifname); };

  Result result = BuildResult(args, config, pair, lease);
  RETURN_IF_ERROR(net::ConfigureInterface(csock, args.ifname, result));
  RETURN_IF_ERROR(ConfigureContainerRoutes(csock, pair.container_index, result),
                  "ptp: routes of \"", args.ifname, "\"");
  RETURN_IF_ERROR(ConfigureHost(hsock, pair.host_index, result),
                  "ptp: host side of \"", pair.host.name, "\"");
  if (config.ip_masq) {
    RETURN_IF_ERROR(host_attachment::AttachMasquerade(args, config.masq_backend, result), "ptp");
  }

  RETURN_IF_ERROR(lease.Commit(result), "ptp");
  std::move(remove_link).Cancel();
  return result;
}

absl::Status Del(const CmdArgs& args, const Config& config) {
  // Deleting the container end deletes the host end, its gateway address
  // and the host route too.
  return host_attachment::Del(args, {.plugin = "ptp", .ipam_type = config.ipam_type, .ip_masq = config.ip_masq});
}

}  // namespace

PluginFuncs Funcs() {
  return host_attachment::Funcs<Config, TeardownConfig>("ptp", Add, Check, Del, RequireSupported);
}

}  // namespace cni::ptp

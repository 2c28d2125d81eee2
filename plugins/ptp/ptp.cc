#include "ptp.h"

#include <linux/if_addr.h>
#include <linux/rtnetlink.h>

#include <string>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cni/error.h"
#include "cni/fw/backend.h"
#include "cni/fw/ipmasq.h"
#include "cni/invoke.h"
#include "cni/net/addr.h"
#include "cni/net/ipam_apply.h"
#include "cni/net/link.h"
#include "cni/net/netlink.h"
#include "cni/net/netns.h"
#include "cni/net/sysctl.h"
#include "cni/net/veth.h"
#include "cni/version.h"
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
// its own family. Checked right after IPAM ADD (and rolled back on failure).
absl::Status ValidateIpamResult(const Result& ipam) {
  if (ipam.ips.empty()) {
    return Error(ErrorCode::kInvalidNetworkConfig, "ptp: IPAM plugin returned missing IP config");
  }
  for (const IpConfig& ip : ipam.ips) {
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
  return absl::OkStatus();
}

// Writes "1" unless it is already there: writing ip_forward resets several
// per-interface settings in the kernel, so an unneeded write is not harmless.
absl::Status EnsureSysctlOn(absl::string_view key) {
  absl::StatusOr<std::string> value = net::ReadSysctlHere(key);
  if (value.ok() && *value == "1") return absl::OkStatus();
  return net::WriteSysctlHere(key, "1");
}

// The host forwards between the container veths and everything else. The
// plugin runs in the host namespace, so no namespace switch is needed.
absl::Status EnableForwarding(const Result& ipam) {
  bool v4 = false, v6 = false;
  for (const IpConfig& ip : ipam.ips) (ip.address.is_v4() ? v4 : v6) = true;
  if (v4) {
    if (absl::Status st = EnsureSysctlOn("net/ipv4/ip_forward"); !st.ok()) return st;
  }
  if (v6) {
    if (absl::Status st = EnsureSysctlOn("net/ipv6/conf/all/forwarding"); !st.ok()) return st;
  }
  return absl::OkStatus();
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

// Deletes the container end of the pair (the host end goes with it). Runs as
// an ADD rollback, so it opens its own socket and ignores failures.
void RemoveContainerLink(const net::Netns& container, absl::string_view ifname) {
  absl::StatusOr<net::NetlinkSocket> sock = net::NetlinkSocket::OpenIn(container);
  if (sock.ok()) (void)net::DeleteLinkByNameIfExists(*sock, ifname);
}



}  // namespace

absl::StatusOr<Result> Add(const CmdArgs& args) {
  absl::StatusOr<Config> config = ParseConfig(args.conf);
  if (!config.ok()) return config.status();
  if (absl::Status st = RequireSupported(*config); !st.ok()) return st;

  // Both namespaces are opened before IPAM: a bad CNI_NETNS must not cost an
  // address, and nothing below has to undo a failed open.
  absl::StatusOr<net::Netns> container = net::Netns::Open(args.netns);
  if (!container.ok()) return container.status();
  absl::StatusOr<net::Netns> host = net::Netns::Current();
  if (!host.ok()) return host.status();

  absl::StatusOr<Result> ipam = DelegateAdd(config->ipam_type, args);
  if (!ipam.ok()) return ipam.status();
  // Every failure from here on releases the address again.
  absl::Cleanup release_ipam = [&] { (void)DelegateDel(config->ipam_type, args); };
  if (absl::Status st = ValidateIpamResult(*ipam); !st.ok()) return st;
  // skel prints the result at the config's version only after we return; a
  // result that cannot be printed there (0.1.0/0.2.0 hold one address per
  // family) must fail now, while the rollback still runs.
  if (absl::Status st = CheckPrintableAt(*ipam, args.conf); !st.ok()) {
    return Annotate(st, "ptp: IPAM result");
  }
  if (absl::Status st = EnableForwarding(*ipam); !st.ok()) {
    return Annotate(st, "ptp: enabling IP forwarding");
  }

  absl::StatusOr<net::VethPair> pair =
      net::SetupVeth(*container, args.ifname, config->mtu, std::nullopt, *host);
  if (!pair.ok()) return pair.status();
  // Declared after release_ipam, so it runs first: link, then address.
  absl::Cleanup remove_link = [&] { RemoveContainerLink(*container, args.ifname); };

  Result result;
  result.cni_version = args.conf.cni_version;
  result.interfaces = {pair->host, pair->container};
  result.ips = ipam->ips;
  for (IpConfig& ip : result.ips) ip.interface = kContainerIndex;
  result.routes = ipam->routes;
  // The plugin's own dns replaces IPAM's only when it sets something.
  result.dns = config->dns ? *config->dns : ipam->dns;

  absl::StatusOr<net::NetlinkSocket> csock = net::NetlinkSocket::OpenIn(*container);
  if (!csock.ok()) return csock.status();
  if (absl::Status st = net::ConfigureInterface(*csock, args.ifname, result); !st.ok()) return st;
  if (absl::Status st = ConfigureContainerRoutes(*csock, pair->container_index, result); !st.ok()) {
    return Annotate(st, absl::StrCat("ptp: routes of \"", args.ifname, "\""));
  }

  absl::StatusOr<net::NetlinkSocket> hsock = net::NetlinkSocket::Open();
  if (!hsock.ok()) return hsock.status();
  if (absl::Status st = ConfigureHost(*hsock, pair->host_index, result); !st.ok()) {
    return Annotate(st, absl::StrCat("ptp: host side of \"", pair->host.name, "\""));
  }

  if (config->ip_masq) {
    absl::StatusOr<fw::Backend> backend = fw::SelectBackend(config->ip_masq_backend);
    if (!backend.ok()) return backend.status();
    std::vector<net::IpPrefix> addrs;
    for (const IpConfig& ip : result.ips) addrs.push_back(ip.address);
    fw::MasqTarget target{args.conf.name, args.ifname, args.container_id};
    if (absl::Status st = fw::SetupIpMasq(*backend, addrs, target); !st.ok()) {
      (void)fw::TeardownIpMasq(target);  // one family may be in already
      return Annotate(st, "ptp");
    }
  }

  std::move(remove_link).Cancel();
  std::move(release_ipam).Cancel();
  return result;
}

absl::Status Del(const CmdArgs& args) {
  // Masquerade rules of either backend (ours or upstream's) go too.
  absl::StatusOr<Config> config = ParseConfig(args.conf);
  if (!config.ok()) return config.status();

  std::vector<absl::Status> failures;
  // IPAM first and unconditionally: the address must be released even when
  // the namespace is already gone (or CNI_NETNS is empty).
  if (absl::Status st = DelegateDel(config->ipam_type, args); !st.ok()) {
    failures.push_back(Annotate(st, "ptp: releasing the IPAM address"));
  }

  if (config->ip_masq) {
    if (absl::Status st = fw::TeardownIpMasq({args.conf.name, args.ifname, args.container_id}); !st.ok()) {
      failures.push_back(Annotate(st, "ptp"));
    }
  }

  if (!args.netns.empty()) {
    // Deleting the container end deletes the host end, its gateway address
    // and the host route too; a namespace that is gone took the pair with it.
    if (absl::Status st = net::DeleteLinkInNetns(args.netns, args.ifname); !st.ok()) failures.push_back(st);
  }
  return JoinErrors(failures);
}

absl::Status Gc(const CmdArgs& args) {
  absl::StatusOr<Config> config = ParseConfig(args.conf);
  if (!config.ok()) return config.status();
  std::vector<absl::Status> failures;
  if (config->ip_masq) {
    if (absl::Status st = fw::GcIpMasq(args.conf.name, args.conf.valid_attachments); !st.ok()) {
      failures.push_back(Annotate(st, "ptp"));
    }
  }
  if (absl::Status st = DelegateGc(config->ipam_type, args); !st.ok()) failures.push_back(st);
  return JoinErrors(failures);
}

absl::Status Status(const CmdArgs& args) {
  absl::StatusOr<Config> config = ParseConfig(args.conf);
  if (!config.ok()) return config.status();
  if (absl::Status st = RequireSupported(*config); !st.ok()) return st;
  return DelegateStatus(config->ipam_type, args);
}

PluginFuncs Funcs() { return {.add = Add, .del = Del, .check = Check, .gc = Gc, .status = Status}; }

}  // namespace cni::ptp

#include "bridge.h"

#include <linux/if_addr.h>
#include <linux/if_bridge.h>
#include <linux/ip.h>
#include <linux/ipv6.h>

#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/quoted.h"
#include "cni/base/status_macros.h"
#include "cni/fw/ipmasq.h"
#include "cni/fw/spoofcheck.h"
#include "cni/net/addr.h"
#include "cni/net/bridge.h"
#include "cni/net/devconf.h"
#include "cni/net/link.h"
#include "cni/net/netlink.h"
#include "cni/net/netns.h"
#include "cni/net/sysctl.h"
#include "cni/net/veth.h"
#include "cni/plugin/host_attachment.h"
#include "cni/plugin/ipam_apply.h"
#include "cni/plugin/ipam_lease.h"
#include "cni/protocol/invoke.h"

namespace cni::bridge {

net::IpAddress DefaultGateway(const net::IpPrefix& address) {
  return address.Network().addr().Next();
}

std::vector<net::IpPrefix> ApplyGateways(const Config& config, Result& result) {
  std::vector<net::IpPrefix> gateways;
  bool default_route[2] = {false, false};  // [v4, v6]: one added or found
  for (IpConfig& ip : result.ips) {
    ip.interface = kContainerIndex;
    if (!ip.gateway && config.is_gateway) ip.gateway = DefaultGateway(ip.address);
    const int fam = ip.address.is_v4() ? 0 : 1;
    if (config.is_default_gateway && !default_route[fam]) {
      const net::IpPrefix any(ip.address.is_v4() ? net::IpAddress()
                                                 : net::IpAddress::V6({}),
                              0);
      for (const Route& r : result.routes) {
        if (r.gw && r.dst.len() == 0 && r.dst.family() == any.family()) default_route[fam] = true;
      }
      if (!default_route[fam]) {
        Route r;
        r.dst = any;
        r.gw = ip.gateway;
        result.routes.push_back(r);
        default_route[fam] = true;
      }
    }
    if (config.is_gateway) gateways.emplace_back(*ip.gateway, ip.address.len());
  }
  return gateways;
}

VlanPlan PlanVlans(const Config& config) {
  VlanPlan plan;
  plan.remove_default = config.vlan_filtering() && !config.preserve_default_vlan;
  constexpr int kDefaultNativeVlan = 1;
  if (config.vlan != 0) {
    plan.untagged_pvid.push_back(config.vlan);
  } else if (!config.trunk.empty()) {
    plan.untagged_pvid.push_back(kDefaultNativeVlan);
  }
  // A trunk that also lists its native VLAN keeps it native: the untagged
  // pvid entry is written after the tagged ones (the kernel keeps the last
  // flags given for a VLAN; upstream writes the native one first, so there
  // the trunk's tagged entry wins and untagged frames are dropped).
  plan.tagged = config.trunk;
  return plan;
}

namespace {


// Enslaves `port` to `bridge` and gives it its flags and VLANs.
absl::Status ConnectPort(net::NetlinkSocket& sock, const net::LinkInfo& bridge,
                         const net::LinkInfo& port, bool hairpin, bool isolated,
                         const VlanPlan& vlans) {
  RETURN_IF_ERROR(net::SetLinkMaster(sock, port, bridge.index), "connecting ", Quoted(port.name),
                  " to bridge ", Quoted(bridge.name));
  net::BridgePortFlags flags;  // unset flags are left as the kernel made them
  if (hairpin) flags.hairpin = true;
  if (isolated) flags.isolated = true;
  RETURN_IF_ERROR(net::SetBridgePortFlags(sock, port, flags));
  if (vlans.remove_default) {
    // The kernel gave the new port the bridge's default_pvid (VLAN 1).
    ASSIGN_OR_RETURN(net::BridgePortInfo info, net::GetBridgePort(sock, port));
    for (const net::BridgeVlan& v : info.vlans) {
      absl::Status st = net::BridgeVlanDel(sock, port, v.vid);
      if (!st.ok() && !absl::IsNotFound(st)) return st;
    }
  }
  for (int vid : vlans.tagged) {
    RETURN_IF_ERROR(net::BridgeVlanAdd(sock, port, {static_cast<uint16_t>(vid), false, false}));
  }
  for (int vid : vlans.untagged_pvid) {
    RETURN_IF_ERROR(net::BridgeVlanAdd(sock, port, {static_cast<uint16_t>(vid), true, true}));
  }
  return absl::OkStatus();
}

// The gateway of a VLAN network lives on "<bridge>.<vlan>": one end of a
// veth pair in the host, the other end an access port of the bridge in that
// VLAN. Shared by every container of the VLAN, so made once and kept.
absl::StatusOr<net::LinkInfo> EnsureVlanGateway(net::NetlinkSocket& sock, const net::LinkInfo& bridge,
                                                const Config& config) {
  const std::string name = absl::StrCat(bridge.name, ".", config.vlan);
  absl::StatusOr<net::LinkInfo> link = net::LinkByName(sock, name);
  if (link.ok() || !absl::IsNotFound(link.status())) return link;
  // Both ends in the host: the one socket serves as both sides.
  absl::StatusOr<net::VethPair> pair = net::SetupVeth(sock, sock, name, bridge.mtu, std::nullopt);
  // A concurrent ADD made it first: use theirs.
  if (absl::IsAlreadyExists(pair.status())) return net::LinkByName(sock, name);
  RETURN_IF_ERROR(pair, "creating VLAN gateway ", Quoted(name));
  // Half made, it would be found and used by the next ADD: remove it.
  absl::Cleanup remove = [&] { (void)net::DeleteLinkByNameIfExists(sock, name); };
  ASSIGN_OR_RETURN(net::LinkInfo port, net::LinkByIndex(sock, pair->host_index));
  VlanPlan plan;
  plan.remove_default = !config.preserve_default_vlan;
  plan.untagged_pvid.push_back(config.vlan);
  RETURN_IF_ERROR(ConnectPort(sock, bridge, port, false, false, plan));
  std::move(remove).Cancel();
  return net::LinkByName(sock, name);
}

// The gateway address on the bridge (or VLAN gateway). Upstream's rules: an
// IPv4 bridge holds one address; another IPv4 address, or an overlapping IPv6
// one, is replaced with forceAddress and an error without.
absl::Status EnsureGatewayAddress(net::NetlinkSocket& sock, const net::LinkInfo& link,
                                  const net::IpPrefix& want, bool force) {
  ASSIGN_OR_RETURN(std::vector<net::AddressInfo> addrs,
                   net::ListAddresses(sock, link.index, want.family()));
  for (const net::AddressInfo& a : addrs) {
    if (a.prefix == want) return absl::OkStatus();
    if (want.is_v4() || a.prefix.Contains(want.addr()) || want.Contains(a.prefix.addr())) {
      if (!force) {
        return Error(ErrorCode::kInvalidNetworkConfig,
                     absl::StrCat("bridge: ", Quoted(link.name), " already has an IP address (",
                                  a.prefix.ToString(), ") different from ", want.ToString(),
                                  "; set forceAddress to replace it"));
      }
      absl::Status st = net::DeleteAddress(sock, link.index, a.prefix);
      if (!st.ok() && !absl::IsNotFound(st)) return st;
    }
  }
  net::AddressOptions opts;
  // The gateway must answer at once; DAD would leave it "tentative" for a
  // second (the same address on the same bridge is not a duplicate anyway).
  if (!want.is_v4()) opts.flags |= IFA_F_NODAD;
  absl::Status st = net::AddAddress(sock, link.index, want, opts);
  // A concurrent ADD of the same network put it there first.
  if (!st.ok() && !absl::IsAlreadyExists(st)) return st;
  return absl::OkStatus();
}

// Upstream's "bridge port state" wait. With STP off a port forwards as soon
// as both veth ends are up; the poll covers the kernel's asynchronous
// carrier handling. Bounded: ~3 s. A port still listening/learning at the end
// belongs to a bridge running STP (forward delay: many seconds) and is
// accepted; a disabled or blocking port is an error.
absl::Status WaitForwarding(net::NetlinkSocket& sock, const net::LinkInfo& port) {
  int state = 0;
  const int sleeps_ms[] = {0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 1000};
  for (int ms : sleeps_ms) {
    if (ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    ASSIGN_OR_RETURN(net::BridgePortInfo info, net::GetBridgePortState(sock, port));
    state = info.state;
    if (state == BR_STATE_FORWARDING) return absl::OkStatus();
  }
  if (state == BR_STATE_LISTENING || state == BR_STATE_LEARNING) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("bridge: port ", Quoted(port.name),
                                          " did not reach the forwarding state (state ", state,
                                          ")"));
}

// Container sysctls, best effort as upstream (IPv6 may be disabled):
// arp_notify through rtnetlink (cni/net/devconf.h), IPv6's DAD settings,
// which rtnetlink cannot write, on one thread in the namespace.
void ContainerSysctls(const net::Netns& container, net::NetlinkSocket& container_sock, int ifindex,
                      absl::string_view ifname, bool enable_dad) {
  (void)net::SetIpv4DevConf(container_sock, ifindex, IPV4_DEVCONF_ARP_NOTIFY, 1);
  const std::string v6 = absl::StrCat("net/ipv6/conf/", ifname, "/");
  (void)container.Run([&]() -> absl::Status {
    if (enable_dad) {
      (void)net::WriteSysctlHere(v6 + "enhanced_dad", "1");
      (void)net::WriteSysctlHere(v6 + "accept_dad", "1");
    } else {
      (void)net::WriteSysctlHere(v6 + "accept_dad", "0");
    }
    return absl::OkStatus();
  });
}

// The two namespaces ADD works in, each with its netlink socket.
struct Namespaces {
  net::Netns container;  // for the container's sysctls
  net::NetlinkSocket container_sock;
  net::NetlinkSocket host_sock;  // the plugin's own namespace
};

// Opens them all before anything changes, so none of these failures leaves
// a bridge behind.
absl::StatusOr<Namespaces> OpenNamespaces(const CmdArgs& args) {
  ASSIGN_OR_RETURN(net::Netns container, net::Netns::Open(args.netns));
  ASSIGN_OR_RETURN(net::NetlinkSocket container_sock, net::NetlinkSocket::OpenIn(container));
  ASSIGN_OR_RETURN(net::NetlinkSocket host_sock, net::NetlinkSocket::Open());
  return Namespaces{std::move(container), std::move(container_sock), std::move(host_sock)};
}

// The bridge with the config's settings, created on first use. It is shared
// by every container on it and kept: never rolled back.
absl::StatusOr<net::LinkInfo> EnsureConfiguredBridge(net::NetlinkSocket& sock, const Config& config) {
  net::BridgeSpec spec;
  spec.name = config.bridge;
  spec.mtu = config.mtu;
  spec.vlan_filtering = config.vlan_filtering();
  spec.promisc = config.promisc;
  ASSIGN_OR_RETURN(net::LinkInfo br, net::EnsureBridge(sock, spec), "bridge: bridge ", Quoted(config.bridge));
  // We own the routes of this interface: accept_ra = 0, as upstream sets on
  // every ADD. Written only when it is not 0 already: the bridge keeps it
  // from the first ADD on, and opening this file costs ~0.2 ms with 1,000
  // ports on the bridge (one RTM_GETLINK reads it in constant time).
  absl::StatusOr<int32_t> accept_ra = net::Ipv6DevConf(sock, br.index, DEVCONF_ACCEPT_RA);
  if (!accept_ra.ok() || *accept_ra != 0) {
    (void)net::WriteSysctlHere(absl::StrCat("net/ipv6/conf/", config.bridge, "/accept_ra"), "0");
  }
  return br;
}

// The host end of the veth pair as a port of the bridge, with the config's
// port flags and VLANs. SetupVeth has just read it: its index, name and MAC
// are all a port needs, so it is not read again.
absl::StatusOr<net::LinkInfo> ConnectHostVeth(net::NetlinkSocket& sock, const net::LinkInfo& br,
                                              const net::VethPair& pair, const Config& config) {
  net::LinkInfo host_veth;
  host_veth.index = pair.host_index;
  host_veth.name = pair.host.name;
  if (absl::StatusOr<net::MacAddress> mac = net::MacAddress::Parse(pair.host.mac); mac.ok()) host_veth.mac = *mac;
  RETURN_IF_ERROR(ConnectPort(sock, br, host_veth, config.hairpin, config.port_isolation,
                              PlanVlans(config)),
                  "bridge");
  return host_veth;
}

// Layer 3 in the container: IPAM's addresses, routes and DNS into `result`,
// with the gateways the config asks for (ApplyGateways), then onto the
// container interface. Returns the gateway addresses for the bridge.
absl::StatusOr<std::vector<net::IpPrefix>> ConfigureContainerAddresses(const CmdArgs& args,
                                                                      const Config& config,
                                                                      Namespaces& ns,
                                                                      int container_index,
                                                                      const IpamLease& lease,
                                                                      Result& result) {
  lease.CopyInto(result, kContainerIndex);
  // The result prints at the config's version: skel accepted the version,
  // and the lease has addresses (RequireAddresses), so 0.1.0/0.2.0 have the
  // IP they need before the gateway addresses go onto the bridge for good.
  std::vector<net::IpPrefix> gateways = ApplyGateways(config, result);
  ContainerSysctls(ns.container, ns.container_sock, container_index, args.ifname, config.enable_dad);
  net::ConfigureOptions opts;
  opts.enable_dad = config.enable_dad;
  RETURN_IF_ERROR(net::ConfigureInterface(ns.container_sock, args.ifname, result, opts), "bridge");
  return gateways;
}

// Where the gateway addresses go: the bridge, or with a VLAN its
// "<bridge>.<vlan>" link, which then joins the result's interfaces.
absl::StatusOr<net::LinkInfo> GatewayLink(Namespaces& ns, const net::LinkInfo& br,
                                          const Config& config, Result& result) {
  if (config.vlan == 0) return br;
  ASSIGN_OR_RETURN(net::LinkInfo vlan_link, EnsureVlanGateway(ns.host_sock, br, config),
                   "bridge");
  result.interfaces.push_back(Interface{vlan_link.name, vlan_link.mac.ToString()});
  return vlan_link;
}

// The gateway addresses in the host, the bridge's MAC pinned, forwarding on.
// Returns true when it pinned the bridge's MAC (then already in `result`).
absl::StatusOr<bool> SetUpGateways(Namespaces& ns, const net::LinkInfo& br, const Config& config,
                                   const std::vector<net::IpPrefix>& gateways, Result& result) {
  if (gateways.empty()) return false;
  ASSIGN_OR_RETURN(net::LinkInfo gw_link, GatewayLink(ns, br, config, result));
  for (const net::IpPrefix& gw : gateways) {
    RETURN_IF_ERROR(EnsureGatewayAddress(ns.host_sock, gw_link, gw, config.force_address),
                    "bridge: gateway address on ", Quoted(gw_link.name));
  }
  // Pin the bridge's MAC to the one it had before this container's port
  // joined, as upstream does: a bridge someone else made without setting
  // its MAC otherwise follows the lowest port MAC and changes as
  // containers come and go. (A bridge we create has its own from birth.)
  // The kernel refuses a zero MAC, which a portless bridge may report.
  bool pinned = false;
  if (config.vlan == 0 && br.mac != net::MacAddress()) {
    RETURN_IF_ERROR(net::SetLinkMac(ns.host_sock, br, br.mac), "bridge");
    result.interfaces[kBridgeIndex].mac = br.mac.ToString();
    pinned = true;
  }
  // One gateway per address: their families are the addresses'.
  RETURN_IF_ERROR(host_attachment::EnableForwarding(ns.host_sock, result.ips));
  return pinned;
}

// The port made ready: with disableContainerInterface the container end is
// left down on purpose (e.g. a VM attaches to it), and a port that cannot
// forward then has nothing to wait for; otherwise wait until it forwards.
absl::Status ReadyPort(const CmdArgs& args, const Config& config, Namespaces& ns,
                       const net::LinkInfo& host_veth) {
  if (!config.disable_container_interface) return WaitForwarding(ns.host_sock, host_veth);
  ASSIGN_OR_RETURN(net::LinkInfo cont, net::LinkByName(ns.container_sock, args.ifname));
  return net::SetLinkDown(ns.container_sock, cont);
}

// An unpinned bridge's MAC follows its lowest port MAC, so it may have changed
// as ports joined (a bridge made without ports gets its first one then):
// report what the kernel has now. Best effort: the ADD has succeeded.
void RefreshBridgeMac(net::NetlinkSocket& sock, const net::LinkInfo& br, Result& result) {
  if (absl::StatusOr<net::LinkInfo> fresh = net::LinkByIndex(sock, br.index); fresh.ok()) {
    result.interfaces[kBridgeIndex].mac = fresh->mac.ToString();
  }
}

// The names the packet-filter rules of one attachment go by (upstream's).
std::string SpoofCheckId(const CmdArgs& args) { return absl::StrCat(args.container_id, "-", args.ifname); }

// The spoof check and masquerade rules the config asks for, last, when
// everything they name exists.
absl::Status SetUpPacketFilters(const CmdArgs& args, const Config& config,
                                const net::LinkInfo& host_veth, const Result& result) {
  if (config.macspoofchk) {
    RETURN_IF_ERROR(fw::SetupSpoofCheck(host_veth.name, result.interfaces[kContainerIndex].mac,
                                        SpoofCheckId(args)),
                    "bridge");
  }
  if (config.ip_masq) {
    RETURN_IF_ERROR(host_attachment::AttachMasquerade(args, config.masq_backend, result), "bridge");
  }
  return absl::OkStatus();
}

// A failed ADD removes the packet-filter rules it may have made (ours or
// upstream's); its own error is the one to report.
void RemovePacketFilters(const CmdArgs& args, const Config& config) {
  if (config.macspoofchk) (void)fw::TeardownSpoofCheck(SpoofCheckId(args));
  if (config.ip_masq) (void)host_attachment::DetachMasquerade(args, nullptr);
}

absl::StatusOr<Result> Add(const CmdArgs& args, const Config& config) {
  // Everything that can be refused without side effects, first.
  RETURN_IF_ERROR(RequireSupported(config));
  ASSIGN_OR_RETURN(Namespaces ns, OpenNamespaces(args));

  ASSIGN_OR_RETURN(net::LinkInfo br, EnsureConfiguredBridge(ns.host_sock, config));
  ASSIGN_OR_RETURN(net::VethPair pair,
                   net::SetupVeth(ns.container_sock, ns.host_sock, args.ifname, config.mtu, config.mac),
                   "bridge");
  absl::Cleanup remove_veth = [&] {
    (void)net::DeleteLinkByNameIfExists(ns.container_sock, args.ifname);
  };
  ASSIGN_OR_RETURN(net::LinkInfo host_veth, ConnectHostVeth(ns.host_sock, br, pair, config));

  Result result;
  result.cni_version = args.conf.cni_version;
  result.interfaces = {Interface{.name = br.name, .mac = br.mac.ToString()},
                       Interface{.name = pair.host.name, .mac = pair.host.mac},
                       Interface{.name = pair.container.name, .mac = pair.container.mac,
                                 .sandbox = pair.container.sandbox}};

  // IPAM only now that the container interface exists: the dhcp plugin asks
  // for its lease through it. The lease is released unless the ADD succeeds.
  std::optional<IpamLease> lease;
  bool bridge_mac_pinned = false;
  if (!config.ipam_type.empty()) {
    ASSIGN_OR_RETURN(IpamLease acquired, IpamLease::Acquire(args, config.ipam_type));
    lease.emplace(std::move(acquired));
    RETURN_IF_ERROR(lease->RequireAddresses(), "bridge");
    ASSIGN_OR_RETURN(std::vector<net::IpPrefix> gateways,
                     ConfigureContainerAddresses(args, config, ns, pair.container_index, *lease, result));
    ASSIGN_OR_RETURN(bridge_mac_pinned, SetUpGateways(ns, br, config, gateways, result));
  }

  RETURN_IF_ERROR(ReadyPort(args, config, ns, host_veth));
  // A pinned MAC cannot have changed since; an unpinned one may have.
  if (!bridge_mac_pinned) RefreshBridgeMac(ns.host_sock, br, result);
  if (config.dns) result.dns = *config.dns;

  absl::Cleanup remove_packet_filters = [&] { RemovePacketFilters(args, config); };
  RETURN_IF_ERROR(SetUpPacketFilters(args, config, host_veth, result));
  if (lease) RETURN_IF_ERROR(lease->Commit(result), "bridge");

  std::move(remove_packet_filters).Cancel();
  std::move(remove_veth).Cancel();
  return result;
}

absl::Status Del(const CmdArgs& args, const Config& config) {
  // IPAM first, as upstream: the dhcp plugin sends its DHCPRELEASE through
  // the container interface, so that must still exist.
  host_attachment::Teardown teardown{.plugin = "bridge", .ipam_type = config.ipam_type, .ip_masq = config.ip_masq};
  if (config.macspoofchk) {
    teardown.filters = [&](net::NetlinkSocket* nf) {
      return nf != nullptr ? fw::TeardownSpoofCheck(*nf, SpoofCheckId(args)) : fw::TeardownSpoofCheck(SpoofCheckId(args));
    };
  }
  return host_attachment::Del(args, teardown);
}

}  // namespace

PluginFuncs Funcs() {
  return host_attachment::Funcs<Config, TeardownConfig>("bridge", Add, Check, Del, RequireSupported);
}

}  // namespace cni::bridge

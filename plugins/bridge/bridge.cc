#include "bridge.h"

#include <linux/if_addr.h>
#include <linux/if_bridge.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cni/error.h"
#include "cni/fw/backend.h"
#include "cni/fw/ipmasq.h"
#include "cni/fw/spoofcheck.h"
#include "cni/invoke.h"
#include "cni/net/addr.h"
#include "cni/net/bridge.h"
#include "cni/net/ipam_apply.h"
#include "cni/net/link.h"
#include "cni/net/netlink.h"
#include "cni/net/netns.h"
#include "cni/net/sysctl.h"
#include "cni/net/veth.h"
#include "cni/version.h"

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
  if (config.vlan != 0) plan.untagged_pvid.push_back(config.vlan);
  plan.tagged = config.trunk;
  return plan;
}

namespace {

std::string Quoted(absl::string_view s) { return absl::StrCat("\"", s, "\""); }



// Writes "1" unless already there: writing ip_forward resets per-interface
// settings in the kernel, so an unneeded write is not harmless.
absl::Status EnsureSysctlOn(absl::string_view key) {
  absl::StatusOr<std::string> value = net::ReadSysctlHere(key);
  if (value.ok() && *value == "1") return absl::OkStatus();
  return net::WriteSysctlHere(key, "1");
}

// Enslaves `port` to `bridge` and gives it its flags and VLANs.
absl::Status ConnectPort(net::NetlinkSocket& sock, const net::LinkInfo& bridge,
                         const net::LinkInfo& port, bool hairpin, bool isolated,
                         const VlanPlan& vlans) {
  if (absl::Status st = net::SetLinkMaster(sock, port, bridge.index); !st.ok()) {
    return Annotate(st, absl::StrCat("connecting ", Quoted(port.name), " to bridge ",
                                     Quoted(bridge.name)));
  }
  net::BridgePortFlags flags;
  if (hairpin) flags.hairpin = true;
  if (isolated) flags.isolated = true;
  if (absl::Status st = net::SetBridgePortFlags(sock, port, flags); !st.ok()) return st;
  if (vlans.remove_default) {
    // The kernel gave the new port the bridge's default_pvid (VLAN 1).
    absl::StatusOr<net::BridgePortInfo> info = net::GetBridgePort(sock, port.index);
    if (!info.ok()) return info.status();
    for (const net::BridgeVlan& v : info->vlans) {
      absl::Status st = net::BridgeVlanDel(sock, port, v.vid);
      if (!st.ok() && !absl::IsNotFound(st)) return st;
    }
  }
  for (int vid : vlans.untagged_pvid) {
    net::BridgeVlan v{static_cast<uint16_t>(vid), true, true};
    if (absl::Status st = net::BridgeVlanAdd(sock, port, v); !st.ok()) return st;
  }
  for (int vid : vlans.tagged) {
    net::BridgeVlan v{static_cast<uint16_t>(vid), false, false};
    if (absl::Status st = net::BridgeVlanAdd(sock, port, v); !st.ok()) return st;
  }
  return absl::OkStatus();
}

// The gateway of a VLAN network lives on "<bridge>.<vlan>": one end of a
// veth pair in the host, the other end an access port of the bridge in that
// VLAN. Shared by every container of the VLAN, so made once and kept.
absl::StatusOr<net::LinkInfo> EnsureVlanGateway(net::NetlinkSocket& sock, const net::Netns& host,
                                                const net::LinkInfo& bridge, const Config& config) {
  const std::string name = absl::StrCat(bridge.name, ".", config.vlan);
  absl::StatusOr<net::LinkInfo> link = net::LinkByName(sock, name);
  if (link.ok() || !absl::IsNotFound(link.status())) return link;
  absl::StatusOr<net::VethPair> pair = net::SetupVeth(host, name, bridge.mtu, std::nullopt, host);
  // A concurrent ADD made it first: use theirs.
  if (absl::IsAlreadyExists(pair.status())) return net::LinkByName(sock, name);
  if (!pair.ok()) return Annotate(pair.status(), absl::StrCat("creating VLAN gateway ", Quoted(name)));
  absl::StatusOr<net::LinkInfo> port = net::LinkByIndex(sock, pair->host_index);
  if (!port.ok()) return port.status();
  VlanPlan plan;
  plan.remove_default = !config.preserve_default_vlan;
  plan.untagged_pvid.push_back(config.vlan);
  if (absl::Status st = ConnectPort(sock, bridge, *port, false, false, plan); !st.ok()) {
    (void)net::DeleteLinkByNameIfExists(sock, name);
    return st;
  }
  return net::LinkByName(sock, name);
}

// The gateway address on the bridge (or VLAN gateway). Upstream's rules: an
// IPv4 bridge holds one address; another IPv4 address, or an overlapping IPv6
// one, is replaced with forceAddress and an error without.
absl::Status EnsureGatewayAddress(net::NetlinkSocket& sock, const net::LinkInfo& link,
                                  const net::IpPrefix& want, bool force) {
  absl::StatusOr<std::vector<net::AddressInfo>> addrs =
      net::ListAddresses(sock, link.index, want.family());
  if (!addrs.ok()) return addrs.status();
  for (const net::AddressInfo& a : *addrs) {
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
    absl::StatusOr<net::BridgePortInfo> info = net::GetBridgePort(sock, port.index);
    if (!info.ok()) return info.status();
    state = info->state;
    if (state == BR_STATE_FORWARDING) return absl::OkStatus();
  }
  if (state == BR_STATE_LISTENING || state == BR_STATE_LEARNING) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("bridge: port ", Quoted(port.name),
                                          " did not reach the forwarding state (state ", state,
                                          ")"));
}

// Container sysctls, best effort as upstream (IPv6 may be disabled). One
// thread in the namespace for all of them.
void ContainerSysctls(const net::Netns& ns, absl::string_view ifname, bool enable_dad) {
  const std::string v6 = absl::StrCat("net/ipv6/conf/", ifname, "/");
  const std::string arp = absl::StrCat("net/ipv4/conf/", ifname, "/arp_notify");
  (void)ns.Run([&]() -> absl::Status {
    if (enable_dad) {
      (void)net::WriteSysctlHere(v6 + "enhanced_dad", "1");
      (void)net::WriteSysctlHere(v6 + "accept_dad", "1");
    } else {
      (void)net::WriteSysctlHere(v6 + "accept_dad", "0");
    }
    (void)net::WriteSysctlHere(arp, "1");
    return absl::OkStatus();
  });
}

void RemoveContainerLink(const net::Netns& container, absl::string_view ifname) {
  absl::StatusOr<net::NetlinkSocket> sock = net::NetlinkSocket::OpenIn(container);
  if (sock.ok()) (void)net::DeleteLinkByNameIfExists(*sock, ifname);
}

}  // namespace

absl::StatusOr<Result> Add(const CmdArgs& args) {
  absl::StatusOr<Config> config = ParseConfig(args.conf, args.args);
  if (!config.ok()) return config.status();
  if (absl::Status st = RequireSupported(*config); !st.ok()) return st;

  // Everything that can be refused without side effects, first.
  absl::StatusOr<net::Netns> container = net::Netns::Open(args.netns);
  if (!container.ok()) return container.status();
  absl::StatusOr<net::Netns> host = net::Netns::Current();
  if (!host.ok()) return host.status();
  absl::StatusOr<net::NetlinkSocket> hsock = net::NetlinkSocket::OpenIn(*host);
  if (!hsock.ok()) return hsock.status();

  // The bridge is shared and kept: it is not rolled back.
  net::BridgeSpec spec;
  spec.name = config->bridge;
  spec.mtu = config->mtu;
  spec.vlan_filtering = config->vlan_filtering();
  spec.promisc = config->promisc;
  absl::StatusOr<net::LinkInfo> br = net::EnsureBridge(*hsock, spec);
  if (!br.ok()) return Annotate(br.status(), absl::StrCat("bridge: bridge ", Quoted(config->bridge)));
  // We own the routes of this interface.
  (void)net::WriteSysctlHere(absl::StrCat("net/ipv6/conf/", config->bridge, "/accept_ra"), "0");

  absl::StatusOr<net::VethPair> pair =
      net::SetupVeth(*container, args.ifname, config->mtu, config->mac, *host);
  if (!pair.ok()) return Annotate(pair.status(), "bridge");
  absl::Cleanup remove_link = [&] { RemoveContainerLink(*container, args.ifname); };

  absl::StatusOr<net::LinkInfo> host_veth = net::LinkByIndex(*hsock, pair->host_index);
  if (!host_veth.ok()) return host_veth.status();
  if (absl::Status st = ConnectPort(*hsock, *br, *host_veth, config->hairpin,
                                    config->port_isolation, PlanVlans(*config));
      !st.ok()) {
    return Annotate(st, "bridge");
  }

  Result result;
  result.cni_version = args.conf.cni_version;
  result.interfaces = {Interface{br->name, br->mac.ToString()}, pair->host, pair->container};

  absl::StatusOr<net::NetlinkSocket> csock = net::NetlinkSocket::OpenIn(*container);
  if (!csock.ok()) return csock.status();

  std::optional<Result> ipam;
  absl::Cleanup release_ipam = [&] {
    if (ipam) (void)DelegateDel(config->ipam_type, args);
  };
  if (!config->ipam_type.empty()) {
    absl::StatusOr<Result> got = DelegateAdd(config->ipam_type, args);
    if (!got.ok()) return got.status();
    ipam = *std::move(got);
    if (ipam->ips.empty()) {
      return Error(ErrorCode::kInvalidNetworkConfig, "bridge: IPAM plugin returned missing IP config");
    }
    result.ips = ipam->ips;
    result.routes = ipam->routes;
    result.dns = ipam->dns;
    std::vector<net::IpPrefix> gateways = ApplyGateways(*config, result);
    // skel prints at the config's version only after we return; a result that
    // cannot be printed there must fail now, while the rollback still runs.
    if (absl::Status st = CheckPrintableAt(result, args.conf); !st.ok()) {
      return Annotate(st, "bridge: IPAM result");
    }

    ContainerSysctls(*container, args.ifname, config->enable_dad);
    net::ConfigureOptions opts;
    opts.enable_dad = config->enable_dad;
    if (absl::Status st = net::ConfigureInterface(*csock, args.ifname, result, opts); !st.ok()) {
      return Annotate(st, "bridge");
    }

    if (!gateways.empty()) {
      net::LinkInfo gw_link = *br;
      if (config->vlan != 0) {
        absl::StatusOr<net::LinkInfo> vlan_link = EnsureVlanGateway(*hsock, *host, *br, *config);
        if (!vlan_link.ok()) return Annotate(vlan_link.status(), "bridge");
        gw_link = *vlan_link;
        result.interfaces.push_back(Interface{gw_link.name, gw_link.mac.ToString()});
      }
      bool v4 = false, v6 = false;
      for (const net::IpPrefix& gw : gateways) {
        if (absl::Status st = EnsureGatewayAddress(*hsock, gw_link, gw, config->force_address);
            !st.ok()) {
          return Annotate(st, absl::StrCat("bridge: gateway address on ", Quoted(gw_link.name)));
        }
        (gw.is_v4() ? v4 : v6) = true;
      }
      // Pin the bridge's MAC to the one it had before this container's port
      // joined, as upstream does: a bridge someone else made without setting
      // its MAC otherwise follows the lowest port MAC and changes as
      // containers come and go. (A bridge we create has its own from birth.)
      // The kernel refuses a zero MAC, which a portless bridge may report.
      if (config->vlan == 0 && br->mac != net::MacAddress()) {
        if (absl::Status st = net::SetLinkMac(*hsock, *br, br->mac); !st.ok()) {
          return Annotate(st, "bridge");
        }
      }
      if (v4) {
        if (absl::Status st = EnsureSysctlOn("net/ipv4/ip_forward"); !st.ok()) return st;
      }
      if (v6) {
        if (absl::Status st = EnsureSysctlOn("net/ipv6/conf/all/forwarding"); !st.ok()) return st;
      }
    }
  }

  if (config->disable_container_interface) {
    // Left down on purpose (e.g. a VM attaches to it); the port cannot
    // forward then, so there is nothing to wait for.
    absl::StatusOr<net::LinkInfo> cont = net::LinkByName(*csock, args.ifname);
    if (!cont.ok()) return cont.status();
    if (absl::Status st = net::SetLinkDown(*csock, *cont); !st.ok()) return st;
  } else if (absl::Status st = WaitForwarding(*hsock, *host_veth); !st.ok()) {
    return st;
  }

  // The bridge's MAC may have changed when the first port joined, and the
  // host veth's with it; report what the kernel has now.
  if (absl::StatusOr<net::LinkInfo> fresh = net::LinkByIndex(*hsock, host_veth->index); fresh.ok()) {
    result.interfaces[kHostIndex].mac = fresh->mac.ToString();
  }
  if (absl::StatusOr<net::LinkInfo> fresh = net::LinkByIndex(*hsock, br->index); fresh.ok()) {
    result.interfaces[kBridgeIndex].mac = fresh->mac.ToString();
  }
  if (config->dns) result.dns = *config->dns;

  // Packet filtering last, when everything it names exists; undone on failure.
  fw::MasqTarget masq{args.conf.name, args.ifname, args.container_id};
  std::string spoof_id = absl::StrCat(args.container_id, "-", args.ifname);
  absl::Cleanup undo_fw = [&] {
    if (config->macspoofchk) (void)fw::TeardownSpoofCheck(spoof_id);
    if (config->ip_masq) (void)fw::TeardownIpMasq(masq);
  };
  if (config->macspoofchk) {
    if (absl::Status st = fw::SetupSpoofCheck(host_veth->name, result.interfaces[kContainerIndex].mac, spoof_id);
        !st.ok()) {
      return Annotate(st, "bridge");
    }
  }
  if (config->ip_masq && !result.ips.empty()) {
    absl::StatusOr<fw::Backend> backend = fw::SelectBackend(config->ip_masq_backend);
    if (!backend.ok()) return backend.status();
    std::vector<net::IpPrefix> addrs;
    for (const IpConfig& ip : result.ips) addrs.push_back(ip.address);
    if (absl::Status st = fw::SetupIpMasq(*backend, addrs, masq); !st.ok()) return Annotate(st, "bridge");
  }

  std::move(undo_fw).Cancel();
  std::move(release_ipam).Cancel();
  std::move(remove_link).Cancel();
  return result;
}

absl::Status Del(const CmdArgs& args) {
  // Spoof-check and masquerade rules (ours or upstream's) go too.
  absl::StatusOr<Config> config = ParseConfig(args.conf, args.args);
  if (!config.ok()) return config.status();

  std::vector<absl::Status> failures;
  if (!args.netns.empty()) {
    // A namespace that is gone took the veth pair with it.
    if (absl::Status st = net::DeleteLinkInNetns(args.netns, args.ifname); !st.ok()) failures.push_back(st);
  }
  if (config->macspoofchk) {
    if (absl::Status st = fw::TeardownSpoofCheck(absl::StrCat(args.container_id, "-", args.ifname)); !st.ok()) {
      failures.push_back(Annotate(st, "bridge"));
    }
  }
  if (config->ip_masq) {
    if (absl::Status st = fw::TeardownIpMasq({args.conf.name, args.ifname, args.container_id}); !st.ok()) {
      failures.push_back(Annotate(st, "bridge"));
    }
  }
  // Always, even without a namespace: the address must not leak.
  if (!config->ipam_type.empty()) {
    if (absl::Status st = DelegateDel(config->ipam_type, args); !st.ok()) {
      failures.push_back(Annotate(st, "bridge: releasing the IPAM address"));
    }
  }
  return JoinErrors(failures);
}

absl::Status Gc(const CmdArgs& args) {
  absl::StatusOr<Config> config = ParseConfig(args.conf, args.args);
  if (!config.ok()) return config.status();
  std::vector<absl::Status> failures;
  if (config->ip_masq) {
    if (absl::Status st = fw::GcIpMasq(args.conf.name, args.conf.valid_attachments); !st.ok()) {
      failures.push_back(Annotate(st, "bridge"));
    }
  }
  if (!config->ipam_type.empty()) {
    if (absl::Status st = DelegateGc(config->ipam_type, args); !st.ok()) failures.push_back(st);
  }
  return JoinErrors(failures);
}

absl::Status Status(const CmdArgs& args) {
  absl::StatusOr<Config> config = ParseConfig(args.conf, args.args);
  if (!config.ok()) return config.status();
  if (absl::Status st = RequireSupported(*config); !st.ok()) return st;
  if (config->ipam_type.empty()) return absl::OkStatus();
  return DelegateStatus(config->ipam_type, args);
}

PluginFuncs Funcs() { return {.add = Add, .del = Del, .check = Check, .gc = Gc, .status = Status}; }

}  // namespace cni::bridge

// The bridge plugin: a veth pair per container, the host end enslaved to a
// Linux bridge (created on first use and kept), optionally the gateway
// address on the bridge.
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "cni/base/ip.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"
#include "config.h"

namespace cni::bridge {

// The command table: ADD, DEL, GC and STATUS (bridge.cc), CHECK (check.cc),
// each given the configuration skel parsed once before it runs.
PluginFuncs Funcs();
absl::Status Check(const CmdArgs& args, const Config& config);

// Result layout (upstream's): [bridge, host veth, container veth], and with
// a VLAN gateway the "<bridge>.<vlan>" link appended; ips[] point at the
// container veth.
enum ResultIndex : int { kBridgeIndex, kHostIndex, kContainerIndex };

// ---- Pure helpers, unit-tested ----

// The gateway bridge fills in for an address without one: the first address
// of its subnet (10.1.2.0/24 -> 10.1.2.1).
net::IpAddress DefaultGateway(const net::IpPrefix& address);

// Upstream's calcGateways: points every IP at the container veth, fills in
// missing gateways (isGateway), adds a default route per family when
// isDefaultGateway is set and IPAM gave none with a gateway. Returns the
// addresses to put on the bridge: gateway/prefix-length of its IP.
std::vector<net::IpPrefix> ApplyGateways(const Config& config, Result& result);

// The VLAN table a new port gets, in upstream's (1.8+) terms: an access port
// has its VLAN as pvid, untagged; a trunk has its VLANs tagged and a native
// VLAN (pvid, untagged): "vlan" when set, else VLAN 1. The bridge's default
// VLAN 1 is removed first unless preserveDefaultVlan.
struct VlanPlan {
  bool remove_default = false;  // drop the VLANs the kernel gave the port (the bridge's default_pvid, 1)
  std::vector<int> tagged;      // added first
  std::vector<int> untagged_pvid;  // added after `tagged`, so it wins for a VLAN in both
};
VlanPlan PlanVlans(const Config& config);

}  // namespace cni::bridge

// Linux bridges through an rtnetlink socket: create-or-reuse, vlan filtering,
// promiscuous mode, bridge port flags (hairpin, isolation, learning), the
// bridge VLAN table, and the port state.
//
// Port flags and VLANs are not link attributes of the port itself but of the
// bridge's view of it: they travel in AF_BRIDGE RTM_SETLINK / RTM_DELLINK
// messages (IFLA_PROTINFO with IFLA_BRPORT_*, IFLA_AF_SPEC with
// IFLA_BRIDGE_VLAN_INFO), and are read back from an AF_BRIDGE RTM_GETLINK dump.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/net/link.h"
#include "cni/net/netlink.h"

namespace cni::net {

// The bridge EnsureBridge creates or reuses.
struct BridgeSpec {
  std::string name;             // the bridge device's name
  int mtu = 0;                  // 0: kernel default (only applied on creation)
  bool vlan_filtering = false;  // turned on also on an existing bridge
  bool promisc = false;         // IFF_PROMISC on the bridge (turned on, never off)
};

// Creates the bridge, or reuses it if it exists, and brings it up. A bridge
// it creates gets its own random locally administered MAC, which the kernel
// then keeps (it never takes a port's MAC). Safe
// against concurrent callers: EEXIST on create means someone else made it,
// so it is looked up and must be a bridge (`"cni0" already exists but is not
// a bridge`, code 7 as the config names it). The returned info is fresh.
absl::StatusOr<LinkInfo> EnsureBridge(NetlinkSocket& sock, const BridgeSpec& spec);

// Looks `name` up and checks that it is a bridge.
absl::StatusOr<LinkInfo> BridgeByName(NetlinkSocket& sock, absl::string_view name);

// Turns IFLA_BR_VLAN_FILTERING on or off on an existing bridge.
absl::Status SetBridgeVlanFiltering(NetlinkSocket& sock, const LinkInfo& bridge, bool on);
// Reads IFLA_BR_VLAN_FILTERING of `bridge` (false for a bridge that does not
// report it). The link's kind is not checked: pass a bridge. No such link:
// absl::NotFound.
absl::StatusOr<bool> BridgeVlanFiltering(NetlinkSocket& sock, const LinkInfo& bridge);

// Bridge port flags; unset fields are left alone.
struct BridgePortFlags {
  std::optional<bool> hairpin;   // IFLA_BRPORT_MODE (reflective relay)
  std::optional<bool> isolated;  // IFLA_BRPORT_ISOLATED
  std::optional<bool> learning;  // IFLA_BRPORT_LEARNING
};
// Sets the flags given in `flags` on bridge port `port` (AF_BRIDGE RTM_SETLINK);
// when no flag is given nothing is sent.
absl::Status SetBridgePortFlags(NetlinkSocket& sock, const LinkInfo& port,
                                const BridgePortFlags& flags);

// One entry of a port's VLAN table (or the bridge's own, "self").
struct BridgeVlan {
  uint16_t vid = 0;       // VLAN id, 1-4094
  bool pvid = false;      // BRIDGE_VLAN_INFO_PVID: untagged ingress lands here
  bool untagged = false;  // BRIDGE_VLAN_INFO_UNTAGGED: egress without a tag
  friend bool operator==(const BridgeVlan&, const BridgeVlan&) = default;
};

// What the bridge reports about a port.
struct BridgePortInfo {
  int index = 0;          // the port's ifindex
  int master = 0;         // the bridge's ifindex (IFLA_MASTER)
  int state = 0;  // BR_STATE_*: 0 disabled, 1 listening, 2 learning, 3 forwarding, 4 blocking
  bool hairpin = false;   // IFLA_BRPORT_MODE
  bool isolated = false;  // IFLA_BRPORT_ISOLATED
  bool learning = false;  // IFLA_BRPORT_LEARNING
  std::vector<BridgeVlan> vlans;  // empty unless the bridge filters VLANs
};

// What the bridge reports about `port` (a link enslaved to a bridge; read by
// its index, named by its name in errors). Not a port: absl::NotFound.
// Its VLANs come only with a dump of every port of every bridge in the
// namespace (AF_BRIDGE), whose cost grows with the node's containers.
absl::StatusOr<BridgePortInfo> GetBridgePort(NetlinkSocket& sock, const LinkInfo& port);
// The same without `vlans`, from one GET of the link (the bridge's port
// attributes come with it): what a caller that needs no VLANs should use.
absl::StatusOr<BridgePortInfo> GetBridgePortState(NetlinkSocket& sock, const LinkInfo& port);

// Adds `vlan` to the VLAN table of port `port` (master side).
absl::Status BridgeVlanAdd(NetlinkSocket& sock, const LinkInfo& port, const BridgeVlan& vlan);
// Removes VLAN `vid` from port `port`; missing is absl::NotFound.
absl::Status BridgeVlanDel(NetlinkSocket& sock, const LinkInfo& port, uint16_t vid);

// The request SetBridgePortFlags sends for port `index` (for tests; no I/O).
absl::StatusOr<NlMsgPtr> BuildBridgePortFlagsRequest(int index, const BridgePortFlags& flags);
// The request BridgeVlanAdd (`add`: RTM_SETLINK) or BridgeVlanDel (RTM_DELLINK,
// with only a vid) sends for port `index` (for tests; no I/O).
absl::StatusOr<NlMsgPtr> BuildBridgeVlanRequest(int index, const BridgeVlan& vlan, bool add);

}  // namespace cni::net

// Configuration of the bridge plugin: every key of the network configuration
// it reads, parsed and validated before any side effect (DESIGN rule 3).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/base/ip.h"
#include "cni/fw/backend.h"
#include "cni/plugin/config_schema.h"
#include "cni/plugin/plugin_keys.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"

namespace cni::bridge {

inline constexpr absl::string_view kDefaultBridge = "cni0";

struct Config {
  std::string bridge = std::string(kDefaultBridge);
  bool is_gateway = false;          // also true when isDefaultGateway is
  bool is_default_gateway = false;
  bool force_address = false;
  bool ip_masq = false;
  std::string ip_masq_backend;      // "", "iptables" or "nftables"
  // With ipMasq, the backend its rules go through: ipMasqBackend, else the
  // default (fw::SelectBackend), resolved once by Parse.
  fw::Backend masq_backend = fw::Backend::kNftables;
  int mtu = 0;                      // 0: kernel default
  bool hairpin = false;
  bool promisc = false;
  // 0: none. Alone, the port's access VLAN; with a trunk, its native VLAN
  // (pvid, untagged), which is VLAN 1 for a trunk without "vlan".
  int vlan = 0;
  std::vector<int> trunk;           // tagged VLANs, sorted, unique
  // Keep the bridge's default VLAN 1 on a port with vlan/vlanTrunk. Upstream's
  // default is false since 1.8.0 (full VLAN isolation).
  bool preserve_default_vlan = false;
  bool macspoofchk = false;
  bool enable_dad = false;
  bool disable_container_interface = false;
  bool port_isolation = false;
  // The container MAC: CNI_ARGS MAC, then args.cni.mac, then
  // runtimeConfig.mac; the later source wins.
  std::optional<net::MacAddress> mac;
  std::string ipam_type;            // "" = layer 2 only, no IPAM
  // The config's own "dns", only when it sets a field (then it replaces IPAM's).
  std::optional<Dns> dns;

  bool vlan_filtering() const { return vlan != 0 || !trunk.empty(); }

  // Parses and validates the configuration (args.conf) and the MAC in
  // CNI_ARGS (args.args). Wrong types are code 6; invalid values code 7, with
  // upstream's wording where it has one. Does not judge what only some
  // commands need; see RequireSupported.
  static absl::StatusOr<Config> Parse(const CmdArgs& args);
  // Its keys (config.cc): the table Parse reads and the rows TeardownConfig
  // reads of it (PluginKeys, cni/plugin/plugin_keys.h).
  static const PluginKeys<Config> kKeys;
};

// The configuration DEL and GC read: only what the teardown needs (the
// network name and CNI_IFNAME/NETNS come from args; here "ipMasq",
// "macspoofchk" and the IPAM type), so that an ADD refused for another key
// ("bridge": "../x", "mtu": "x", ...) leaves a DEL that succeeds, and a
// configuration broken since ADD still removes the attachment. A wrong JSON
// type of a key it reads is still code 6. The other fields keep defaults.
using TeardownConfig = TeardownOf<Config>;

// What ADD, CHECK and STATUS need beyond parsing: a container MAC the kernel
// accepts for a veth (unicast, not all zeros). DEL does not call this, so a
// container that upstream's bridge set up (or an ADD that failed) can always
// be torn down.
absl::Status RequireSupported(const Config& config);

}  // namespace cni::bridge

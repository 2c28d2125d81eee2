// Configuration of the ptp plugin: the keys of the network configuration it
// reads, parsed and validated before any side effect (DESIGN rule 3).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/fw/backend.h"
#include "cni/plugin/config_schema.h"
#include "cni/plugin/plugin_keys.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"

namespace cni::ptp {

struct Config {
  bool ip_masq = false;
  std::string ip_masq_backend;  // "", "iptables" or "nftables"
  // With ipMasq, the backend its rules go through: ipMasqBackend, else the
  // default (fw::SelectBackend), resolved once by Parse.
  fw::Backend masq_backend = fw::Backend::kNftables;
  int mtu = 0;                  // 0: kernel default
  std::string ipam_type;        // ipam.type, never empty after parsing
  // The config's own "dns", only when it sets at least one field: upstream
  // lets it replace the IPAM plugin's DNS then, and keeps IPAM's otherwise.
  std::optional<Dns> dns;

  // Parses and validates the ptp keys of `args.conf`. Wrong types are code 6,
  // invalid values (MTU out of range, unknown backend, no ipam type) code 7.
  static absl::StatusOr<Config> Parse(const CmdArgs& args);
  // Its keys (config.cc): the table Parse reads and the rows TeardownConfig
  // reads of it (PluginKeys, cni/plugin/plugin_keys.h).
  static const PluginKeys<Config> kKeys;
};

// The configuration DEL and GC read: only what the teardown needs ("ipMasq"
// and the IPAM type; the network name and CNI_IFNAME/NETNS come from args),
// so that an ADD refused for another key ("mtu": "x", a bad ipMasqBackend,
// no ipam) leaves a DEL that succeeds, and a configuration broken since ADD
// still removes the attachment. A wrong JSON type of "ipMasq" is code 6.
using TeardownConfig = TeardownOf<Config>;

// What ADD, CHECK and STATUS need beyond parsing: nothing today (Parse
// resolves the ipMasq backend). DEL does not call this, so a container set up
// by upstream's ptp can always be torn down.
absl::Status RequireSupported(const Config& config);

}  // namespace cni::ptp

// Configuration of the ptp plugin: the keys of the network configuration it
// reads, parsed and validated before any side effect (DESIGN rule 3).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"

namespace cni::ptp {

struct Config {
  bool ip_masq = false;
  std::string ip_masq_backend;  // "", "iptables" or "nftables"
  int mtu = 0;                  // 0: kernel default
  std::string ipam_type;        // ipam.type, never empty after parsing
  // The config's own "dns", only when it sets at least one field: upstream
  // lets it replace the IPAM plugin's DNS then, and keeps IPAM's otherwise.
  std::optional<Dns> dns;

  // Parses and validates the ptp keys of `args.conf`. Wrong types are code 6,
  // invalid values (MTU out of range, unknown backend, no ipam type) code 7.
  static absl::StatusOr<Config> Parse(const CmdArgs& args);
  // The configuration keys Parse reads: its key table's names and the keys
  // read beside it ("ipam": the IPAM plugin it delegates to). The README's
  // "## Keys" table lists exactly these (tests/unit/readme_keys).
  static std::vector<std::string> KeyNames();
};

// The configuration DEL and GC read: only what the teardown needs ("ipMasq"
// and the IPAM type; the network name and CNI_IFNAME/NETNS come from args),
// so that an ADD refused for another key ("mtu": "x", a bad ipMasqBackend,
// no ipam) leaves a DEL that succeeds, and a configuration broken since ADD
// still removes the attachment. A wrong JSON type of "ipMasq" is code 6.
struct TeardownConfig : Config {
  static absl::StatusOr<TeardownConfig> Parse(const CmdArgs& args);
};

}  // namespace cni::ptp

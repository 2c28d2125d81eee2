// Configuration of the portmap plugin: the `portMappings` capability from
// runtimeConfig plus the plugin's own keys, validated completely before any
// rule is built (every value reaches a rule).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cni/base/ip.h"
#include "cni/fw/backend.h"
#include "cni/fw/protocols.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"

namespace cni::portmap {

struct PortMapping {
  int host_port = 0;
  int container_port = 0;
  fw::L4Protocol protocol = fw::L4Protocol::kTcp;  // "protocol", any case
  std::optional<net::IpAddress> host_ip;           // none: every local address
};

struct Config {
  std::string name;
  fw::Backend backend = fw::Backend::kIptables;
  bool snat = true;
  bool masq_all = false;
  int mark_masq_bit = 13;
  std::optional<std::string> external_set_mark_chain;  // iptables only
  std::vector<std::string> conditions_v4;
  std::vector<std::string> conditions_v6;
  std::vector<PortMapping> mappings;
  std::optional<Result> prev_result;
  // The container's addresses, from prevResult (the sandbox interface named
  // CNI_IFNAME, or any address not pinned to a host interface).
  std::optional<net::IpPrefix> cont_v4;
  std::optional<net::IpPrefix> cont_v6;

  // ADD and CHECK: every key and the mappings (runtimeConfig), the container's
  // addresses from prevResult (the interface named args.ifname). Failures are
  // "failed to parse config: ...": wrong JSON types code 6; bad values (ports
  // outside 1-65535, unknown protocol, hostIP not an address, markMasqBit
  // outside 0-31 or together with externalSetMarkChain, conditions that could
  // inject commands, unknown backend) code 7.
  static absl::StatusOr<Config> Parse(const CmdArgs& args);
};

// What DEL and GC need, read leniently: a teardown must work for every
// configuration whose rules exist, also one our ADD would refuse (upstream's
// portmap set it up, or a value only ADD uses went bad since). Only wrong
// JSON types fail (code 6, as upstream's decoder); values are not judged.
struct TeardownConfig {
  std::string name;           // the network: the iptables chain names hash it
  bool has_mappings = false;  // none: DEL has nothing to do
  std::vector<int> udp_host_ports;  // their conntrack entries are flushed
  // The configured backend is nftables: the iptables rules are most likely
  // absent, so iptables probes for the container's chain before reading
  // the whole table.
  bool nftables_configured = false;
  // The container's addresses from prevResult (none without one, or when it
  // does not parse): which rules whose comment is the bare container ID are
  // this attachment's (nftables; see nftables.cc).
  std::vector<net::IpAddress> addresses;

  static absl::StatusOr<TeardownConfig> Parse(const CmdArgs& args);
  // The teardown of what `c` set up (a failed ADD undoes itself with DEL).
  static TeardownConfig Of(const Config& c);
};

// Mappings whose hostIP (if any) is of the family of `container`: the ones
// that get rules for that address.
std::vector<PortMapping> MappingsFor(const Config& c, const net::IpPrefix& container);

}  // namespace cni::portmap

// Configuration of the portmap plugin: the `portMappings` capability from
// runtimeConfig plus the plugin's own keys, validated completely before any
// rule is built (every value reaches a rule).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cni/fw/backend.h"
#include "cni/fw/protocols.h"
#include "cni/net/ip.h"
#include "cni/types.h"

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
};

// Wrong JSON types: code 6. Bad values (ports outside 1-65535, unknown
// protocol, hostIP not an address, markMasqBit outside 0-31 or together with
// externalSetMarkChain, conditions that could inject commands, unknown
// backend): code 7.
absl::StatusOr<Config> ParseConfig(const NetConf& conf, absl::string_view ifname);

// Mappings whose hostIP (if any) is of the family of `container`: the ones
// that get rules for that address.
std::vector<PortMapping> MappingsFor(const Config& c, const net::IpPrefix& container);

}  // namespace cni::portmap

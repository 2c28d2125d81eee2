// Configuration of the firewall plugin (chained only): which packet filter
// holds the rules, the admin chain, the firewalld zone, the ingress policy,
// and the container's addresses and bridge from prevResult.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cni/base/ip.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"

namespace cni::firewall {

// "backend": where the rules go. kAuto ("" or absent): firewalld when it
// answers on the system bus, else iptables when its programs exist, else
// nftables.
enum class BackendKind { kAuto, kIptables, kFirewalld, kNftables };

// "ingressPolicy": who may open connections to the container.
//   open: anyone (no isolation rules; the default).
//   same-bridge: only hosts of the container's bridge (docker's isolation
//     between networks).
//   isolated: nobody on another bridge, and not the bridge's other
//     containers either (docker's enable_icc=false).
// The host itself always may (its traffic does not cross FORWARD).
enum class IngressPolicy { kOpen, kSameBridge, kIsolated };

struct Config {
  std::string name;                          // the network
  BackendKind backend = BackendKind::kAuto;  // "backend"
  std::string admin_chain = "CNI-ADMIN";     // "iptablesAdminChainName"
  std::string zone = "trusted";              // "firewalldZone"
  IngressPolicy ingress_policy = IngressPolicy::kOpen;
  std::optional<Result> prev_result;  // the result of the plugins before
  // Every address of prevResult as a host prefix (a /32 or /128), as
  // upstream puts them in rules and zones.
  std::vector<net::IpPrefix> addresses;
  // prevResult's first interface: the bridge, when the bridge plugin came
  // first (the ingress policies need it).
  std::string bridge;

  // ADD and CHECK: every key judged (wrong JSON types code 6; unknown
  // backend or ingressPolicy, a bad chain or zone name code 7).
  static absl::StatusOr<Config> Parse(const CmdArgs& args);
};

// What DEL and GC read: the same keys, leniently, so that what upstream or
// an older configuration set up can always be removed. Only wrong JSON types
// fail (code 6); an unknown backend reads as auto, an unknown policy as open.
struct TeardownConfig {
  Config config;

  static absl::StatusOr<TeardownConfig> Parse(const CmdArgs& args);
};

// The name a backend value is spelled with in configurations ("" for auto).
const char* BackendName(BackendKind b);

}  // namespace cni::firewall

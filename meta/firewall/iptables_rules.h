// The iptables rules of upstream's firewall plugin, each described once
// (cni/fw/ipt_rule.h: rendered as the restore line iptables-save prints, or
// in iptables-nft's encoding), plus the ingress policy's isolation chains
// (isolation.cc).
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "cni/base/ip.h"
#include "cni/fw/iptables.h"
#include "cni/fw/ipt_rule.h"
#include "firewall.h"

namespace cni::firewall::ipt {

inline constexpr const char* kFilter = "filter";
inline constexpr const char* kForwardChain = "FORWARD";
inline constexpr const char* kPrivChain = "CNI-FORWARD";
inline constexpr const char* kRulesComment = "CNI firewall plugin rules";
inline constexpr const char* kAdminComment = "CNI firewall plugin admin overrides";

// An address's two rules in CNI-FORWARD: replies to the container's
// connections, and everything it sends.
std::vector<fw::IptRule> AddressRules(const net::IpPrefix& host);
// The restore lines making what is missing of the shared part: the chains
// CNI-FORWARD and `admin`, FORWARD's jump to CNI-FORWARD and CNI-FORWARD's
// jump to `admin`, each jump put first as upstream does.
std::string SharedLines(const fw::IptTable& t, const std::string& admin);

// The ingress policy's isolation chains for c.bridge (upstream's
// CNI-ISOLATION-STAGE-1/2), in each family that c has addresses of. Shared
// by the bridge's containers: DEL leaves them, as upstream does.
absl::Status Isolate(LazyNetfilter& nf, const Config& c);

}  // namespace cni::firewall::ipt

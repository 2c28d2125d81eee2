// Configuration of the dhcp IPAM plugin: the "ipam" object's keys (upstream's
// daemonSocketPath, request, provide, priority) resolved against CNI_ARGS into
// what the daemon's client sends.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cni/protocol/skel.h"

namespace cni::dhcp {

// The options the client asks for unless a "request" entry sets skipDefault:
// upstream's two (routers, subnet-mask) and those the result is built from
// (domain-name-servers, domain-name, static-routes, classless-static-routes).
inline constexpr uint8_t kDefaultRequest[] = {3, 1, 6, 15, 33, 121};

// "family": which addresses the daemon acquires for the attachment.
enum class Family { kIpv4, kIpv6, kDual };

struct Config {
  std::string socket_path;     // "daemonSocketPath", default /run/cni/dhcp.sock
  Family family = Family::kIpv4;  // "family": "ipv4" (default), "ipv6" or "dual"
  std::string parameter_list;  // option 55: the "request" codes, then the defaults
  // "provide": {option, value | fromArg}, in order; a fromArg found in
  // CNI_ARGS follows (and so replaces) the value, as upstream.
  std::vector<std::pair<uint8_t, std::string>> provide;
  // DHCPv6: the DUID (a "provide" of dhcp6.client-id; empty: DUID-LL of
  // the interface), the "request"ed DHCPv6 options and the "provide"d ones.
  std::string duid;
  std::vector<uint16_t> request6;
  std::vector<std::pair<uint16_t, std::string>> provide6;
  bool rapid_commit = true;  // "rapidCommit": DHCPv6 SOLICIT asks for Rapid Commit
  int priority = 0;  // "priority": metric of the result's routes
  // "timeout" (seconds): how long ADD waits for the daemon, which gives up
  // its DHCP exchange just before (default 90 s: RFC 2131's back-off sends
  // about 8 DISCOVERs by then, and a kubelet's 2-minute CRI timeout has not
  // killed the runtime's call yet). DEL, CHECK and STATUS wait at most 10 s
  // of it, GC 30 s: they only talk to the daemon, and a DEL's RELEASE is sent
  // without waiting for an answer.
  absl::Duration add_budget = absl::Seconds(90);

  absl::Duration DelBudget() const { return std::min(add_budget, absl::Seconds(10)); }
  absl::Duration GcBudget() const { return std::min(add_budget, absl::Seconds(30)); }

  bool v4() const { return family != Family::kIpv6; }
  bool v6() const { return family != Family::kIpv4; }

  // Code 7 for an unknown option name or a value over 255 bytes; code 6 for
  // a key of the wrong JSON type.
  static absl::StatusOr<Config> Parse(const CmdArgs& args);
  // The configuration keys Parse reads: those of the ipam object by name,
  // the others by their path ("runtimeConfig.ips"). The README's key table
  // lists exactly these (tests/unit/readme_keys).
  static std::vector<std::string> KeyNames();
};

}  // namespace cni::dhcp

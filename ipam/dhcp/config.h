// Configuration of the dhcp IPAM plugin: the "ipam" object's keys (upstream's
// daemonSocketPath, request, provide, priority) resolved against CNI_ARGS into
// what the daemon's client sends.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "cni/protocol/skel.h"

namespace cni::dhcp {

// The options the client asks for unless a "request" entry sets skipDefault:
// upstream's two (routers, subnet-mask) and those the result is built from
// (domain-name-servers, domain-name, static-routes, classless-static-routes).
inline constexpr uint8_t kDefaultRequest[] = {3, 1, 6, 15, 33, 121};

struct Config {
  std::string socket_path;     // "daemonSocketPath", default /run/cni/dhcp.sock
  std::string parameter_list;  // option 55: the "request" codes, then the defaults
  // "provide": {option, value | fromArg}, in order; a fromArg found in
  // CNI_ARGS follows (and so replaces) the value, as upstream.
  std::vector<std::pair<uint8_t, std::string>> provide;
  int priority = 0;  // "priority": metric of the result's routes

  // Code 7 for an unknown option name or a value over 255 bytes; code 6 for
  // a key of the wrong JSON type.
  static absl::StatusOr<Config> Parse(const CmdArgs& args);
};

}  // namespace cni::dhcp

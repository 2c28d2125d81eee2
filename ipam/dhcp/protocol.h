// The plugin <-> daemon protocol. It is ours, not upstream's (Go net/rpc over
// HTTP): one JSON request per connection on the daemon's unix socket. The
// plugin writes the request and shuts down its write side; the daemon answers
// with one JSON document and closes.
//
//   request   {"op": "ADD" | "DEL" | "CHECK" | "STATUS" | "GC",
//              "lease": <LeaseSpec>            (ADD, DEL, CHECK),
//              "budgetMs": N                   (ADD: how long the plugin waits;
//                                               the daemon gives up its exchange
//                                               before that, so its own error
//                                               reaches the plugin),
//              "network": "...", "valid": [{"containerID", "ifname"}]   (GC)}
//   response  {"result": <CNI 1.1.0 result>}   (ADD, CHECK)
//             {}                               (DEL, STATUS, GC)
//             {"error": {"code": N, "msg": "..."}}
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cni/base/json.h"

namespace cni::dhcp {

// The socket both roles default to (upstream's).
inline constexpr char kDefaultSocketPath[] = "/run/cni/dhcp.sock";

// Sends `request` to the daemon at `socket_path` and returns its answer. A
// daemon that is not listening, or that has not answered within `budget`
// (connecting, writing and reading all count), is code 11 (try again later);
// an "error" answer comes back as a status with the daemon's code and message.
absl::StatusOr<Json> CallDaemon(const std::string& socket_path, const Json& request, absl::Duration budget);

// Reads `fd` to end of file, at most `limit` bytes (code 5 beyond).
absl::StatusOr<std::string> ReadToEnd(int fd, size_t limit);

// The "error" answer for a failed status.
Json ErrorAnswer(const absl::Status& status);

}  // namespace cni::dhcp

// Network sysctls of a namespace, through /proc/sys/net.
//
// /proc/sys/net shows the namespace of the thread that opens the file, so the
// file is opened (and read or written) on a Netns::Run thread inside the target
// namespace. /sys/class/net is never used for a container: sysfs shows the
// namespace of whoever mounted it, not the caller's.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/net/netns.h"

namespace cni::net {

// `key` is a path under /proc/sys, "net/ipv6/conf/eth0/disable_ipv6", or the
// dotted form "net.ipv4.ip_forward". Use the slash form whenever an interface
// name is part of the key: names may contain dots ("eth0.100"). Only keys under
// net/ are accepted (".." and empty parts are refused, code 7).

// The value with surrounding whitespace trimmed, read on a thread inside `ns`.
// A missing key (e.g. no such interface) is absl::NotFound with code 5.
absl::StatusOr<std::string> ReadSysctl(const Netns& ns, absl::string_view key);
// Writes `value` (one write, on a thread inside `ns`). Errors name the key:
// `writing sysctl net/ipv4/ip_forward: ...`; a missing key is absl::NotFound.
absl::Status WriteSysctl(const Netns& ns, absl::string_view key, absl::string_view value);
// ReadSysctl in the calling thread's own namespace (no thread is started).
absl::StatusOr<std::string> ReadSysctlHere(absl::string_view key);
// WriteSysctl in the calling thread's own namespace (no thread is started).
absl::Status WriteSysctlHere(absl::string_view key, absl::string_view value);

}  // namespace cni::net

// The private world the checks run in: a host network namespace and a mount
// namespace of the tool's own, so that nothing a plugin does reaches the
// machine, with container namespaces made inside it.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace conformance {

// Where the tool keeps what is its own (netns pins, the predecessors' result
// cache); inside the private /run, and never watched for leftovers.
inline constexpr const char* kToolDir = "/run/cni-conformance";

// Moves the calling thread (call it from main() before any thread starts)
// into a new network and mount namespace: every mount private, /sys
// remounted (it shows the new namespace), empty tmpfs mounts on /run and on
// /var/lib/cni (so named namespaces, plugin state and host-local's store are
// private and die with the process), and on every directory of `data_dirs`
// that is not already under one of those; lo brought up. Plugins started
// afterwards inherit all of it. Needs root (CAP_SYS_ADMIN, CAP_NET_ADMIN).
absl::Status EnterPrivateHost(const std::vector<std::string>& data_dirs);

// Container namespaces pinned under kToolDir/netns.
class Sandboxes {
 public:
  Sandboxes() = default;
  ~Sandboxes();
  Sandboxes(const Sandboxes&) = delete;
  Sandboxes& operator=(const Sandboxes&) = delete;

  // A new network namespace; returns its path (the CNI_NETNS to pass).
  absl::StatusOr<std::string> Create();
  // Unpins the namespace at `path` (made by Create); its links go with it
  // once nothing else holds it.
  absl::Status Remove(const std::string& path);

 private:
  std::vector<std::string> pinned_;
  int counter_ = 0;
};

// A veth pair in the private host namespace, both ends up: `name` (what a
// macvlan, ipvlan or vlan config names as its "master", or the "device"
// host-device moves) and its peer `name` + "-p" (cut to 15 bytes).
absl::Status CreateHostVeth(const std::string& name);

// The peer's name CreateHostVeth gives the pair `name`.
std::string HostVethPeer(const std::string& name);

}  // namespace conformance

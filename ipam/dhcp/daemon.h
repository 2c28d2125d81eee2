// "dhcp daemon": the long-running host process that keeps one DHCP client
// (Lease) per attachment and answers the plugin on a unix socket
// (protocol.h). Upstream's flags; systemd socket activation (LISTEN_FDS=1).
//
// Restart: the lease table is persisted (<statedir>/leases.json, rewritten
// after every acquisition, renewal, release and loss). A daemon that starts
// finds it, and every lease whose namespace and interface still exist is
// renewed at once with its server (unicast REQUEST for the same address, the
// address the container already has), then maintained as before; one whose
// namespace is gone is dropped. A daemon that is stopped (SIGTERM) does not
// release its leases: the containers keep their addresses across a restart.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client.h"
#include "cni/base/json.h"
#include "lease.h"

namespace cni::dhcp {

struct DaemonOptions {
  std::string socket_path;           // -socketpath (default /run/cni/dhcp.sock)
  std::string pidfile;               // -pidfile (absolute), none by default
  std::string host_prefix;           // -hostprefix: prefixed to the socket and every netns path
  std::string state_dir = "/run/cni/dhcp";  // -statedir (ours): where leases.json lives
  Timing timing;                     // -timeout, -resendmax, -resendtimeout, -broadcast
};

// Go flag syntax, as upstream: "-name value", "-name=value", "--name"; boolean
// -broadcast alone or "=true"/"=false"; durations as "10s", "1m30s", "500ms".
absl::StatusOr<DaemonOptions> ParseDaemonFlags(const std::vector<std::string>& args);

class Daemon {
 public:
  explicit Daemon(DaemonOptions options) : options_(std::move(options)) {}
  // Takes over the leases a previous daemon persisted (see above).
  void Resume();
  // Answers one request (protocol.h).
  Json Handle(const Json& request);

 private:
  absl::StatusOr<Result> Add(LeaseSpec spec);
  absl::Status Del(const LeaseSpec& spec);
  absl::StatusOr<Result> Check(const LeaseSpec& spec);
  absl::Status Gc(const std::string& network, const Json& valid);
  std::shared_ptr<std::mutex> AttachmentLock(const std::string& id);
  std::shared_ptr<Lease> Find(const std::string& id);
  void Save();
  std::string StatePath() const;

  const DaemonOptions options_;
  std::mutex mu_;  // guards the maps; never held while a lease stops
  std::map<std::string, std::shared_ptr<Lease>> leases_;
  std::map<std::string, std::shared_ptr<std::mutex>> locks_;  // one per attachment: ADD/DEL/CHECK serialize
  std::mutex save_mu_;
};

// The daemon process: `args` are the words after "daemon". Returns the exit code.
int DaemonMain(const std::vector<std::string>& args);

}  // namespace cni::dhcp

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
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client.h"
#include "cni/base/json.h"
#include "lease.h"
#include "lease6.h"

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
  // Answers one request (protocol.h). `seq` numbers the connections in the
  // order they were accepted, which is the order the plugins sent them in.
  Json Handle(const Json& request, uint64_t seq);

 private:
  // `budget`: how long the plugin waits for the answer (none: -resendtimeout).
  absl::StatusOr<Result> Add(LeaseSpec spec, std::optional<absl::Duration> budget, uint64_t seq);
  absl::Status Del(const LeaseSpec& spec, uint64_t seq);
  absl::StatusOr<Result> Check(const LeaseSpec& spec);
  absl::Status Gc(const std::string& network, const Json& valid, uint64_t seq);
  std::shared_ptr<std::mutex> AttachmentLock(const std::string& id);
  // The lease of one family of an attachment (keyed by Key()), nullptr without one.
  std::shared_ptr<LeaseBase> Find(const std::string& key);
  // The table's key of an attachment's lease of one family: the client
  // identifier for IPv4 (as before DHCPv6 existed), "<id>/v6" for IPv6
  // (no client identifier ends so: an interface name has no '/').
  static std::string Key(const std::string& id, bool v6) { return v6 ? id + "/v6" : id; }
  void Save();
  std::string StatePath() const;

  const DaemonOptions options_;
  std::mutex mu_;  // guards the maps; never held while a lease stops
  std::map<std::string, std::shared_ptr<LeaseBase>> leases_;  // by Key()
  std::map<std::string, std::shared_ptr<std::mutex>> locks_;  // one per attachment: ADD/DEL/CHECK serialize
  // The latest DEL of each attachment: its connection's number and when it
  // ran. An ADD whose connection came before it (a plugin killed after
  // sending its ADD, whose rollback or runtime DEL overtook it here) must
  // not acquire a lease nobody will release. Kept for an hour.
  struct Deleted {
    uint64_t seq;
    absl::Time at;
  };
  std::map<std::string, Deleted> deleted_;
  // Leases whose first exchange is running (ADD), for a DEL to cancel.
  std::map<std::string, std::shared_ptr<LeaseBase>> acquiring_;
  std::mutex save_mu_;
};

// The daemon process: `args` are the words after "daemon". Returns the exit code.
int DaemonMain(const std::vector<std::string>& args);

}  // namespace cni::dhcp

// The dhcp IPAM plugin role: every command is a request to the daemon
// ("dhcp daemon", daemon.h), which runs the DHCP clients.
#pragma once

#include "absl/status/statusor.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"
#include "config.h"

namespace cni::dhcp {

// ADD: the daemon acquires a lease (or returns the one it keeps for this
// attachment) and the result is built from it. Code 11 when the daemon is not
// running or no server answered within its -resendtimeout.
absl::StatusOr<Result> Add(const CmdArgs& args, const Config& config);
// DEL: the daemon releases the lease; an attachment it does not know is success.
absl::Status Del(const CmdArgs& args, const Config& config);
// CHECK: the daemon still maintains a bound lease for the attachment, and the
// address in prevResult (when given) is the lease's.
absl::Status Check(const CmdArgs& args, const Config& config);
// STATUS: the daemon answers (code 50 when it does not).
absl::Status Status(const CmdArgs& args, const Config& config);
// GC: the daemon releases this network's leases whose attachment is not in
// cni.dev/valid-attachments.
absl::Status Gc(const CmdArgs& args, const Config& config);

PluginFuncs Funcs();

}  // namespace cni::dhcp

// The tap plugin: a persistent tap device in the container namespace, named
// CNI_IFNAME, optionally enslaved to a bridge there, with the IPAM result's
// addresses (or layer 2 only). A process in the container (a VM monitor)
// opens it later with TUNSETIFF.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cni/protocol/invoke.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"
#include "config.h"

namespace cni::tap {

absl::StatusOr<Result> Add(const CmdArgs& args, const Config& config);
absl::Status Del(const CmdArgs& args, const IpamTeardownConfig& config);
absl::Status Check(const CmdArgs& args, const Config& config);
// The command table: skel parses Config once, then calls the handler.
PluginFuncs Funcs();

// Result layout: interfaces[0] is the tap in the container.
inline constexpr int kContainerIndex = 0;

}  // namespace cni::tap

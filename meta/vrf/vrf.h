// The vrf plugin (chained): puts CNI_IFNAME into a VRF inside the container,
// creating the VRF when it is missing, and re-adds what enslaving removes
// (IPv6 global addresses without keep_addr_on_down, the routes through the
// interface, which go to the VRF's table). Several interfaces may share one
// VRF; DEL releases the interface and deletes the VRF with its last member.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"
#include "config.h"

namespace cni::vrf {

// Enslaves the interface; a failure releases it, puts its addresses and
// routes back and deletes a VRF this call created.
absl::StatusOr<Result> Add(const CmdArgs& args, const Config& config);
// Releases the interface from the VRF and deletes the VRF when no link is
// left in it. A namespace, VRF or interface that is gone is success.
absl::Status Del(const CmdArgs& args, const Config& config);
// The VRF exists (with `table`, when set) and the interface is in it.
absl::Status Check(const CmdArgs& args, const Config& config);
// 0.3.1 and later, as upstream.
std::vector<std::string> Versions();
PluginFuncs Funcs();

}  // namespace cni::vrf

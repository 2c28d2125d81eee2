// The flannel meta plugin: reads the subnet file flanneld wrote for this node,
// builds the configuration of the plugin that does the work (bridge with
// host-local by default) exactly as upstream's flannel CNI plugin
// (flannel-io/cni-plugin v1.9.1-flannel1) does, saves it under
// <dataDir>/<containerID> and delegates; DEL delegates with what was saved.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cni/base/json.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"
#include "config.h"
#include "subnet_env.h"

namespace cni::flannel {

// The delegate's configuration: `delegate` as given, with "name", "type"
// (default bridge), "ipMasq" (default !FLANNEL_IPMASQ), "mtu" (default
// FLANNEL_MTU), for bridge "isGateway" (default true), "cniVersion" (when the
// configuration has one), "runtimeConfig" (when given) and "ipam": `ipam` as
// given with "type" (default host-local), "ranges" (one range set per subnet,
// v4 first) and "routes" (ipam's own, then one per network, v4 first). Code 6
// when ipam.routes does not decode as a list of routes.
absl::StatusOr<Json> BuildDelegate(const Config& config, const SubnetEnv& env);

// The bytes upstream saves and hands to the delegate for `delegate`: Go's
// json.Marshal of the map (compact, keys sorted, HTML characters escaped,
// whole numbers without a fraction, as Go's float64 prints them).
std::string MarshalDelegate(const Json& delegate);

// The command table for PluginMain: ADD, DEL, CHECK, GC and STATUS, whose
// handlers are file-local in flannel.cc.
PluginFuncs Funcs();

}  // namespace cni::flannel

// DEL of a plugin that owns one link in the container (macvlan, tap, dummy).
#pragma once

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "cni/protocol/skel.h"

namespace cni::net {

// IPAM DEL first when `ipam_type` is set, whatever the namespace's state (so
// a namespace that is gone does not leak the address), then deletes the link
// CNI_IFNAME in CNI_NETNS and, when `temp_prefix` is set, the link under the
// attachment's temporary name (TemporaryLinkName(temp_prefix, ...): an ADD
// killed before its rename left it there). An empty CNI_NETNS, a namespace
// that is gone or a missing link is success. An IPAM DEL that may finish on a
// retry (IpamDelMayFinishOnRetry) stops there and keeps the link for it; past
// any other failure it keeps going and reports all of them, prefixed with
// `plugin`.
absl::Status DeleteContainerLinkAndAddress(const CmdArgs& args, absl::string_view ipam_type,
                                           absl::string_view plugin, absl::string_view temp_prefix = {});

}  // namespace cni::net

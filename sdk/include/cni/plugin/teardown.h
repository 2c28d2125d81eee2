// DEL of a plugin that owns one link in the container (macvlan, tap, dummy).
#pragma once

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "cni/protocol/skel.h"

namespace cni::net {

// IPAM DEL first when `ipam_type` is set, whatever the namespace's state (so
// a namespace that is gone does not leak the address), then deletes the link
// CNI_IFNAME in CNI_NETNS; an empty CNI_NETNS, a namespace that is gone or a
// missing link is success. Keeps going past a failure and reports all of
// them, prefixed with `plugin`.
absl::Status DeleteContainerLinkAndAddress(const CmdArgs& args, absl::string_view ipam_type,
                                           absl::string_view plugin);

}  // namespace cni::net

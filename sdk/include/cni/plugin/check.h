// CHECK's common steps for an interface plugin: find the container interface
// in prevResult, then verify its addresses and the routes on the kernel side.
// Failures are absl::FailedPrecondition (CNI code 999, as upstream reports
// CHECK mismatches) with a message that names what is missing; callers
// prefix their plugin's name (cni::Annotate).
#pragma once

#include <cstddef>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/net/link.h"
#include "cni/net/netlink.h"
#include "cni/net/netns.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"

namespace cni::net {

// What CHECK starts from, once its first steps passed.
struct CheckStart {
  Result prev;      // prevResult
  Netns container;  // CNI_NETNS
};

// CHECK's first steps for an interface plugin: prevResult is required (code
// 7 `<plugin>: required prevResult missing` without; read here, not by
// Config::Parse, so a malformed one cannot stop a DEL), CNI_NETNS is
// opened, and IPAM's CHECK runs when `ipam_type` is set.
absl::StatusOr<CheckStart> StartCheck(const CmdArgs& args, absl::string_view ipam_type,
                                      absl::string_view plugin);

// The index of the interface `ifname` with sandbox `netns` in prev.interfaces
// (the last one, if it lists several).
absl::StatusOr<size_t> FindPrevInterface(const Result& prev, absl::string_view ifname,
                                         absl::string_view netns);

// Every prevResult address of interface `index` (or of no interface) is on `link`.
absl::Status CheckInterfaceAddresses(NetlinkSocket& sock, const LinkInfo& link, const Result& prev,
                                     size_t index);

// Every prevResult route is in the socket's namespace (destination, and
// gateway when given).
absl::Status CheckRoutes(NetlinkSocket& sock, const Result& prev);

// The link `want.name` exists, is of kind `kind` ("" = any) and has
// want.mac when prevResult gives one.
absl::StatusOr<LinkInfo> CheckPrevLink(NetlinkSocket& sock, const Interface& want,
                                       absl::string_view kind);

}  // namespace cni::net

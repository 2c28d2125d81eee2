// CHECK's common steps for an interface plugin: find the container interface
// in prevResult, then verify its addresses and the routes on the kernel side.
//
// The CHECK error-code rule, one for every plugin of the SDK:
//  - what the command was given is wrong (no prevResult, or one without the
//    container interface CNI_IFNAME): code 7, invalid network
//    configuration, since prevResult is part of it (FindPrevInterface,
//    cni/plugin/chained.h);
//  - the kernel's state does not match (an address, route or link that
//    prevResult or the configuration names is missing or different): code
//    999. The spec reserves no code for a mismatch (docs/spec/SPEC-1.0.0.md,
//    "CHECK" and "Error"): 7 would tell the runtime its configuration is
//    invalid, which it is not; upstream's plugins report it as an untyped
//    error, which is 999. The checks below fail as absl::FailedPrecondition
//    without a CNI code (so 999) and name what is missing; callers prefix
//    their plugin's name (cni::Annotate).
#pragma once

#include <cstddef>
#include <vector>

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
// (the last one, if it lists several). None: code 7 `prevResult has no
// interface "eth0" with sandbox "/var/run/netns/x"`.
absl::StatusOr<size_t> FindPrevInterface(const Result& prev, absl::string_view ifname,
                                         absl::string_view netns);

// Every prevResult address of interface `index` (or of no interface) is on `link`.
absl::Status CheckInterfaceAddresses(NetlinkSocket& sock, const LinkInfo& link, const Result& prev,
                                     size_t index);

// Every prevResult route is in the socket's namespace (destination, and
// gateway when given).
absl::Status CheckRoutes(NetlinkSocket& sock, const Result& prev);

// Every one of `routes` is in the socket's namespace through `link`
// (destination, and gateway when given): `route 192.0.2.0/24 via 10.1.0.1
// is missing on "eth0"`.
absl::Status CheckRoutesOn(NetlinkSocket& sock, const LinkInfo& link, const std::vector<Route>& routes);

// The link `want.name` exists, is of kind `kind` ("" = any) and has
// want.mac when prevResult gives one.
absl::StatusOr<LinkInfo> CheckPrevLink(NetlinkSocket& sock, const Interface& want,
                                       absl::string_view kind);

}  // namespace cni::net

// Applying an IPAM result to an interface (upstream's ipam.ConfigureIface).
#pragma once

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "cni/net/netlink.h"
#include "cni/protocol/types.h"

namespace cni::net {

// How ConfigureInterface treats IPv6 addresses.
struct ConfigureOptions {
  // IPv6 duplicate address detection. Off (the default): addresses are added
  // with IFA_F_NODAD and are usable at once. On: the kernel runs DAD and
  // ConfigureInterface waits (up to dad_timeout_ms) for the addresses to leave
  // the "tentative" state, failing if DAD finds a duplicate.
  bool enable_dad = false;
  int dad_timeout_ms = 10000;  // on timeout: absl::DeadlineExceeded (DAD failure: AlreadyExists)
};

// Configures link `ifname` in the socket's namespace from `result`:
//  1. for every ips[] entry whose interface index names `ifname` in
//     result.interfaces (entries for other interfaces, or without an index, are
//     skipped; an index out of range is an error): for IPv6, clear
//     disable_ipv6 on lo and on the link and set keep_addr_on_down on the link;
//     then add the address;
//  2. bring the link up;
//  3. add every route in result.routes through the link. A route without a
//     gateway uses the first gateway of its family among those ips entries
//     (none: a device route). mtu/advmss/priority/table/scope are honoured.
// Errors name the step: `adding route 10.2.0.0/16 via 10.1.0.1 dev eth0: ...`,
// annotated with `configuring "eth0"`. Nothing is undone on failure: the
// caller's rollback removes the link (or its addresses).
absl::Status ConfigureInterface(NetlinkSocket& sock, absl::string_view ifname, const Result& result,
                                const ConfigureOptions& opts = {});

}  // namespace cni::net

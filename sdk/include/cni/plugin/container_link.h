// The shape of a plugin that makes or moves one link into the container
// (dummy, tap, host-device; macvlan, ipvlan and vlan through sublink.h):
// the ADD steps after the link exists (IPAM, addresses, routes, DNS, the
// result), the whole CHECK and the whole DEL. A plugin supplies only what is
// its own: how its link is made (or found and moved), what else CHECK
// verifies about it, and, when DEL must not simply delete it, what DEL does
// with it instead.
//
//   ASSIGN_OR_RETURN(net::LinkInfo link, MakeMyLink(csock, args));
//   absl::Cleanup remove = [&] { (void)net::DeleteLink(csock, link); };
//   Result result = container_link::ResultFor(args, link, container);
//   RETURN_IF_ERROR(container_link::Address(args, csock, &link, result, {...}));
//   std::move(remove).Cancel();
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/net/link.h"
#include "cni/net/netlink.h"
#include "cni/net/netns.h"
#include "cni/protocol/invoke.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"

namespace cni::container_link {

// Code 17 (AlreadyExists) `<plugin>: container interface "eth0" already
// exists` when CNI_IFNAME is taken in the container: checked before the link
// is made, so a rollback can never delete a link this ADD did not make.
absl::Status RequireFreeName(net::NetlinkSocket& csock, absl::string_view ifname,
                             absl::string_view plugin);

// A result at the configuration's version whose one interface,
// interfaces[0], is `link` in `container` (name, MAC, sandbox).
Result ResultFor(const CmdArgs& args, const net::LinkInfo& link, const net::Netns& container);

// How the kernel is told to announce the link's addresses when it comes up
// (neighbours may have a previous holder's MAC cached). Best effort: a
// kernel or link without the setting still gets its addresses.
enum class Announce {
  kNone,         // neither (dummy, host-device)
  kArp,          // arp_notify (tap, as upstream)
  kArpAndNdisc,  // arp_notify and IPv6 ndisc_notify (macvlan, ipvlan, vlan)
};

// Where the link's layer 3 comes from, and what is done with it.
struct Addressing {
  std::string plugin;      // prefixes every message
  std::string ipam_type;   // "": layer 2 only, or `chained`'s addresses
  std::optional<Dns> dns;  // the config's: replaces IPAM's when set
  // Chained without IPAM (ipvlan): prevResult's addresses, routes and DNS
  // configure the link when ipam_type is empty and it has addresses. Not owned.
  const Result* chained = nullptr;
  Announce announce = Announce::kNone;  // the settings the link gets
};

// The rest of ADD once the link is made and named CNI_IFNAME (`result` from
// ResultFor, plus whatever the plugin changed): with ipam_type, an IPAM lease
// whose addresses (pointing at interfaces[0]), routes and DNS go into
// `result` and onto the link; without, `chained`'s, or none (the link is only
// brought up). `link` null: the link is not the kernel's to configure (a PCI
// device handed to a userspace driver); the result only reports the addresses.
// The config's dns last. On success the lease is kept; on failure it is
// released (the caller removes its link).
absl::Status Address(const CmdArgs& args, net::NetlinkSocket* csock, const net::LinkInfo* link,
                     Result& result, const Addressing& addressing);

// What CHECK verifies, besides the common steps.
struct CheckSpec {
  std::string plugin;     // message prefix
  std::string kind;       // IFLA_INFO_KIND the link must have ("ipvlan"; "" any)
  std::string ipam_type;  // delegated CHECK when set
  // Whether there is a kernel link to check at all, asked after IPAM's
  // CHECK (host-device: not for a device handed to a userspace driver).
  std::function<absl::StatusOr<bool>()> has_link;
  // What else the link must be (mode, VLAN ID, up, a bridge port...),
  // through the container's socket.
  std::function<absl::Status(net::NetlinkSocket& csock, const net::LinkInfo& link)> check_link;
};

// CHECK (>= 0.4.0): prevResult is required (code 7 without); IPAM CHECK;
// prevResult's interface for CNI_IFNAME in CNI_NETNS exists, has `kind`, its
// MAC and what check_link verifies; its addresses and prevResult's routes
// are in the container. Failures carry code 999, as upstream's.
absl::Status Check(const CmdArgs& args, const CheckSpec& spec);

// CHECK's message when the link's `what` ("mode", "VLAN ID") is `have` and
// the config wants `want` (code 999, as upstream's CHECK failures):
// `ipvlan: container interface "eth0" has mode l2, the config wants l3`.
absl::Status Mismatch(absl::string_view plugin, const net::LinkInfo& link, absl::string_view what,
                      absl::string_view have, absl::string_view want);

// What DEL does.
struct Teardown {
  std::string plugin;     // message prefix
  std::string ipam_type;  // IPAM DEL first when set
  // The link is also looked for under the attachment's temporary name
  // (net::TemporaryLinkName(temp_prefix, ...): an ADD killed before its
  // rename left it there). "": only CNI_IFNAME.
  std::string temp_prefix;
  // What becomes of the container's link CNI_IFNAME, when there is one.
  // Unset: it is deleted. host-device moves it back to the host.
  std::function<absl::Status(net::NetlinkSocket& csock, const net::LinkInfo& link)> release;
  // Called when CNI_NETNS is empty or names a namespace that is gone (its
  // links went with it; host-device renames a device the kernel gave back).
  std::function<void()> namespace_gone;
  // A path that holds no namespace any more (a left-over mount point) counts
  // as gone, not as an error.
  bool stale_mount_is_gone = false;
};

// DEL: IPAM DEL first when ipam_type is set, whatever the namespace's state
// (a namespace that is gone must not leak the address), then the link in
// CNI_NETNS (released, or deleted with its temporary-name twin). A missing
// namespace or link is success. An IPAM DEL that may finish on a retry
// (IpamDelMayFinishOnRetry) stops there and keeps the link for it; past any
// other failure it keeps going and reports all of them, prefixed with `plugin`.
absl::Status Del(const CmdArgs& args, const Teardown& teardown);

// The command table of a plugin of this shape: its own ADD and CHECK; DEL
// (Del above, deleting the link) and GC from `TeardownConfig` (default: only
// the IPAM type, so a config ADD refused still gets a DEL that succeeds),
// STATUS forwarded to IPAM.
template <typename Config, typename TeardownConfig = IpamTeardownConfig>
PluginFuncs Funcs(std::string plugin, std::string temp_prefix,
                  std::function<absl::StatusOr<Result>(const CmdArgs&, const Config&)> add,
                  std::function<absl::Status(const CmdArgs&, const Config&)> check) {
  return TypedWithTeardown<Config, TeardownConfig>(
      {.add = std::move(add), .check = std::move(check), .status = ForwardStatusToIpam<Config>},
      {.del = [plugin, temp_prefix](const CmdArgs& args, const TeardownConfig& c) {
         return Del(args, {.plugin = plugin, .ipam_type = c.ipam_type, .temp_prefix = temp_prefix});
       },
       .gc = ForwardGcToIpam<TeardownConfig>});
}

}  // namespace cni::container_link

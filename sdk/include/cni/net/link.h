// Network links through an rtnetlink socket: look-up, veth pairs, and the usual
// changes (up/down, MTU, MAC, name, master, alias, namespace, delete).
//
// Every call works in the namespace of the socket it is given. Errors name the
// operation and the link (`setting MTU 9000 on "eth0": Invalid argument`) and
// keep the kernel's errno as the canonical code (see KernelError in netlink.h):
// absl::IsAlreadyExists on a create means "pick another name", absl::IsNotFound
// on a look-up or delete means "no such link".
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/base/ip.h"
#include "cni/net/netlink.h"
#include "cni/net/netns.h"

namespace cni::net {

// What the kernel reports about a link.
struct LinkInfo {
  int index = 0;           // ifindex, in the socket's namespace
  std::string name;        // IFLA_IFNAME
  std::string kind;        // IFLA_INFO_KIND: "veth", "bridge", ...; "" for lo / hardware
  MacAddress mac;          // zero when the link has no 6-byte hardware address
  int mtu = 0;             // IFLA_MTU
  unsigned flags = 0;      // IFF_* (IFF_UP, IFF_LOWER_UP, ...)
  int master = 0;          // ifindex of the master (bridge/bond/vrf), 0 if none
  std::string alias;       // IFLA_IFALIAS
  // IFLA_LINK: for a veth, the peer's ifindex. The peer may live in another
  // namespace (then link_netnsid is set, relative to this link's namespace).
  int link = 0;
  std::optional<int> link_netnsid;  // IFLA_LINK_NETNSID, when the kernel reports one
  int txqlen = 0;          // IFLA_TXQLEN, the transmit queue length

  bool promisc() const;    // IFF_PROMISC (as set by a user, not by bridging)
  bool allmulti() const;   // IFF_ALLMULTI

  bool up() const;  // IFF_UP
};

// Look-ups. A missing link is absl::NotFound: `looking up link "eth0": No such device`.
absl::StatusOr<LinkInfo> LinkByName(NetlinkSocket& sock, absl::string_view name);
// The link with ifindex `index`; missing: absl::NotFound (`looking up link #4: ...`).
absl::StatusOr<LinkInfo> LinkByIndex(NetlinkSocket& sock, int index);
// Every link in the socket's namespace (one dump, retried if interrupted).
absl::StatusOr<std::vector<LinkInfo>> ListLinks(NetlinkSocket& sock);
// True if a link called `name` exists; errors other than "not found" propagate.
absl::StatusOr<bool> LinkExists(NetlinkSocket& sock, absl::string_view name);

// A veth pair. `name` is created in the socket's namespace; `peer_name` in
// `peer_netns` when given (in the same request, via IFLA_NET_NS_FD, so the
// peer never appears in the socket's namespace), else next to `name`.
struct VethSpec {
  std::string name;                     // this end, created in the socket's namespace
  std::string peer_name;                // the other end
  int mtu = 0;                          // 0: kernel default, for both ends
  std::optional<MacAddress> mac;        // for `name`
  std::optional<MacAddress> peer_mac;   // for `peer_name`
  const Netns* peer_netns = nullptr;    // not owned; must outlive the call
};
// Creates the pair (both ends down). EEXIST (either name taken) is
// absl::AlreadyExists: `creating veth "eth0" (peer "veth1a2b3c4d"): File exists`.
absl::Status CreateVeth(NetlinkSocket& sock, const VethSpec& spec);
// The RTM_NEWLINK request CreateVeth sends (for tests and tools; no I/O).
absl::StatusOr<NlMsgPtr> BuildVethRequest(const VethSpec& spec);

// For a veth, the peer's ifindex (in the peer's namespace). Not a veth -> error.
absl::StatusOr<int> VethPeerIndex(NetlinkSocket& sock, const LinkInfo& link);

// Changes. `link` needs only index and name (the name is for messages).
// Sets IFF_UP.
absl::Status SetLinkUp(NetlinkSocket& sock, const LinkInfo& link);
// Clears IFF_UP.
absl::Status SetLinkDown(NetlinkSocket& sock, const LinkInfo& link);
// Sets the MTU; out of the device's range: EINVAL (internal, code 999).
absl::Status SetLinkMtu(NetlinkSocket& sock, const LinkInfo& link, int mtu);
// Sets the hardware address.
absl::Status SetLinkMac(NetlinkSocket& sock, const LinkInfo& link, const MacAddress& mac);
// Renames the link; a taken name is absl::AlreadyExists. Kernels before 6.9
// refuse to rename a link that is up (EBUSY): bring it down first where older
// kernels matter.
absl::Status RenameLink(NetlinkSocket& sock, const LinkInfo& link, absl::string_view new_name);
// Enslaves the link to `master_index` (a bridge, bond or vrf in the same namespace).
absl::Status SetLinkMaster(NetlinkSocket& sock, const LinkInfo& link, int master_index);
// Releases the link from its master (IFLA_MASTER = 0).
absl::Status SetLinkNoMaster(NetlinkSocket& sock, const LinkInfo& link);
// Sets IFLA_IFALIAS; an empty `alias` clears it.
absl::Status SetLinkAlias(NetlinkSocket& sock, const LinkInfo& link, absl::string_view alias);
// Moves the link into `ns`; it disappears from the socket's namespace.
absl::Status MoveLinkToNetns(NetlinkSocket& sock, const LinkInfo& link, const Netns& ns);
// Moves the link into `ns` and gives it `new_name` there, in one request: the
// kernel renames it as part of the move, so it never shows under `new_name`
// in the socket's namespace nor under its old name in `ns`, and a name taken
// in `ns` (absl::AlreadyExists) leaves the link where and as it was. With
// `alias`, the same request gives it that alias ("" clears it) once moved,
// so no crash between two requests can leave one change without the other.
absl::Status MoveLinkToNetnsAs(NetlinkSocket& sock, const LinkInfo& link, const Netns& ns,
                               absl::string_view new_name,
                               std::optional<absl::string_view> alias = std::nullopt);
// Deletes the link (for a veth, both ends go).
absl::Status DeleteLink(NetlinkSocket& sock, const LinkInfo& link);
// The name a plugin creates a container link under before renaming it to
// CNI_IFNAME (so the link shows under that name only once it is set up):
// `prefix` (at most 7 characters) + 8 hex digits of SHA-512 over
// "<container_id>/<ifname>". Derived, not random: an ADD killed between the
// creation and the rename leaves the link under this name, where the DEL of
// the same attachment (and its next ADD) finds it.
std::string TemporaryLinkName(absl::string_view prefix, absl::string_view container_id,
                              absl::string_view ifname);
// DEL helper: deletes the link called `name`; a missing link is success.
absl::Status DeleteLinkByNameIfExists(NetlinkSocket& sock, absl::string_view name);
// DEL helper: deletes link `name` inside the namespace at `netns_path`; a
// namespace that is gone (its links went with it) or a missing link is success.
absl::Status DeleteLinkInNetns(absl::string_view netns_path, absl::string_view name);

// ---- Attributes the tuning plugin changes ----
// Turns IFF_PROMISC on or off, leaving the other flags alone.
absl::Status SetLinkPromiscuous(NetlinkSocket& sock, const LinkInfo& link, bool on);
// Turns IFF_ALLMULTI on or off, leaving the other flags alone.
absl::Status SetLinkAllmulti(NetlinkSocket& sock, const LinkInfo& link, bool on);
// Sets the transmit queue length (IFLA_TXQLEN).
absl::Status SetLinkTxQLen(NetlinkSocket& sock, const LinkInfo& link, int txqlen);

// A dummy link called `name` in the socket's namespace (down). EEXIST is
// absl::AlreadyExists; a kernel without the dummy type answers EOPNOTSUPP.
absl::Status CreateDummy(NetlinkSocket& sock, absl::string_view name);

// An ifb (intermediate functional block) device, as the bandwidth plugin uses
// for egress shaping: created up, with `mtu` (0: default) and `txqlen` (upstream
// creates it with 0), and `alias` when not empty. EEXIST is absl::AlreadyExists.
struct IfbSpec {
  std::string name;   // the device name (at most 15 bytes)
  int mtu = 0;        // 0: kernel default
  int txqlen = 0;     // always sent, 0 included
  std::string alias;  // IFLA_IFALIAS, set after creation; "" for none
};
// Creates the ifb in the socket's namespace, already up. If setting the alias
// fails afterwards, the device is left in place: the caller must delete it.
absl::Status CreateIfb(NetlinkSocket& sock, const IfbSpec& spec);

}  // namespace cni::net

// IP settings of a namespace through rtnetlink instead of /proc/sys/net.
//
// Why: a lookup under /proc/sys/net compares one dentry per network namespace
// that has used the same name, so on a node with 1,000 containers each open
// there costs ~1 ms (5 us on an idle node), on every call. rtnetlink answers
// these in constant time. Settings rtnetlink cannot write (IPv6's per-interface
// ones, turning forwarding on) still go through cni/net/sysctl.h.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cni/base/ip.h"
#include "cni/net/netlink.h"

namespace cni::net {

// net.ipv4.conf.<interface>.<setting> = value for the interface `ifindex` of
// the socket's namespace; `setting` is an IPV4_DEVCONF_* id of <linux/ip.h>
// (IPV4_DEVCONF_ARP_NOTIFY, IPV4_DEVCONF_ROUTE_LOCALNET, ...). The kernel
// records it as set, as a sysctl write does.
absl::Status SetIpv4DevConf(NetlinkSocket& sock, int ifindex, int setting, uint32_t value);

// net.ipv4.conf.<interface>.<setting> of the interface `ifindex`, read from
// the link's IFLA_INET_CONF (one RTM_GETLINK); `setting` is an IPV4_DEVCONF_*
// id as for SetIpv4DevConf. NotFound when the interface has no IPv4 settings.
absl::StatusOr<uint32_t> Ipv4DevConf(NetlinkSocket& sock, int ifindex, int setting);

// net.ipv6.conf.<interface>.<setting> of the interface `ifindex`, read from
// the link's IFLA_INET6_CONF (one RTM_GETLINK); `setting` is a DEVCONF_* id
// of <linux/ipv6.h> (DEVCONF_ACCEPT_RA, DEVCONF_ACCEPT_DAD, ...). NotFound
// when the interface has no IPv6 (disabled, or a kernel without it). The
// kernel takes no IPv6 per-interface writes over rtnetlink: those go through
// /proc/sys, and reading first lets a call skip a write that changes nothing.
absl::StatusOr<int32_t> Ipv6DevConf(NetlinkSocket& sock, int ifindex, int setting);

// All of an interface's IPv6 settings, read once (ReadIpv6DevConfs) for a
// caller that needs several of them.
class Ipv6DevConfs {
 public:
  Ipv6DevConfs(std::vector<uint32_t> values, std::string what)
      : values_(std::move(values)), what_(std::move(what)) {}
  // As Ipv6DevConf: a DEVCONF_* id; NotFound for one this kernel lacks.
  absl::StatusOr<int32_t> Get(int setting) const;

 private:
  std::vector<uint32_t> values_;
  std::string what_;
};

// An interface's IPv6 settings from one RTM_GETLINK. NotFound when the
// interface has no IPv6 (as Ipv6DevConf).
absl::StatusOr<Ipv6DevConfs> ReadIpv6DevConfs(NetlinkSocket& sock, int ifindex);

// Whether forwarding is on for the whole namespace (net.ipv4.ip_forward,
// net.ipv6.conf.all.forwarding), read with RTM_GETNETCONF.
absl::StatusOr<bool> ForwardingEnabled(NetlinkSocket& sock, Family family);

// Turns it on unless it is on already: writing ip_forward resets several
// per-interface settings in the kernel, so an unneeded write is not harmless.
// The socket and the calling thread must be in the same namespace (the
// write goes through /proc/sys, which has no rtnetlink counterpart).
absl::Status EnsureForwarding(NetlinkSocket& sock, Family family);

}  // namespace cni::net

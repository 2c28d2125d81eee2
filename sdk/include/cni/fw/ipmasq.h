// IP masquerading for bridge and ptp (upstream pkg/ip/ipmasq_*).
// iptables: nat chain CNI-<hash(network+id)> entered from POSTROUTING for the
// container IP; ACCEPT to its subnet, MASQUERADE to non-multicast. With
// iptables-nft the usual ADD and DEL write and remove these rules over
// netlink (no iptables program, no snapshot of the table), the jumps'
// handles recorded under /run/cni/ipmasq/iptables.
// nftables: table inet cni_plugins_masquerade, chain masq_checks, one rule
// per address with a comment starting with a hash of network/ifname/id; the
// rules' handles recorded under /run/cni/ipmasq/nftables, so that neither
// the usual ADD nor DEL lists masq_checks.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "cni/base/attachment.h"
#include "cni/base/ip.h"
#include "cni/fw/backend.h"
#include "cni/fw/ipt_rule.h"
#include "cni/net/netlink.h"

namespace cni::fw {

// The attachment whose masquerading is set up or torn down. The iptables
// chain name is derived from network + container_id; the nftables rule
// comment from all three.
struct MasqTarget {
  std::string network;       // the network's name (config "name")
  std::string ifname;        // CNI_IFNAME
  std::string container_id;  // CNI_CONTAINERID
};

// Installs masquerading for `addrs` (address + prefix) with `backend`: one
// transaction per family (iptables) or for everything (nftables, through
// `nf`, a NETLINK_NETFILTER socket from nft::OpenSocket; unused, and may be
// null, with iptables).
absl::Status SetupIpMasq(net::NetlinkSocket* nf, Backend backend, const std::vector<net::IpPrefix>& addrs,
                         const MasqTarget& t);
// Same, opening a NETLINK_NETFILTER socket of its own when it needs one.
absl::Status SetupIpMasq(Backend backend, const std::vector<net::IpPrefix>& addrs, const MasqTarget& t);
// Removes what either backend (ours or upstream's) installed; missing is fine.
// Keeps going past a failure and reports all failures. `nf`: as for SetupIpMasq.
absl::Status TeardownIpMasq(net::NetlinkSocket& nf, const MasqTarget& t);
// Same, with a NETLINK_NETFILTER socket of its own.
absl::Status TeardownIpMasq(const MasqTarget& t);
// nftables: deletes this network's rules whose attachment is not valid.
// iptables: the same for the attachments whose rules were recorded; other
// chains carry no network marker upstream, so they are left (as upstream).
absl::Status GcIpMasq(net::NetlinkSocket& nf, absl::string_view network, const std::vector<Attachment>& valid);
// Same, with a NETLINK_NETFILTER socket of its own.
absl::Status GcIpMasq(absl::string_view network, const std::vector<Attachment>& valid);

// An attachment's iptables rules in one family, each described once
// (cni/fw/ipt_rule.h) for both ways of writing them.
struct MasqRules {
  std::string chain;           // CNI-<hash of network and container ID>
  std::vector<IptRule> own;    // in `chain`
  std::vector<IptRule> jumps;  // in POSTROUTING
};
// The rules for `addrs` (all of the family `v6` says): the attachment's
// chain, ACCEPT to each subnet then one MASQUERADE to anything but multicast
// (upstream's AppendUnique keeps one), and POSTROUTING's jump into it for
// each address. Exposed for tests.
MasqRules IptMasqRules(bool v6, const std::vector<net::IpPrefix>& addrs, const MasqTarget& t);

// The comment on this attachment's nftables rules: "<hash of network>-<hash of
// ifname:id>, net: .., if: .., id: ..", cut to 128 characters. Exposed for tests.
std::string MasqNftComment(absl::string_view network, absl::string_view ifname, absl::string_view id);

}  // namespace cni::fw

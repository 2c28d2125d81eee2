#include "cni/plugin/container_link.h"

#include <linux/ip.h>
#include <linux/ipv6.h>

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/quoted.h"
#include "cni/base/status_macros.h"
#include "cni/net/devconf.h"
#include "cni/net/sysctl.h"
#include "cni/plugin/check.h"
#include "cni/plugin/ipam_apply.h"
#include "cni/plugin/ipam_lease.h"
#include "cni/plugin/teardown.h"

namespace cni::container_link {
namespace {

// The link's one interface in the result.
constexpr int kLinkIndex = 0;

// Asks the kernel to announce the link's addresses as it comes up: arp_notify
// through rtnetlink (no thread in the namespace, and no /proc/sys/net lookup,
// which grows with the namespaces on the node; cni/net/devconf.h).
// ndisc_notify cannot be written that way: read first, so /proc/sys is
// touched only when the value differs.
void SetAnnounce(net::NetlinkSocket& csock, const net::LinkInfo& link, absl::string_view ifname,
                 Announce announce) {
  if (announce == Announce::kNone) return;
  (void)net::SetIpv4DevConf(csock, link.index, IPV4_DEVCONF_ARP_NOTIFY, 1);
  if (announce != Announce::kArpAndNdisc) return;
  if (absl::StatusOr<int32_t> ndisc = net::Ipv6DevConf(csock, link.index, DEVCONF_NDISC_NOTIFY);
      ndisc.ok() && *ndisc != 1) {
    (void)net::WriteSysctl(csock.netns(), absl::StrCat("net/ipv6/conf/", ifname, "/ndisc_notify"), "1");
  }
}

// CNI_IFNAME in CNI_NETNS, and its temporary-name twin when `temp_prefix` is
// set, deleted through one socket.
absl::Status DeleteLinks(net::NetlinkSocket& csock, const CmdArgs& args, absl::string_view temp_prefix) {
  Failures failures;
  failures.Keep(net::DeleteLinkByNameIfExists(csock, args.ifname));
  if (!temp_prefix.empty()) {
    failures.Keep(net::DeleteLinkByNameIfExists(
        csock, net::TemporaryLinkName(temp_prefix, args.container_id, args.ifname)));
  }
  return failures.Joined();
}

// The container side of DEL: nothing when the namespace is gone (its links
// went with it; `namespace_gone` is told), else the link released or deleted.
absl::Status TeardownLink(const CmdArgs& args, const Teardown& t) {
  auto gone = [&] {
    if (t.namespace_gone) t.namespace_gone();
    return absl::OkStatus();
  };
  if (args.netns.empty()) return gone();
  absl::StatusOr<net::Netns> netns = net::Netns::Open(args.netns);
  if (absl::IsNotFound(netns.status())) return gone();
  if (t.stale_mount_is_gone && absl::IsInvalidArgument(netns.status())) return gone();
  RETURN_IF_ERROR(netns.status());
  ASSIGN_OR_RETURN(net::NetlinkSocket csock, net::NetlinkSocket::OpenIn(*netns));
  if (!t.release) return DeleteLinks(csock, args, t.temp_prefix);
  absl::StatusOr<net::LinkInfo> link = net::LinkByName(csock, args.ifname);
  if (absl::IsNotFound(link.status())) return absl::OkStatus();  // released already
  RETURN_IF_ERROR(link.status());
  return t.release(csock, *link);
}

}  // namespace

absl::Status RequireFreeName(net::NetlinkSocket& csock, absl::string_view ifname,
                             absl::string_view plugin) {
  ASSIGN_OR_RETURN(bool taken, net::LinkExists(csock, ifname));
  if (!taken) return absl::OkStatus();
  return absl::AlreadyExistsError(
      absl::StrCat(plugin, ": container interface ", Quoted(ifname), " already exists"));
}

Result ResultFor(const CmdArgs& args, const net::LinkInfo& link, const net::Netns& container) {
  Result result;
  result.cni_version = args.conf.cni_version;
  result.interfaces.push_back(
      Interface{.name = link.name, .mac = link.mac.ToString(), .sandbox = container.path()});
  return result;
}

absl::Status Address(const CmdArgs& args, net::NetlinkSocket* csock, const net::LinkInfo* link,
                     Result& result, const Addressing& a) {
  // Declared before anything can fail, so every failure releases the address.
  std::optional<IpamLease> lease;
  if (!a.ipam_type.empty()) {
    ASSIGN_OR_RETURN(IpamLease acquired, IpamLease::Acquire(args, a.ipam_type));
    lease.emplace(std::move(acquired));
    RETURN_IF_ERROR(lease->RequireAddresses(), a.plugin);
    lease->CopyInto(result, kLinkIndex);
  } else if (a.chained != nullptr && !a.chained->ips.empty()) {
    result.ips = a.chained->ips;
    for (IpConfig& ip : result.ips) ip.interface = kLinkIndex;
    result.routes = a.chained->routes;
    result.dns = a.chained->dns;
  }
  if (link != nullptr && result.ips.empty()) {
    // Layer 2 only: no addresses, just up.
    RETURN_IF_ERROR(net::SetLinkUp(*csock, *link), a.plugin);
  } else if (link != nullptr) {
    SetAnnounce(*csock, *link, args.ifname, a.announce);
    RETURN_IF_ERROR(net::ConfigureInterface(*csock, args.ifname, result), a.plugin);
  }
  if (a.dns) result.dns = *a.dns;
  if (lease) RETURN_IF_ERROR(lease->Commit(result), a.plugin);
  return absl::OkStatus();
}

absl::Status Check(const CmdArgs& args, const CheckSpec& spec) {
  ASSIGN_OR_RETURN(net::CheckStart start, net::StartCheck(args, spec.ipam_type, spec.plugin));
  const Result* prev = &start.prev;
  if (spec.has_link) {
    ASSIGN_OR_RETURN(bool has_link, spec.has_link());
    if (!has_link) return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(size_t index, net::FindPrevInterface(*prev, args.ifname, args.netns), spec.plugin);

  ASSIGN_OR_RETURN(net::NetlinkSocket sock, net::NetlinkSocket::OpenIn(start.container));
  ASSIGN_OR_RETURN(net::LinkInfo link, net::CheckPrevLink(sock, prev->interfaces[index], spec.kind),
                   spec.plugin);
  if (spec.check_link) RETURN_IF_ERROR(spec.check_link(sock, link));
  RETURN_IF_ERROR(net::CheckInterfaceAddresses(sock, link, *prev, index), spec.plugin);
  RETURN_IF_ERROR(net::CheckRoutes(sock, *prev), spec.plugin);
  return absl::OkStatus();
}

absl::Status Mismatch(absl::string_view plugin, const net::LinkInfo& link, absl::string_view what,
                      absl::string_view have, absl::string_view want) {
  return absl::FailedPreconditionError(absl::StrCat(plugin, ": container interface ", Quoted(link.name),
                                                    " has ", what, " ", have, ", the config wants ", want));
}

absl::Status Del(const CmdArgs& args, const Teardown& t) {
  Failures failures;
  RETURN_IF_ERROR(ReleaseIpamFirst(args, t.ipam_type, t.plugin, failures));
  failures.Keep(TeardownLink(args, t), t.plugin);
  return failures.Joined();
}

}  // namespace cni::container_link

#include "cni/plugin/sublink.h"

#include <linux/ip.h>
#include <linux/ipv6.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "cni/net/addr.h"
#include "cni/net/devconf.h"
#include "cni/net/route.h"
#include "cni/net/sysctl.h"
#include "cni/plugin/check.h"
#include "cni/plugin/ipam_apply.h"
#include "cni/plugin/ipam_lease.h"
#include "cni/plugin/teardown.h"
#include "cni/protocol/invoke.h"
#include "cni/protocol/version.h"

namespace cni::sublink {
namespace {

absl::Status Invalid(absl::string_view plugin, absl::string_view msg) {
  return Error(ErrorCode::kInvalidNetworkConfig, absl::StrCat(plugin, ": ", msg));
}

// CHECK failures carry no particular CNI code (upstream reports them as 999).
absl::Status Failed(absl::string_view plugin, absl::string_view msg) {
  return absl::FailedPreconditionError(absl::StrCat(plugin, ": ", msg));
}

// Creates the link in the container under the attachment's temporary name
// (it shows as CNI_IFNAME only once made), then renames it. A link already
// under that name was left by an ADD of this attachment killed before its
// rename: it is replaced.
absl::StatusOr<net::LinkInfo> CreateInContainer(net::NetlinkSocket& master_sock,
                                                net::NetlinkSocket& csock,
                                                const net::Netns& container,
                                                const net::LinkInfo& master, const AddSpec& spec,
                                                const CmdArgs& args) {
  ASSIGN_OR_RETURN(bool taken, net::LinkExists(csock, args.ifname));
  if (taken) {
    return absl::AlreadyExistsError(
        absl::StrCat(spec.plugin, ": container interface \"", args.ifname, "\" already exists"));
  }
  NewLink link{.name = net::TemporaryLinkName(spec.name_prefix, args.container_id, args.ifname),
               .master = &master,
               .netns = spec.master.in_container ? nullptr : &container};
  absl::Status created = spec.create(master_sock, link);
  if (absl::IsAlreadyExists(created)) {
    // EEXIST with a free name: the master already carries what this link
    // would duplicate (a vlan with the same VLAN ID, say).
    ASSIGN_OR_RETURN(bool clash, net::LinkExists(csock, link.name));
    if (!clash) {
      return absl::FailedPreconditionError(absl::StrCat(
          spec.plugin, ": master \"", master.name, "\" refused the new link (", created.message(),
          "): it already has a link that this one would duplicate"));
    }
    RETURN_IF_ERROR(net::DeleteLinkByNameIfExists(csock, link.name), spec.plugin,
                    ": removing a killed ADD's link");
    created = spec.create(master_sock, link);
  }
  RETURN_IF_ERROR(created, spec.plugin);
  ASSIGN_OR_RETURN(net::LinkInfo made, net::LinkByName(csock, link.name));
  if (absl::Status st = net::RenameLink(csock, made, args.ifname); !st.ok()) {
    (void)net::DeleteLink(csock, made);
    return Annotate(st, spec.plugin);
  }
  return net::LinkByIndex(csock, made.index);
}

// The result's one interface: the link, in the container.
Interface ContainerInterface(const net::LinkInfo& link, const net::Netns& container) {
  Interface itf;
  itf.name = link.name;
  itf.mac = link.mac.ToString();
  itf.sandbox = container.path();
  return itf;
}

// Gives the link the result's addresses and routes (and brings it up).
absl::Status ConfigureAddresses(net::NetlinkSocket& csock, int ifindex, absl::string_view ifname, const Result& result,
                                absl::string_view plugin) {
  // Announce the addresses when the link comes up (neighbours may have the
  // MAC of a previous holder cached): gratuitous ARP for IPv4, unsolicited
  // neighbour advertisements for IPv6 (ndisc_notify), as upstream since 1.4.
  // Best effort, as upstream: a kernel or link without the setting still
  // gets its addresses.
  // (arp_notify through rtnetlink: no thread in the namespace, and no
  // /proc/sys/net lookup, which grows with the namespaces on the node;
  // cni/net/devconf.h. IPv6 settings cannot be written that way: read first,
  // so /proc/sys is touched only when the value differs.)
  (void)net::SetIpv4DevConf(csock, ifindex, IPV4_DEVCONF_ARP_NOTIFY, 1);
  if (absl::StatusOr<int32_t> ndisc = net::Ipv6DevConf(csock, ifindex, DEVCONF_NDISC_NOTIFY);
      ndisc.ok() && *ndisc != 1) {
    (void)net::WriteSysctl(csock.netns(), absl::StrCat("net/ipv6/conf/", ifname, "/ndisc_notify"), "1");
  }
  RETURN_IF_ERROR(net::ConfigureInterface(csock, ifname, result), plugin);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<net::LinkInfo> ResolveMaster(net::NetlinkSocket& sock, const Master& master,
                                            absl::string_view plugin) {
  const char* where = master.in_container ? "container" : "host";
  if (!master.name.empty()) {
    absl::StatusOr<net::LinkInfo> m = net::LinkByName(sock, master.name);
    if (absl::IsNotFound(m.status())) {
      return Invalid(plugin, absl::StrCat("master \"", master.name, "\" not found in the ", where,
                                          " namespace"));
    }
    return m;
  }
  for (net::Family fam : {net::Family::kV4, net::Family::kV6}) {
    net::RouteFilter filter;
    filter.family = fam;
    ASSIGN_OR_RETURN(std::vector<net::RouteSpec> routes, net::ListRoutes(sock, filter));
    for (const net::RouteSpec& r : routes) {
      int index = r.ifindex != 0 ? r.ifindex : (r.multipath.empty() ? 0 : r.multipath[0].ifindex);
      if (r.dst.len() == 0 && index != 0) return net::LinkByIndex(sock, index);
    }
  }
  return Invalid(plugin, absl::StrCat("no master given and no default route in the ", where,
                                      " namespace to take it from"));
}

absl::Status RequireMtuWithin(const net::LinkInfo& master, int mtu, absl::string_view plugin) {
  if (mtu <= master.mtu) return absl::OkStatus();
  return Invalid(plugin,
                 absl::StrCat("invalid MTU ", mtu, ", must be [0, master MTU(", master.mtu, ")]"));
}

absl::StatusOr<Result> Add(const CmdArgs& args, const AddSpec& spec) {
  ASSIGN_OR_RETURN(net::Netns container, net::Netns::Open(args.netns));
  ASSIGN_OR_RETURN(net::NetlinkSocket csock, net::NetlinkSocket::OpenIn(container));
  // The master lives in the host unless linkInContainer says otherwise.
  std::optional<net::NetlinkSocket> host_sock;
  if (!spec.master.in_container) {
    ASSIGN_OR_RETURN(host_sock, net::NetlinkSocket::Open());
  }
  net::NetlinkSocket& msock = spec.master.in_container ? csock : *host_sock;

  ASSIGN_OR_RETURN(net::LinkInfo master, ResolveMaster(msock, spec.master, spec.plugin));
  RETURN_IF_ERROR(RequireMtuWithin(master, spec.mtu, spec.plugin));

  ASSIGN_OR_RETURN(net::LinkInfo link,
                   CreateInContainer(msock, csock, container, master, spec, args));
  absl::Cleanup remove_link = [&] { (void)net::DeleteLinkByNameIfExists(csock, args.ifname); };

  Result result;
  result.cni_version = args.conf.cni_version;
  // Declared after remove_link, so a failed ADD releases the address first.
  std::optional<IpamLease> lease;
  if (!spec.ipam_type.empty()) {
    ASSIGN_OR_RETURN(IpamLease acquired, IpamLease::Acquire(args, spec.ipam_type));
    lease.emplace(std::move(acquired));
    RETURN_IF_ERROR(lease->RequireAddresses(), spec.plugin);
    lease->CopyInto(result, 0);
  } else if (spec.chained != nullptr && !spec.chained->ips.empty()) {
    result.ips = spec.chained->ips;
    result.routes = spec.chained->routes;
    result.dns = spec.chained->dns;
  }
  result.interfaces.push_back(ContainerInterface(link, container));
  for (IpConfig& ip : result.ips) ip.interface = 0;
  if (result.ips.empty()) {
    // Layer 2 only: no addresses, just up.
    RETURN_IF_ERROR(net::SetLinkUp(csock, link), spec.plugin);
  } else {
    RETURN_IF_ERROR(ConfigureAddresses(csock, link.index, args.ifname, result, spec.plugin));
  }
  if (spec.dns) result.dns = *spec.dns;

  if (lease) {
    RETURN_IF_ERROR(lease->Commit(result), spec.plugin);
  } else {
    // Unprefixed, as upstream's message ("cannot convert: no valid IP
    // addresses" for a layer-2-only link at 0.1.0/0.2.0), which its tests match.
    RETURN_IF_ERROR(CheckPrintableAt(result, args.conf));
  }
  std::move(remove_link).Cancel();
  return result;
}

absl::Status Del(const CmdArgs& args, absl::string_view ipam_type, absl::string_view plugin,
                 absl::string_view name_prefix) {
  return net::DeleteContainerLinkAndAddress(args, ipam_type, plugin, name_prefix);
}

absl::Status Check(const CmdArgs& args, const CheckSpec& spec) {
  ASSIGN_OR_RETURN(std::optional<Result> prev, ParsePrevResult(args.conf));
  if (!prev) return Invalid(spec.plugin, "required prevResult missing");
  ASSIGN_OR_RETURN(net::Netns container, net::Netns::Open(args.netns));
  if (!spec.ipam_type.empty()) RETURN_IF_ERROR(DelegateCheck(spec.ipam_type, args));
  ASSIGN_OR_RETURN(size_t index, net::FindPrevInterface(*prev, args.ifname, args.netns), spec.plugin);

  ASSIGN_OR_RETURN(net::NetlinkSocket sock, net::NetlinkSocket::OpenIn(container));
  ASSIGN_OR_RETURN(net::LinkInfo link, net::CheckPrevLink(sock, prev->interfaces[index], spec.kind),
                   spec.plugin);
  if (spec.check_link) RETURN_IF_ERROR(spec.check_link(sock, link));
  RETURN_IF_ERROR(net::CheckInterfaceAddresses(sock, link, *prev, index), spec.plugin);
  RETURN_IF_ERROR(net::CheckRoutes(sock, *prev), spec.plugin);
  return absl::OkStatus();
}

absl::Status Mismatch(absl::string_view plugin, const net::LinkInfo& link, absl::string_view what,
                      absl::string_view have, absl::string_view want) {
  return Failed(plugin, absl::StrCat("container interface \"", link.name, "\" has ", what, " ", have,
                                     ", the config wants ", want));
}


}  // namespace cni::sublink

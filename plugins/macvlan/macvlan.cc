#include "macvlan.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "cni/error.h"
#include "cni/invoke.h"
#include "cni/ipam_lease.h"
#include "cni/net/addr.h"
#include "cni/net/check.h"
#include "cni/net/ipam_apply.h"
#include "cni/net/link.h"
#include "cni/net/macvlan.h"
#include "cni/net/netlink.h"
#include "cni/net/netns.h"
#include "cni/net/route.h"
#include "cni/net/sysctl.h"
#include "cni/net/teardown.h"
#include "cni/net/veth.h"
#include "cni/status_macros.h"
#include "config.h"

namespace cni::macvlan {
namespace {

absl::Status Invalid(absl::string_view msg) {
  return Error(ErrorCode::kInvalidNetworkConfig, absl::StrCat("macvlan: ", msg));
}

// CHECK failures carry no particular CNI code (upstream reports them as 999).
absl::Status Failed(absl::string_view msg) {
  return absl::FailedPreconditionError(absl::StrCat("macvlan: ", msg));
}

// The master: as configured, else the interface of the default route (IPv4
// first, then IPv6) in the namespace the master lives in. Its MTU bounds ours.
absl::StatusOr<net::LinkInfo> ResolveMaster(net::NetlinkSocket& sock, const Config& config) {
  const char* where = config.link_in_container ? "container" : "host";
  if (!config.master.empty()) {
    absl::StatusOr<net::LinkInfo> m = net::LinkByName(sock, config.master);
    if (absl::IsNotFound(m.status())) {
      return Invalid(absl::StrCat("master \"", config.master, "\" not found in the ", where,
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
  return Invalid(absl::StrCat("no master given and no default route in the ", where,
                              " namespace to take it from"));
}

// Our MTU cannot exceed the master's (0 takes the master's).
absl::Status RequireMtuWithin(const net::LinkInfo& master, const Config& config) {
  if (config.mtu <= master.mtu) return absl::OkStatus();
  return Invalid(absl::StrCat("invalid MTU ", config.mtu, ", must be [0, master MTU(", master.mtu,
                              ")]"));
}

// Creates the link in the container under a temporary name (so it can never
// collide with CNI_IFNAME or another ADD), then renames it.
absl::StatusOr<net::LinkInfo> CreateInContainer(net::NetlinkSocket& master_sock,
                                                net::NetlinkSocket& csock,
                                                const net::Netns& container,
                                                const net::LinkInfo& master, const Config& config,
                                                absl::string_view ifname) {
  ASSIGN_OR_RETURN(bool taken, net::LinkExists(csock, ifname));
  if (taken) {
    return absl::AlreadyExistsError(
        absl::StrCat("macvlan: container interface \"", ifname, "\" already exists"));
  }
  net::MacvlanSpec spec;
  spec.master_index = master.index;
  spec.mode = config.mode;
  spec.mtu = config.mtu;
  spec.mac = config.mac;
  if (!config.link_in_container) spec.netns = &container;
  absl::Status created;
  for (int attempt = 0; attempt < 5; ++attempt) {
    spec.name = "mv" + net::RandomVethName().substr(4);  // "mv" + 8 hex digits
    created = net::CreateMacvlan(master_sock, spec);
    if (!absl::IsAlreadyExists(created)) break;
  }
  RETURN_IF_ERROR(created, "macvlan");
  ASSIGN_OR_RETURN(net::LinkInfo link, net::LinkByName(csock, spec.name));
  if (absl::Status st = net::RenameLink(csock, link, ifname); !st.ok()) {
    (void)net::DeleteLink(csock, link);
    return Annotate(st, "macvlan");
  }
  return net::LinkByIndex(csock, link.index);
}

// The result's one interface: the macvlan, in the container.
Interface ContainerInterface(const net::LinkInfo& link, const net::Netns& container) {
  Interface itf;
  itf.name = link.name;
  itf.mac = link.mac.ToString();
  itf.sandbox = container.path();
  return itf;
}

// Gives the link IPAM's addresses and routes (and brings it up).
absl::Status ConfigureAddresses(net::NetlinkSocket& csock, const net::Netns& container,
                                absl::string_view ifname, const Result& result) {
  // Announce the address when the link comes up (neighbours may have the
  // MAC of a previous holder cached).
  (void)net::WriteSysctl(container, absl::StrCat("net/ipv4/conf/", ifname, "/arp_notify"), "1");
  RETURN_IF_ERROR(net::ConfigureInterface(csock, ifname, result), "macvlan");
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Result> Add(const CmdArgs& args, const Config& config) {
  ASSIGN_OR_RETURN(net::Netns container, net::Netns::Open(args.netns));
  ASSIGN_OR_RETURN(net::NetlinkSocket csock, net::NetlinkSocket::OpenIn(container));
  // The master lives in the host unless linkInContainer says otherwise.
  std::optional<net::NetlinkSocket> host_sock;
  if (!config.link_in_container) {
    ASSIGN_OR_RETURN(host_sock, net::NetlinkSocket::Open());
  }
  net::NetlinkSocket& msock = config.link_in_container ? csock : *host_sock;

  ASSIGN_OR_RETURN(net::LinkInfo master, ResolveMaster(msock, config));
  RETURN_IF_ERROR(RequireMtuWithin(master, config));

  ASSIGN_OR_RETURN(net::LinkInfo link,
                   CreateInContainer(msock, csock, container, master, config, args.ifname));
  absl::Cleanup remove_link = [&] { (void)net::DeleteLinkByNameIfExists(csock, args.ifname); };

  Result result;
  result.cni_version = args.conf.cni_version;
  result.interfaces.push_back(ContainerInterface(link, container));

  // With "ipam": {} the link is layer 2 only: no lease, just up. Declared
  // after remove_link, so a failed ADD releases the address first.
  std::optional<IpamLease> lease;
  if (config.ipam_type.empty()) {
    RETURN_IF_ERROR(net::SetLinkUp(csock, link), "macvlan");
  } else {
    ASSIGN_OR_RETURN(IpamLease acquired, IpamLease::Acquire(args, config.ipam_type));
    lease.emplace(std::move(acquired));
    RETURN_IF_ERROR(lease->RequireAddresses(), "macvlan");
    result.ips = lease->result().ips;
    for (IpConfig& ip : result.ips) ip.interface = kContainerIndex;
    result.routes = lease->result().routes;
    result.dns = lease->result().dns;
    RETURN_IF_ERROR(ConfigureAddresses(csock, container, args.ifname, result));
  }
  if (config.dns) result.dns = *config.dns;

  if (lease) RETURN_IF_ERROR(lease->Commit(result), "macvlan");
  std::move(remove_link).Cancel();
  return result;
}

absl::Status Del(const CmdArgs& args, const Config& config) {
  return net::DeleteContainerLinkAndAddress(args, config.ipam_type, "macvlan");
}

namespace {

// The link is a macvlan with prevResult's MAC and the configured mode.
absl::StatusOr<net::LinkInfo> CheckLink(net::NetlinkSocket& sock, const Interface& want,
                                        const Config& config) {
  ASSIGN_OR_RETURN(net::LinkInfo link, net::CheckPrevLink(sock, want, "macvlan"), "macvlan");
  ASSIGN_OR_RETURN(net::MacvlanMode mode, net::MacvlanModeOf(sock, link.index));
  if (mode != config.mode) {
    return Failed(absl::StrCat("container interface \"", want.name, "\" has mode ",
                               net::MacvlanModeName(mode), ", the config wants ",
                               net::MacvlanModeName(config.mode)));
  }
  return link;
}

}  // namespace

absl::Status Check(const CmdArgs& args, const Config& config) {
  ASSIGN_OR_RETURN(std::optional<Result> prev, ParsePrevResult(args.conf));
  if (!prev) return Invalid("required prevResult missing");
  ASSIGN_OR_RETURN(net::Netns container, net::Netns::Open(args.netns));
  if (!config.ipam_type.empty()) RETURN_IF_ERROR(DelegateCheck(config.ipam_type, args));
  ASSIGN_OR_RETURN(size_t index, net::FindPrevInterface(*prev, args.ifname, args.netns), "macvlan");

  ASSIGN_OR_RETURN(net::NetlinkSocket sock, net::NetlinkSocket::OpenIn(container));
  ASSIGN_OR_RETURN(net::LinkInfo link, CheckLink(sock, prev->interfaces[index], config));
  RETURN_IF_ERROR(net::CheckInterfaceAddresses(sock, link, *prev, index), "macvlan");
  RETURN_IF_ERROR(net::CheckRoutes(sock, *prev), "macvlan");
  return absl::OkStatus();
}

absl::Status Gc(const CmdArgs& args, const Config& config) {
  if (config.ipam_type.empty()) return absl::OkStatus();
  return DelegateGc(config.ipam_type, args);
}

absl::Status Status(const CmdArgs& args, const Config& config) {
  if (config.ipam_type.empty()) return absl::OkStatus();
  return DelegateStatus(config.ipam_type, args);
}

PluginFuncs Funcs() {
  return Typed<Config>({.add = Add, .del = Del, .check = Check, .gc = Gc, .status = Status});
}

}  // namespace cni::macvlan

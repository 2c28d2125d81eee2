#include "macvlan.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cni/error.h"
#include "cni/invoke.h"
#include "cni/net/addr.h"
#include "cni/net/ipam_apply.h"
#include "cni/net/link.h"
#include "cni/net/macvlan.h"
#include "cni/net/netlink.h"
#include "cni/net/netns.h"
#include "cni/net/route.h"
#include "cni/net/sysctl.h"
#include "cni/net/veth.h"
#include "cni/version.h"
#include "config.h"

namespace cni::macvlan {
namespace {

absl::Status Invalid(absl::string_view msg) {
  return Error(ErrorCode::kInvalidNetworkConfig, absl::StrCat("macvlan: ", msg));
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
    absl::StatusOr<std::vector<net::RouteSpec>> routes = net::ListRoutes(sock, filter);
    if (!routes.ok()) return routes.status();
    for (const net::RouteSpec& r : *routes) {
      int index = r.ifindex != 0 ? r.ifindex : (r.multipath.empty() ? 0 : r.multipath[0].ifindex);
      if (r.dst.len() == 0 && index != 0) return net::LinkByIndex(sock, index);
    }
  }
  return Invalid(absl::StrCat("no master given and no default route in the ", where,
                              " namespace to take it from"));
}

// Creates the link in the container under a temporary name (so it can never
// collide with CNI_IFNAME or another ADD), then renames it.
absl::StatusOr<net::LinkInfo> CreateInContainer(net::NetlinkSocket& master_sock,
                                                net::NetlinkSocket& csock,
                                                const net::Netns& container,
                                                const net::LinkInfo& master, const Config& config,
                                                absl::string_view ifname) {
  absl::StatusOr<bool> taken = net::LinkExists(csock, ifname);
  if (!taken.ok()) return taken.status();
  if (*taken) {
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
  if (!created.ok()) return Annotate(created, "macvlan");
  absl::StatusOr<net::LinkInfo> link = net::LinkByName(csock, spec.name);
  if (!link.ok()) return link.status();
  if (absl::Status st = net::RenameLink(csock, *link, ifname); !st.ok()) {
    (void)net::DeleteLink(csock, *link);
    return Annotate(st, "macvlan");
  }
  return net::LinkByIndex(csock, link->index);
}

}  // namespace

absl::StatusOr<Result> Add(const CmdArgs& args) {
  absl::StatusOr<Config> config = ParseConfig(args.conf, args.args);
  if (!config.ok()) return config.status();

  absl::StatusOr<net::Netns> container = net::Netns::Open(args.netns);
  if (!container.ok()) return container.status();
  absl::StatusOr<net::NetlinkSocket> csock = net::NetlinkSocket::OpenIn(*container);
  if (!csock.ok()) return csock.status();
  std::optional<net::NetlinkSocket> host_sock;
  if (!config->link_in_container) {
    absl::StatusOr<net::NetlinkSocket> h = net::NetlinkSocket::Open();
    if (!h.ok()) return h.status();
    host_sock.emplace(*std::move(h));
  }
  net::NetlinkSocket& msock = config->link_in_container ? *csock : *host_sock;

  absl::StatusOr<net::LinkInfo> master = ResolveMaster(msock, *config);
  if (!master.ok()) return master.status();
  if (config->mtu > master->mtu) {
    return Invalid(absl::StrCat("invalid MTU ", config->mtu, ", must be [0, master MTU(",
                                master->mtu, ")]"));
  }

  absl::StatusOr<net::LinkInfo> link =
      CreateInContainer(msock, *csock, *container, *master, *config, args.ifname);
  if (!link.ok()) return link.status();
  absl::Cleanup remove_link = [&] { (void)net::DeleteLinkByNameIfExists(*csock, args.ifname); };

  Result result;
  result.cni_version = args.conf.cni_version;
  Interface itf;
  itf.name = link->name;
  itf.mac = link->mac.ToString();
  itf.sandbox = container->path();
  result.interfaces.push_back(itf);

  bool have_ipam = false;
  absl::Cleanup release_ipam = [&] {
    if (have_ipam) (void)DelegateDel(config->ipam_type, args);
  };
  if (!config->ipam_type.empty()) {
    absl::StatusOr<Result> ipam = DelegateAdd(config->ipam_type, args);
    if (!ipam.ok()) return ipam.status();
    have_ipam = true;
    if (ipam->ips.empty()) return Invalid("IPAM plugin returned missing IP config");
    result.ips = ipam->ips;
    for (IpConfig& ip : result.ips) ip.interface = kContainerIndex;
    result.routes = ipam->routes;
    result.dns = ipam->dns;
    if (absl::Status st = CheckPrintableAt(result, args.conf); !st.ok()) {
      return Annotate(st, "macvlan: IPAM result");
    }
    // Announce the address when the link comes up (neighbours may have the
    // MAC of a previous holder cached).
    std::string key = absl::StrCat("net/ipv4/conf/", args.ifname, "/arp_notify");
    (void)net::WriteSysctl(*container, key, "1");
    if (absl::Status st = net::ConfigureInterface(*csock, args.ifname, result); !st.ok()) {
      return Annotate(st, "macvlan");
    }
  } else if (absl::Status st = net::SetLinkUp(*csock, *link); !st.ok()) {
    return Annotate(st, "macvlan");
  }
  if (config->dns) result.dns = *config->dns;

  std::move(release_ipam).Cancel();
  std::move(remove_link).Cancel();
  return result;
}

absl::Status Del(const CmdArgs& args) {
  absl::StatusOr<Config> config = ParseConfig(args.conf, args.args);
  if (!config.ok()) return config.status();
  std::vector<absl::Status> failures;
  // IPAM first and unconditionally: the address must not leak when the
  // namespace is already gone.
  if (!config->ipam_type.empty()) {
    if (absl::Status st = DelegateDel(config->ipam_type, args); !st.ok()) {
      failures.push_back(Annotate(st, "macvlan: releasing the IPAM address"));
    }
  }
  if (!args.netns.empty()) {
    // A namespace that is gone took the macvlan with it.
    if (absl::Status st = net::DeleteLinkInNetns(args.netns, args.ifname); !st.ok()) failures.push_back(st);
  }
  return JoinErrors(failures);
}

namespace {

absl::Status Failed(absl::string_view msg) {
  return absl::FailedPreconditionError(absl::StrCat("macvlan: ", msg));
}

}  // namespace

absl::Status Check(const CmdArgs& args) {
  absl::StatusOr<Config> config = ParseConfig(args.conf, args.args);
  if (!config.ok()) return config.status();
  absl::StatusOr<std::optional<Result>> prev = ParsePrevResult(args.conf);
  if (!prev.ok()) return prev.status();
  if (!*prev) return Invalid("required prevResult missing");
  absl::StatusOr<net::Netns> container = net::Netns::Open(args.netns);
  if (!container.ok()) return container.status();
  if (!config->ipam_type.empty()) {
    if (absl::Status st = DelegateCheck(config->ipam_type, args); !st.ok()) return st;
  }
  std::optional<size_t> index;
  for (size_t i = 0; i < (*prev)->interfaces.size(); ++i) {
    const Interface& itf = (*prev)->interfaces[i];
    if (itf.name == args.ifname && itf.sandbox == args.netns) index = i;
  }
  if (!index) {
    return Failed(absl::StrCat("prevResult has no interface \"", args.ifname, "\" with sandbox \"",
                               args.netns, "\""));
  }
  const Interface& want = (*prev)->interfaces[*index];

  absl::StatusOr<net::NetlinkSocket> sock = net::NetlinkSocket::OpenIn(*container);
  if (!sock.ok()) return sock.status();
  absl::StatusOr<net::LinkInfo> link = net::LinkByName(*sock, args.ifname);
  if (absl::IsNotFound(link.status())) {
    return Failed(absl::StrCat("container interface \"", args.ifname, "\" not found"));
  }
  if (!link.ok()) return link.status();
  if (link->kind != "macvlan") {
    return Failed(absl::StrCat("container interface \"", args.ifname, "\" is not a macvlan"));
  }
  if (!want.mac.empty() && absl::AsciiStrToLower(want.mac) != link->mac.ToString()) {
    return Failed(absl::StrCat("container interface \"", args.ifname, "\" has MAC ",
                               link->mac.ToString(), ", prevResult says ", want.mac));
  }
  absl::StatusOr<net::MacvlanMode> mode = net::MacvlanModeOf(*sock, link->index);
  if (!mode.ok()) return mode.status();
  if (*mode != config->mode) {
    return Failed(absl::StrCat("container interface \"", args.ifname, "\" has mode ",
                               net::MacvlanModeName(*mode), ", the config wants ",
                               net::MacvlanModeName(config->mode)));
  }
  absl::StatusOr<std::vector<net::AddressInfo>> addrs = net::ListAddresses(*sock, link->index);
  if (!addrs.ok()) return addrs.status();
  for (const IpConfig& ip : (*prev)->ips) {
    if (ip.interface && *ip.interface != static_cast<int>(*index)) continue;
    bool found = false;
    for (const net::AddressInfo& a : *addrs) found = found || a.prefix == ip.address;
    if (!found) {
      return Failed(absl::StrCat("address ", ip.address.ToString(),
                                 " is missing on container interface \"", args.ifname, "\""));
    }
  }
  absl::StatusOr<std::vector<net::RouteSpec>> table = net::ListRoutes(*sock);
  if (!table.ok()) return table.status();
  for (const Route& r : (*prev)->routes) {
    bool found = false;
    for (const net::RouteSpec& have : *table) {
      found = found || (have.dst.Network() == r.dst.Network() && net::HasPath(have, r.gw));
    }
    if (!found) {
      std::string text = r.dst.Network().ToString();
      if (r.gw) absl::StrAppend(&text, " via ", r.gw->ToString());
      return Failed(absl::StrCat("route ", text, " is missing in the container"));
    }
  }
  return absl::OkStatus();
}

absl::Status Gc(const CmdArgs& args) {
  absl::StatusOr<Config> config = ParseConfig(args.conf, args.args);
  if (!config.ok()) return config.status();
  if (config->ipam_type.empty()) return absl::OkStatus();
  return DelegateGc(config->ipam_type, args);
}

absl::Status Status(const CmdArgs& args) {
  absl::StatusOr<Config> config = ParseConfig(args.conf, args.args);
  if (!config.ok()) return config.status();
  if (config->ipam_type.empty()) return absl::OkStatus();
  return DelegateStatus(config->ipam_type, args);
}

PluginFuncs Funcs() { return {.add = Add, .del = Del, .check = Check, .gc = Gc, .status = Status}; }

}  // namespace cni::macvlan

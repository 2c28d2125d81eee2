#include "cni/plugin/sublink.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "cni/net/route.h"
#include "cni/plugin/container_link.h"

namespace cni::sublink {
namespace {

// Creates the link in the container under the attachment's temporary name
// (it shows as CNI_IFNAME only once made), then renames it. A link already
// under that name was left by an ADD of this attachment killed before its
// rename: it is replaced.
absl::StatusOr<net::LinkInfo> CreateInContainer(net::NetlinkSocket& master_sock,
                                                net::NetlinkSocket& csock,
                                                const net::Netns& container,
                                                const net::LinkInfo& master, const AddSpec& spec,
                                                const CmdArgs& args) {
  RETURN_IF_ERROR(container_link::RequireFreeName(csock, args.ifname, spec.plugin));
  net::MasterLink link{.name = net::TemporaryLinkName(spec.name_prefix, args.container_id, args.ifname),
                       .master_index = master.index,
                       .mtu = spec.mtu,
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

}  // namespace

absl::StatusOr<net::LinkInfo> ResolveMaster(net::NetlinkSocket& sock, const Master& master,
                                            absl::string_view plugin) {
  const char* where = master.in_container ? "container" : "host";
  if (!master.name.empty()) {
    absl::StatusOr<net::LinkInfo> m = net::LinkByName(sock, master.name);
    if (absl::IsNotFound(m.status())) {
      return InvalidConfig(plugin, absl::StrCat("master \"", master.name, "\" not found in the ", where, " namespace"));
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
  return InvalidConfig(
      plugin, absl::StrCat("no master given and no default route in the ", where, " namespace to take it from"));
}

absl::Status RequireMtuWithin(const net::LinkInfo& master, int mtu, absl::string_view plugin) {
  if (mtu <= master.mtu) return absl::OkStatus();
  return InvalidConfig(plugin, absl::StrCat("invalid MTU ", mtu, ", must be [0, master MTU(", master.mtu, ")]"));
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

  Result result = container_link::ResultFor(args, link, container);
  RETURN_IF_ERROR(container_link::Address(args, &csock, &link, result,
                                          {.plugin = spec.plugin,
                                           .ipam_type = spec.ipam_type,
                                           .dns = spec.dns,
                                           .chained = spec.chained,
                                           .announce = container_link::Announce::kArpAndNdisc}));
  std::move(remove_link).Cancel();
  return result;
}

absl::Status ChainTo(const std::optional<Result>& prev, AddSpec& spec) {
  if (!prev) return absl::OkStatus();
  spec.chained = &*prev;
  // Without a master, the link goes on the one interface the previous plugin
  // made (upstream's rule).
  if (!spec.master.name.empty()) return absl::OkStatus();
  if (prev->interfaces.size() != 1 || prev->interfaces[0].name.empty()) {
    return InvalidConfig(spec.plugin, "chained master failure: prevResult lacks a single named interface");
  }
  spec.master.name = prev->interfaces[0].name;
  return absl::OkStatus();
}

}  // namespace cni::sublink

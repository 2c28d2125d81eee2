#include "cni/plugin/check.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/quoted.h"
#include "cni/base/status_macros.h"
#include "cni/net/addr.h"
#include "cni/net/route.h"
#include "cni/protocol/invoke.h"

namespace cni::net {

absl::StatusOr<CheckStart> StartCheck(const CmdArgs& args, absl::string_view ipam_type,
                                      absl::string_view plugin) {
  ASSIGN_OR_RETURN(std::optional<Result> prev, ParsePrevResult(args.conf));
  if (!prev) {
    return Error(ErrorCode::kInvalidNetworkConfig, absl::StrCat(plugin, ": required prevResult missing"));
  }
  ASSIGN_OR_RETURN(Netns container, Netns::Open(args.netns));
  if (!ipam_type.empty()) RETURN_IF_ERROR(DelegateCheck(ipam_type, args));
  return CheckStart{*std::move(prev), std::move(container)};
}

absl::StatusOr<size_t> FindPrevInterface(const Result& prev, absl::string_view ifname,
                                         absl::string_view netns) {
  std::optional<size_t> index;
  for (size_t i = 0; i < prev.interfaces.size(); ++i) {
    const Interface& itf = prev.interfaces[i];
    if (itf.name == ifname && itf.sandbox == netns) index = i;
  }
  if (index) return *index;
  return Error(ErrorCode::kInvalidNetworkConfig,
               absl::StrCat("prevResult has no interface ", Quoted(ifname), " with sandbox ", Quoted(netns)));
}

absl::Status CheckInterfaceAddresses(NetlinkSocket& sock, const LinkInfo& link, const Result& prev,
                                     size_t index) {
  ASSIGN_OR_RETURN(std::vector<AddressInfo> addrs, ListAddresses(sock, link.index));
  for (const IpConfig& ip : prev.ips) {
    if (ip.interface && *ip.interface != static_cast<int>(index)) continue;
    bool found = false;
    for (const AddressInfo& a : addrs) found = found || a.prefix == ip.address;
    if (!found) {
      return absl::FailedPreconditionError(absl::StrCat("address ", ip.address.ToString(),
                                                        " is missing on container interface ",
                                                        Quoted(link.name)));
    }
  }
  return absl::OkStatus();
}

namespace {

// Every one of `routes` is in the namespace, through `link` when given.
absl::Status RequireRoutes(NetlinkSocket& sock, const LinkInfo* link, const std::vector<Route>& routes) {
  RouteFilter filter;
  if (link != nullptr) filter.ifindex = link->index;
  ASSIGN_OR_RETURN(std::vector<RouteSpec> table, ListRoutes(sock, filter));
  const int ifindex = link != nullptr ? link->index : 0;
  for (const Route& r : routes) {
    bool found = false;
    for (const RouteSpec& have : table) {
      found = found || (have.dst.Network() == r.dst.Network() && HasPath(have, r.gw, ifindex));
    }
    if (!found) {
      std::string text = r.dst.Network().ToString();
      if (r.gw) absl::StrAppend(&text, " via ", r.gw->ToString());
      return absl::FailedPreconditionError(absl::StrCat(
          "route ", text, " is missing ", link != nullptr ? absl::StrCat("on ", Quoted(link->name)) : "in the container"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckRoutes(NetlinkSocket& sock, const Result& prev) { return RequireRoutes(sock, nullptr, prev.routes); }

absl::Status CheckRoutesOn(NetlinkSocket& sock, const LinkInfo& link, const std::vector<Route>& routes) {
  return RequireRoutes(sock, &link, routes);
}

absl::StatusOr<LinkInfo> CheckPrevLink(NetlinkSocket& sock, const Interface& want,
                                       absl::string_view kind) {
  absl::StatusOr<LinkInfo> link = LinkByName(sock, want.name);
  if (absl::IsNotFound(link.status())) {
    return absl::FailedPreconditionError(
        absl::StrCat("container interface ", Quoted(want.name), " not found"));
  }
  RETURN_IF_ERROR(link);
  if (!kind.empty() && link->kind != kind) {
    return absl::FailedPreconditionError(
        absl::StrCat("container interface ", Quoted(want.name), " is not a ", kind));
  }
  if (!want.mac.empty() && absl::AsciiStrToLower(want.mac) != link->mac.ToString()) {
    return absl::FailedPreconditionError(absl::StrCat("container interface ", Quoted(want.name),
                                                      " has MAC ", link->mac.ToString(),
                                                      ", prevResult says ", want.mac));
  }
  return *link;
}

}  // namespace cni::net

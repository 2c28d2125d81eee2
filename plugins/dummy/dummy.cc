#include "dummy.h"

#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/quoted.h"
#include "cni/base/status_macros.h"
#include "cni/net/link.h"
#include "cni/net/netlink.h"
#include "cni/net/netns.h"
#include "cni/plugin/check.h"
#include "cni/plugin/ipam_apply.h"
#include "cni/plugin/ipam_lease.h"
#include "cni/plugin/teardown.h"
#include "cni/protocol/invoke.h"

namespace cni::dummy {

absl::StatusOr<Result> Add(const CmdArgs& args, const Config& config) {
  ASSIGN_OR_RETURN(net::Netns container, net::Netns::Open(args.netns));
  ASSIGN_OR_RETURN(net::NetlinkSocket csock, net::NetlinkSocket::OpenIn(container));
  // A taken name is refused before anything is made, so the rollback below
  // can never delete a link this ADD did not create.
  ASSIGN_OR_RETURN(bool taken, net::LinkExists(csock, args.ifname));
  if (taken) {
    return absl::AlreadyExistsError(
        absl::StrCat("dummy: container interface ", Quoted(args.ifname), " already exists"));
  }
  RETURN_IF_ERROR(net::CreateDummy(csock, args.ifname), "dummy");
  absl::Cleanup remove_link = [&] { (void)net::DeleteLinkByNameIfExists(csock, args.ifname); };
  ASSIGN_OR_RETURN(net::LinkInfo link, net::LinkByName(csock, args.ifname), "dummy");

  // Declared after remove_link, so a failed ADD releases the address first.
  ASSIGN_OR_RETURN(IpamLease lease, IpamLease::Acquire(args, config.ipam_type));
  RETURN_IF_ERROR(lease.RequireAddresses(), "dummy");

  Result result;
  result.cni_version = args.conf.cni_version;
  Interface itf;
  itf.name = link.name;
  itf.mac = link.mac.ToString();
  itf.sandbox = container.path();
  result.interfaces.push_back(itf);
  lease.CopyInto(result, kContainerIndex);
  RETURN_IF_ERROR(net::ConfigureInterface(csock, args.ifname, result), "dummy");
  if (config.dns) result.dns = *config.dns;

  RETURN_IF_ERROR(lease.Commit(result), "dummy");
  std::move(remove_link).Cancel();
  return result;
}

absl::Status Del(const CmdArgs& args, const Config& config) {
  return net::DeleteContainerLinkAndAddress(args, config.ipam_type, "dummy");
}

absl::Status Check(const CmdArgs& args, const Config& config) {
  ASSIGN_OR_RETURN(std::optional<Result> prev, ParsePrevResult(args.conf));
  if (!prev) {
    return Error(ErrorCode::kInvalidNetworkConfig, "dummy: required prevResult missing");
  }
  ASSIGN_OR_RETURN(net::Netns container, net::Netns::Open(args.netns));
  RETURN_IF_ERROR(DelegateCheck(config.ipam_type, args));
  ASSIGN_OR_RETURN(size_t index, net::FindPrevInterface(*prev, args.ifname, args.netns), "dummy");

  ASSIGN_OR_RETURN(net::NetlinkSocket sock, net::NetlinkSocket::OpenIn(container));
  ASSIGN_OR_RETURN(net::LinkInfo link, net::CheckPrevLink(sock, prev->interfaces[index], "dummy"),
                   "dummy");
  if (!link.up()) {
    return absl::FailedPreconditionError(
        absl::StrCat("dummy: container interface ", Quoted(link.name), " is down"));
  }
  RETURN_IF_ERROR(net::CheckInterfaceAddresses(sock, link, *prev, index), "dummy");
  RETURN_IF_ERROR(net::CheckRoutes(sock, *prev), "dummy");
  return absl::OkStatus();
}

PluginFuncs Funcs() {
  return Typed<Config>({.add = Add,
                        .del = Del,
                        .check = Check,
                        .gc = ForwardGcToIpam<Config>,
                        .status = ForwardStatusToIpam<Config>});
}

}  // namespace cni::dummy

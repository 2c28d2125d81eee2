#include "dummy.h"

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "cni/base/quoted.h"
#include "cni/base/status_macros.h"
#include "cni/net/link.h"
#include "cni/net/netlink.h"
#include "cni/net/netns.h"
#include "cni/plugin/container_link.h"
#include "config.h"

namespace cni::dummy {
namespace {

absl::StatusOr<Result> Add(const CmdArgs& args, const Config& config) {
  ASSIGN_OR_RETURN(net::Netns container, net::Netns::Open(args.netns));
  ASSIGN_OR_RETURN(net::NetlinkSocket csock, net::NetlinkSocket::OpenIn(container));
  RETURN_IF_ERROR(container_link::RequireFreeName(csock, args.ifname, "dummy"));
  RETURN_IF_ERROR(net::CreateDummy(csock, args.ifname), "dummy");
  absl::Cleanup remove_link = [&] { (void)net::DeleteLinkByNameIfExists(csock, args.ifname); };
  ASSIGN_OR_RETURN(net::LinkInfo link, net::LinkByName(csock, args.ifname), "dummy");

  Result result = container_link::ResultFor(args, link, container);
  RETURN_IF_ERROR(container_link::Address(args, &csock, &link, result,
                                          {.plugin = "dummy", .ipam_type = config.ipam_type, .dns = config.dns}));
  std::move(remove_link).Cancel();
  return result;
}

// CHECK: besides the common steps, the link is up.
absl::Status Check(const CmdArgs& args, const Config& config) {
  container_link::CheckSpec spec{.plugin = "dummy", .kind = "dummy", .ipam_type = config.ipam_type};
  spec.check_link = [](net::NetlinkSocket&, const net::LinkInfo& link) -> absl::Status {
    if (link.up()) return absl::OkStatus();
    return absl::FailedPreconditionError(
        absl::StrCat("dummy: container interface ", Quoted(link.name), " is down"));
  };
  return container_link::Check(args, spec);
}

}  // namespace

PluginFuncs Funcs() {
  // DEL reads the whole Config, as upstream's (which refuses one without IPAM).
  return container_link::Funcs<Config, Config>("dummy", /*temp_prefix=*/"", Add, Check);
}

}  // namespace cni::dummy

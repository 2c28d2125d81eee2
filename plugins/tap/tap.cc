#include "tap.h"

#include <fcntl.h>
#include <linux/ip.h>
#include <sys/stat.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/exec.h"
#include "cni/base/fs.h"
#include "cni/base/quoted.h"
#include "cni/base/status_macros.h"
#include "cni/net/devconf.h"
#include "cni/net/link.h"
#include "cni/net/netlink.h"
#include "cni/net/netns.h"
#include "cni/net/tuntap.h"
#include "cni/plugin/check.h"
#include "cni/plugin/ipam_apply.h"
#include "cni/plugin/ipam_lease.h"
#include "cni/plugin/teardown.h"
#include "cni/protocol/invoke.h"

namespace cni::tap {
namespace {

absl::Status Invalid(absl::string_view msg) {
  return Error(ErrorCode::kInvalidNetworkConfig, absl::StrCat("tap: ", msg));
}

bool SelinuxEnabled() {
  struct stat st {};
  return stat("/sys/fs/selinux/enforce", &st) == 0;
}

// With SELinux enforcing a label, the tap must be created by a process that
// runs with it (the kernel labels a tun device with its creator's context):
// as upstream, `ip tuntap add` is executed with `label` as its exec context,
// from a thread inside the container namespace (the child inherits both).
absl::Status CreateLabelledTap(const net::Netns& ns, const net::TapSpec& spec,
                               const std::string& label) {
  std::string ip = FindSystemProgram("ip");
  if (ip.empty()) return Invalid("selinuxContext needs the ip program, which is not installed");
  std::vector<std::string> argv = {ip, "tuntap", "add", "mode", "tap", "name", spec.name};
  if (spec.multi_queue) argv.push_back("multi_queue");
  if (spec.owner) argv.insert(argv.end(), {"user", std::to_string(*spec.owner)});
  if (spec.group) argv.insert(argv.end(), {"group", std::to_string(*spec.group)});
  return ns.Run([&]() -> absl::Status {
    ASSIGN_OR_RETURN(UniqueFd attr, OpenFile("/proc/thread-self/attr/exec", O_WRONLY));
    RETURN_IF_ERROR(WriteAll(attr.get(), label, "/proc/thread-self/attr/exec"),
                    "tap: setting the exec label");
    ASSIGN_OR_RETURN(CommandResult r, RunCommand(argv, {}, ""));
    if (r.exit_code != 0) {
      return absl::InternalError(absl::StrCat("tap: ip tuntap add: ", r.err, r.out));
    }
    return absl::OkStatus();
  });
}

// The temporary name's prefix: "tp" + 8 hex digits (net::TemporaryLinkName).
constexpr const char* kTempPrefix = "tp";

// Creates the tap under the attachment's temporary name (it shows as
// CNI_IFNAME only once set up) and returns it. A link already under that
// name was left by an ADD of this attachment killed before its rename: it
// is replaced.
absl::StatusOr<net::LinkInfo> CreateTemp(net::NetlinkSocket& csock, const net::Netns& container,
                                         const CmdArgs& args, const Config& config) {
  net::TapSpec spec;
  spec.name = net::TemporaryLinkName(kTempPrefix, args.container_id, args.ifname);
  spec.multi_queue = config.multi_queue;
  spec.owner = config.owner;
  spec.group = config.group;
  auto create = [&] {
    return !config.selinux_context.empty() && SelinuxEnabled()
               ? CreateLabelledTap(container, spec, config.selinux_context)
               : net::CreateTap(container, spec);
  };
  absl::Status created = create();
  if (absl::IsAlreadyExists(created)) {
    RETURN_IF_ERROR(net::DeleteLinkByNameIfExists(csock, spec.name), "tap: removing a killed ADD's tap");
    created = create();
  }
  RETURN_IF_ERROR(created, "tap");
  return net::LinkByName(csock, spec.name);
}

}  // namespace

absl::StatusOr<Result> Add(const CmdArgs& args, const Config& config) {
  ASSIGN_OR_RETURN(net::Netns container, net::Netns::Open(args.netns));
  ASSIGN_OR_RETURN(net::NetlinkSocket csock, net::NetlinkSocket::OpenIn(container));
  ASSIGN_OR_RETURN(bool taken, net::LinkExists(csock, args.ifname));
  if (taken) {
    return absl::AlreadyExistsError(
        absl::StrCat("tap: container interface ", Quoted(args.ifname), " already exists"));
  }
  // The bridge lives in the container namespace (as upstream looks it up).
  std::optional<net::LinkInfo> bridge;
  if (!config.bridge.empty()) {
    absl::StatusOr<net::LinkInfo> br = net::LinkByName(csock, config.bridge);
    if (absl::IsNotFound(br.status())) {
      return Invalid(absl::StrCat("bridge ", Quoted(config.bridge),
                                  " not found in the container namespace"));
    }
    RETURN_IF_ERROR(br.status(), "tap");
    if (br->kind != "bridge") {
      return Invalid(absl::StrCat(Quoted(config.bridge), " is not a bridge"));
    }
    bridge = *br;
  }

  ASSIGN_OR_RETURN(net::LinkInfo link, CreateTemp(csock, container, args, config));
  // By index: the same link under its temporary name or CNI_IFNAME.
  absl::Cleanup remove_link = [&] { (void)net::DeleteLink(csock, link); };
  if (config.mtu != 0) RETURN_IF_ERROR(net::SetLinkMtu(csock, link, config.mtu), "tap");
  if (config.mac) RETURN_IF_ERROR(net::SetLinkMac(csock, link, *config.mac), "tap");
  RETURN_IF_ERROR(net::RenameLink(csock, link, args.ifname), "tap");
  ASSIGN_OR_RETURN(link, net::LinkByIndex(csock, link.index), "tap");
  if (bridge) RETURN_IF_ERROR(net::SetLinkMaster(csock, link, bridge->index), "tap");

  Result result;
  result.cni_version = args.conf.cni_version;
  Interface itf;
  itf.name = link.name;
  itf.mac = link.mac.ToString();
  itf.sandbox = container.path();
  result.interfaces.push_back(itf);

  // Declared after remove_link, so a failed ADD releases the address first.
  std::optional<IpamLease> lease;
  if (config.ipam_type.empty()) {
    RETURN_IF_ERROR(net::SetLinkUp(csock, link), "tap");
  } else {
    ASSIGN_OR_RETURN(IpamLease acquired, IpamLease::Acquire(args, config.ipam_type));
    lease.emplace(std::move(acquired));
    RETURN_IF_ERROR(lease->RequireAddresses(), "tap");
    lease->CopyInto(result, kContainerIndex);
    (void)net::SetIpv4DevConf(csock, link.index, IPV4_DEVCONF_ARP_NOTIFY, 1);
    RETURN_IF_ERROR(net::ConfigureInterface(csock, args.ifname, result), "tap");
  }
  if (config.dns) result.dns = *config.dns;

  if (lease) RETURN_IF_ERROR(lease->Commit(result), "tap");
  std::move(remove_link).Cancel();
  return result;
}

absl::Status Del(const CmdArgs& args, const IpamTeardownConfig& config) {
  return net::DeleteContainerLinkAndAddress(args, config.ipam_type, "tap", kTempPrefix);
}

absl::Status Check(const CmdArgs& args, const Config& config) {
  ASSIGN_OR_RETURN(std::optional<Result> prev, ParsePrevResult(args.conf));
  if (!prev) return Invalid("required prevResult missing");
  ASSIGN_OR_RETURN(net::Netns container, net::Netns::Open(args.netns));
  if (!config.ipam_type.empty()) RETURN_IF_ERROR(DelegateCheck(config.ipam_type, args));
  ASSIGN_OR_RETURN(size_t index, net::FindPrevInterface(*prev, args.ifname, args.netns), "tap");

  ASSIGN_OR_RETURN(net::NetlinkSocket sock, net::NetlinkSocket::OpenIn(container));
  // A tap is a "tun" link to the kernel (its mode is in IFLA_TUN_TYPE).
  ASSIGN_OR_RETURN(net::LinkInfo link, net::CheckPrevLink(sock, prev->interfaces[index], "tun"),
                   "tap");
  if (!config.bridge.empty()) {
    ASSIGN_OR_RETURN(net::LinkInfo br, net::LinkByName(sock, config.bridge), "tap");
    if (link.master != br.index) {
      return absl::FailedPreconditionError(absl::StrCat(
          "tap: container interface ", Quoted(link.name), " is not a port of ", Quoted(br.name)));
    }
  }
  RETURN_IF_ERROR(net::CheckInterfaceAddresses(sock, link, *prev, index), "tap");
  RETURN_IF_ERROR(net::CheckRoutes(sock, *prev), "tap");
  return absl::OkStatus();
}

PluginFuncs Funcs() {
  // DEL and GC read only the IPAM type (IpamTeardownConfig).
  return TypedWithTeardown<Config, IpamTeardownConfig>(
      {.add = Add, .check = Check, .status = ForwardStatusToIpam<Config>},
      {.del = Del, .gc = ForwardGcToIpam<IpamTeardownConfig>});
}

}  // namespace cni::tap

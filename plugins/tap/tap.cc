#include "tap.h"

#include <fcntl.h>
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
#include "cni/net/link.h"
#include "cni/net/netlink.h"
#include "cni/net/netns.h"
#include "cni/net/tuntap.h"
#include "cni/plugin/container_link.h"
#include "config.h"

namespace cni::tap {
namespace {

absl::Status Invalid(absl::string_view msg) { return InvalidConfig("tap", msg); }

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

absl::StatusOr<Result> Add(const CmdArgs& args, const Config& config) {
  ASSIGN_OR_RETURN(net::Netns container, net::Netns::Open(args.netns));
  ASSIGN_OR_RETURN(net::NetlinkSocket csock, net::NetlinkSocket::OpenIn(container));
  RETURN_IF_ERROR(container_link::RequireFreeName(csock, args.ifname, "tap"));
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

  Result result = container_link::ResultFor(args, link, container);
  RETURN_IF_ERROR(container_link::Address(args, &csock, &link, result,
                                          {.plugin = "tap",
                                           .ipam_type = config.ipam_type,
                                           .dns = config.dns,
                                           .announce = container_link::Announce::kArp}));
  std::move(remove_link).Cancel();
  return result;
}

// CHECK: a tap is a "tun" link to the kernel (its mode is in IFLA_TUN_TYPE),
// a port of the configured bridge.
absl::Status Check(const CmdArgs& args, const Config& config) {
  container_link::CheckSpec spec{.plugin = "tap", .kind = "tun", .ipam_type = config.ipam_type};
  spec.check_link = [&](net::NetlinkSocket& csock, const net::LinkInfo& link) -> absl::Status {
    if (config.bridge.empty()) return absl::OkStatus();
    ASSIGN_OR_RETURN(net::LinkInfo br, net::LinkByName(csock, config.bridge), "tap");
    if (link.master == br.index) return absl::OkStatus();
    return absl::FailedPreconditionError(absl::StrCat(
        "tap: container interface ", Quoted(link.name), " is not a port of ", Quoted(br.name)));
  };
  return container_link::Check(args, spec);
}

}  // namespace

PluginFuncs Funcs() { return container_link::Funcs<Config>("tap", kTempPrefix, Add, Check); }

}  // namespace cni::tap

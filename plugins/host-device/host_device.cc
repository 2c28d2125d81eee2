#include "host_device.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/quoted.h"
#include "cni/base/status_macros.h"
#include "cni/net/link.h"
#include "cni/net/netlink.h"
#include "cni/net/netns.h"
#include "cni/plugin/container_link.h"
#include "config.h"
#include "cni/protocol/invoke.h"

namespace cni::host_device {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSysBusPci = "/sys/bus/pci/devices";
constexpr const char* kSysBusAuxiliary = "/sys/bus/auxiliary/devices";
// Drivers that hand a PCI network device to userspace (DPDK): such a device
// has no kernel link to move.
constexpr const char* kUserspaceDrivers[] = {"vfio-pci", "uio_pci_generic", "igb_uio"};

absl::Status Invalid(absl::string_view msg) { return InvalidConfig("host-device", msg); }

// Where the device is, once runtimeConfig.deviceID is resolved.
struct Source {
  std::string pci;  // a PCI address
  std::string aux;  // an auxiliary bus device
  bool dpdk = false;
};

bool Exists(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec);
}

absl::StatusOr<Source> ResolveSource(const Config& config) {
  Source src;
  src.pci = config.pci_bus_id;
  // runtimeConfig.deviceID overrides pciBusID: a PCI device, else an auxiliary one.
  if (!config.device_id.empty()) {
    if (Exists(fs::path(kSysBusPci) / config.device_id)) {
      src.pci = config.device_id;
    } else if (Exists(fs::path(kSysBusAuxiliary) / config.device_id)) {
      src.pci.clear();
      src.aux = config.device_id;
    } else {
      return Invalid(absl::StrCat("runtime config DeviceID ", config.device_id,
                                  " not found or unsupported"));
    }
  }
  if (!src.pci.empty()) {
    std::error_code ec;
    fs::path driver = fs::canonical(fs::path(kSysBusPci) / src.pci / "driver", ec);
    if (ec) {
      return Invalid(absl::StrCat("error with host device: PCI device ", src.pci, ": ", ec.message()));
    }
    const std::string name = driver.filename().string();
    src.dpdk = std::any_of(std::begin(kUserspaceDrivers), std::end(kUserspaceDrivers),
                           [&](const char* d) { return name == d; });
  }
  return src;
}

// The first network device listed in a sysfs "net" directory (sorted, as upstream).
absl::StatusOr<std::string> FirstNetDevice(const fs::path& dir) {
  std::error_code ec;
  std::vector<std::string> names;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  if (ec) {
    return Invalid(absl::StrCat("failed to find host device: reading ", dir.string(), ": ",
                                ec.message()));
  }
  if (names.empty()) {
    return Invalid(absl::StrCat("failed to find host device: no network device in ", dir.string()));
  }
  return *std::min_element(names.begin(), names.end());
}

// The sysfs directory listing the network device of a PCI address: "net",
// or virtio*/net for a virtio device.
absl::StatusOr<fs::path> PciNetDir(const std::string& pci) {
  fs::path dev = fs::path(kSysBusPci) / pci;
  if (Exists(dev / "net")) return dev / "net";
  std::error_code ec;
  std::vector<fs::path> found;
  for (fs::directory_iterator it(dev, ec), end; !ec && it != end; it.increment(ec)) {
    if (absl::StartsWith(it->path().filename().string(), "virtio") && Exists(it->path() / "net")) {
      found.push_back(it->path() / "net");
    }
  }
  if (found.empty()) {
    return Invalid(absl::StrCat("failed to find host device: no net directory under pci device ", pci));
  }
  return *std::min_element(found.begin(), found.end());
}

// A device that was moved into a namespace which then died without a DEL:
// the kernel gives a physical device back to the initial namespace under the
// name it had in the container (or "dev<index>" when that is taken), with the
// alias ADD gave it, which names `device`. nullopt when a link has the name
// `device` (nothing to look for) or none has it as its alias; two such links
// cannot be told apart: refused.
absl::StatusOr<std::optional<net::LinkInfo>> ReturnedDevice(net::NetlinkSocket& hsock,
                                                           const std::string& device) {
  ASSIGN_OR_RETURN(std::vector<net::LinkInfo> links, net::ListLinks(hsock), "host-device");
  std::optional<net::LinkInfo> found;
  for (const net::LinkInfo& l : links) {
    if (l.name == device) return std::nullopt;
    if (l.alias != device) continue;
    if (found) {
      return Invalid(absl::StrCat("failed to find host device ", Quoted(device), ": ",
                                  Quoted(found->name), " and ", Quoted(l.name),
                                  " both have it as their alias"));
    }
    found = l;
  }
  return found;
}

// The host link the configuration names.
absl::StatusOr<net::LinkInfo> FindHostLink(net::NetlinkSocket& hsock, const Config& config,
                                           const Source& src) {
  std::string name;
  if (!config.device.empty()) {
    name = config.device;
  } else if (config.hwaddr) {
    ASSIGN_OR_RETURN(std::vector<net::LinkInfo> links, net::ListLinks(hsock), "host-device");
    for (const net::LinkInfo& l : links) {
      if (l.mac == *config.hwaddr) return l;
    }
    return Invalid(absl::StrCat("failed to find host device: no link with MAC ",
                                config.hwaddr->ToString()));
  } else if (!config.kernel_path.empty()) {
    ASSIGN_OR_RETURN(name, FirstNetDevice(fs::path(config.kernel_path) / "net"));
  } else if (!src.pci.empty()) {
    ASSIGN_OR_RETURN(fs::path dir, PciNetDir(src.pci));
    ASSIGN_OR_RETURN(name, FirstNetDevice(dir));
  } else {
    ASSIGN_OR_RETURN(name, FirstNetDevice(fs::path(kSysBusAuxiliary) / src.aux / "net"));
  }
  absl::StatusOr<net::LinkInfo> link = net::LinkByName(hsock, name);
  if (absl::IsNotFound(link.status()) && !config.device.empty()) {
    ASSIGN_OR_RETURN(std::optional<net::LinkInfo> returned, ReturnedDevice(hsock, config.device));
    if (returned) return *returned;
  }
  if (absl::IsNotFound(link.status())) {
    return Invalid(absl::StrCat("failed to find host device ", Quoted(name)));
  }
  RETURN_IF_ERROR(link.status(), "host-device");
  return *link;
}

// After a DEL that found the namespace gone: the device the kernel gave back
// gets its name again and loses the alias. Best effort: the namespace is
// gone, so the runtime must be able to finish the DEL (and the next ADD of
// this device finds it by its alias anyway).
void RenameReturnedDevice(const Config& config) {
  if (config.device.empty()) return;
  absl::StatusOr<net::NetlinkSocket> hsock = net::NetlinkSocket::Open();
  if (!hsock.ok()) return;
  absl::StatusOr<std::optional<net::LinkInfo>> returned = ReturnedDevice(*hsock, config.device);
  if (!returned.ok() || !*returned) return;
  const net::LinkInfo& dev = **returned;
  // Given back down, but 6.1 refuses to rename a link that is up.
  if (dev.up() && !net::SetLinkDown(*hsock, dev).ok()) return;
  // Both by index, which a rename keeps.
  if (!net::RenameLink(*hsock, dev, config.device).ok()) return;
  (void)net::SetLinkAlias(*hsock, dev, "");
}

// DEL's release of the container's link: back to the host under its
// original name (the alias ADD set, else the configured device name), with
// its alias cleared, in one request (no crash can leave it back but still
// carrying the alias). The kernel brings a moved link down; it is left so
// (its state before ADD is not known here).
absl::Status MoveOut(net::NetlinkSocket& csock, const net::LinkInfo& link, const Config& config) {
  const std::string original = !link.alias.empty() ? link.alias : config.device;
  if (original.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "failed to find original ifname for ", Quoted(link.name), " (alias is not set)"));
  }
  ASSIGN_OR_RETURN(net::Netns host, net::Netns::Current());
  return net::MoveLinkToNetnsAs(csock, link, host, original, "");
}

absl::StatusOr<Result> Add(const CmdArgs& args, const Config& config) {
  ASSIGN_OR_RETURN(net::Netns container, net::Netns::Open(args.netns));
  ASSIGN_OR_RETURN(Source src, ResolveSource(config));

  // The result names CNI_IFNAME even for a device that is not moved (then
  // without a MAC).
  Result result = container_link::ResultFor(args, {.name = args.ifname}, container);
  result.interfaces[0].mac.clear();

  std::optional<net::NetlinkSocket> csock;
  std::optional<net::NetlinkSocket> hsock;
  std::optional<net::Netns> host;
  std::optional<net::LinkInfo> moved;  // the host device, as it was, once moved in
  std::optional<net::LinkInfo> in;     // the same, in the container (not for a userspace device)
  // A failed ADD moves it back as it was: name, alias, up state.
  absl::Cleanup move_back = [&] {
    if (!moved) return;
    absl::StatusOr<net::LinkInfo> now = net::LinkByName(*csock, args.ifname);
    if (!now.ok() || !net::MoveLinkToNetnsAs(*csock, *now, *host, moved->name, moved->alias).ok()) return;
    if (!moved->up()) return;
    absl::StatusOr<net::LinkInfo> back = net::LinkByName(*hsock, moved->name);
    if (back.ok()) (void)net::SetLinkUp(*hsock, *back);
  };
  if (!src.dpdk) {
    ASSIGN_OR_RETURN(host, net::Netns::Current());
    ASSIGN_OR_RETURN(hsock, net::NetlinkSocket::Open());
    ASSIGN_OR_RETURN(csock, net::NetlinkSocket::OpenIn(container));
    ASSIGN_OR_RETURN(net::LinkInfo dev, FindHostLink(*hsock, config, src));
    if (net::Netns::Same(*host, container)) {
      return Error(ErrorCode::kInvalidNetns, "host-device: CNI_NETNS is the plugin's own namespace");
    }
    RETURN_IF_ERROR(container_link::RequireFreeName(*csock, args.ifname, "host-device"));
    // The original name goes into the alias, which moves with the link: with
    // `device`, that name (a device given back carries it only in its alias).
    // Set by the request that moves it, so no crash can leave the alias on a
    // device still in the host (where no DEL would look for it).
    const std::string& original = config.device.empty() ? dev.name : config.device;
    RETURN_IF_ERROR(net::MoveLinkToNetnsAs(*hsock, dev, container, args.ifname, original), "host-device");
    moved = dev;
    ASSIGN_OR_RETURN(in, net::LinkByName(*csock, args.ifname), "host-device");
    RETURN_IF_ERROR(net::SetLinkUp(*csock, *in), "host-device");
    result.interfaces[0].mac = in->mac.ToString();
  }
  // A device handed to userspace gets its addresses from whoever drives it.
  RETURN_IF_ERROR(container_link::Address(args, csock ? &*csock : nullptr, in ? &*in : nullptr, result,
                                          {.plugin = "host-device", .ipam_type = config.ipam_type, .dns = config.dns}));
  std::move(move_back).Cancel();
  return result;
}

absl::Status Del(const CmdArgs& args, const Config& config) {
  return container_link::Del(
      args, {.plugin = "host-device",
             .ipam_type = config.ipam_type,
             .release = [&](net::NetlinkSocket& csock, const net::LinkInfo& link) { return MoveOut(csock, link, config); },
             // Gone (the path, or only the namespace behind a left-over mount
             // point): the kernel has given a physical device back to the
             // initial namespace under its container name, and destroyed a
             // virtual one. A device given back is renamed, if the kernel has
             // given it back yet.
             .namespace_gone = [&] { RenameReturnedDevice(config); },
             .stale_mount_is_gone = true});
}

absl::Status Check(const CmdArgs& args, const Config& config) {
  container_link::CheckSpec spec{.plugin = "host-device", .ipam_type = config.ipam_type};
  // A device handed to a userspace driver has no kernel link to check.
  spec.has_link = [&]() -> absl::StatusOr<bool> {
    ASSIGN_OR_RETURN(Source src, ResolveSource(config));
    return !src.dpdk;
  };
  return container_link::Check(args, spec);
}

}  // namespace

PluginFuncs Funcs() {
  // DEL and GC read only what the teardown needs (TeardownConfig).
  return TypedWithTeardown<Config, TeardownConfig>(
      {.add = Add, .check = Check, .status = ForwardStatusToIpam<Config>},
      {.del = Del, .gc = ForwardGcToIpam<TeardownConfig>});
}

}  // namespace cni::host_device

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
#include "cni/plugin/check.h"
#include "cni/plugin/ipam_apply.h"
#include "cni/plugin/ipam_lease.h"
#include "cni/protocol/invoke.h"

namespace cni::host_device {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSysBusPci = "/sys/bus/pci/devices";
constexpr const char* kSysBusAuxiliary = "/sys/bus/auxiliary/devices";
// Drivers that hand a PCI network device to userspace (DPDK): such a device
// has no kernel link to move.
constexpr const char* kUserspaceDrivers[] = {"vfio-pci", "uio_pci_generic", "igb_uio"};

absl::Status Invalid(absl::string_view msg) {
  return Error(ErrorCode::kInvalidNetworkConfig, absl::StrCat("host-device: ", msg));
}

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

// Moves the container's `ifname` back to the host as `original`, with its
// alias cleared, in one request (no crash can leave it back but still
// carrying the alias). The kernel brings a moved link down; it is left so
// (its state before ADD is not known here).
absl::Status MoveOut(net::NetlinkSocket& csock, const net::Netns& host, const net::LinkInfo& link,
                     const std::string& original) {
  RETURN_IF_ERROR(net::MoveLinkToNetnsAs(csock, link, host, original, ""), "host-device");
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Result> Add(const CmdArgs& args, const Config& config) {
  ASSIGN_OR_RETURN(net::Netns container, net::Netns::Open(args.netns));
  ASSIGN_OR_RETURN(Source src, ResolveSource(config));

  Result result;
  result.cni_version = args.conf.cni_version;
  Interface itf;
  itf.name = args.ifname;
  itf.sandbox = container.path();

  std::optional<net::NetlinkSocket> csock;
  std::optional<net::NetlinkSocket> hsock;
  std::optional<net::Netns> host;
  std::optional<net::LinkInfo> moved;  // the host device, as it was, once moved in
  // A failed ADD moves it back as it was: name, alias, up state.
  absl::Cleanup move_back = [&] {
    if (!moved) return;
    absl::StatusOr<net::LinkInfo> in = net::LinkByName(*csock, args.ifname);
    if (!in.ok() || !net::MoveLinkToNetnsAs(*csock, *in, *host, moved->name, moved->alias).ok()) return;
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
    ASSIGN_OR_RETURN(bool taken, net::LinkExists(*csock, args.ifname));
    if (taken) {
      return absl::AlreadyExistsError(
          absl::StrCat("host-device: container interface ", Quoted(args.ifname), " already exists"));
    }
    // The original name goes into the alias, which moves with the link: with
    // `device`, that name (a device given back carries it only in its alias).
    // Set by the request that moves it, so no crash can leave the alias on a
    // device still in the host (where no DEL would look for it).
    const std::string& original = config.device.empty() ? dev.name : config.device;
    RETURN_IF_ERROR(net::MoveLinkToNetnsAs(*hsock, dev, container, args.ifname, original), "host-device");
    moved = dev;
    ASSIGN_OR_RETURN(net::LinkInfo in, net::LinkByName(*csock, args.ifname), "host-device");
    RETURN_IF_ERROR(net::SetLinkUp(*csock, in), "host-device");
    itf.mac = in.mac.ToString();
  }
  result.interfaces.push_back(itf);

  if (!config.ipam_type.empty()) {
    ASSIGN_OR_RETURN(IpamLease lease, IpamLease::Acquire(args, config.ipam_type));
    RETURN_IF_ERROR(lease.RequireAddresses(), "host-device");
    lease.CopyInto(result, kContainerIndex);
    // A device handed to userspace gets its addresses from whoever drives it.
    if (!src.dpdk) RETURN_IF_ERROR(net::ConfigureInterface(*csock, args.ifname, result), "host-device");
    if (config.dns) result.dns = *config.dns;
    RETURN_IF_ERROR(lease.Commit(result), "host-device");
  } else if (config.dns) {
    result.dns = *config.dns;
  }
  std::move(move_back).Cancel();
  return result;
}

absl::Status Del(const CmdArgs& args, const Config& config) {
  std::vector<absl::Status> failures;
  // IPAM first and whatever the namespace's state: upstream returns before
  // releasing when the namespace is gone, and leaks the address.
  if (!config.ipam_type.empty()) {
    if (absl::Status st = DelegateDel(config.ipam_type, args); !st.ok()) {
      // A failure a retry may get past leaves the device in the container
      // for that retry (see IpamDelMayFinishOnRetry).
      if (IpamDelMayFinishOnRetry(st)) return Annotate(st, "host-device: releasing the IPAM address");
      failures.push_back(Annotate(st, "host-device: releasing the IPAM address"));
    }
  }
  auto finish = [&]() -> absl::Status { return JoinErrors(failures); };
  if (args.netns.empty()) {  // a runtime that lost the namespace: gone as well
    RenameReturnedDevice(config);
    return finish();
  }
  absl::StatusOr<net::Netns> container = net::Netns::Open(args.netns);
  // Gone (the path, or only the namespace behind a left-over mount point):
  // the kernel has given a physical device back to the initial namespace
  // under its container name, and destroyed a virtual one. Nothing left to
  // move; a device given back is renamed, if the kernel has given it back yet.
  if (absl::IsNotFound(container.status()) || absl::IsInvalidArgument(container.status())) {
    RenameReturnedDevice(config);
    return finish();
  }
  auto fail = [&](const absl::Status& st) {
    failures.push_back(Annotate(st, "host-device"));
    return finish();
  };
  if (!container.ok()) return fail(container.status());
  absl::StatusOr<net::NetlinkSocket> csock = net::NetlinkSocket::OpenIn(*container);
  if (!csock.ok()) return fail(csock.status());
  absl::StatusOr<net::LinkInfo> link = net::LinkByName(*csock, args.ifname);
  if (absl::IsNotFound(link.status())) return finish();  // moved out already
  if (!link.ok()) return fail(link.status());
  // The original name: the alias ADD set, else the configured device name.
  std::string original = !link->alias.empty() ? link->alias : config.device;
  if (original.empty()) {
    return fail(absl::FailedPreconditionError(absl::StrCat(
        "failed to find original ifname for ", Quoted(args.ifname), " (alias is not set)")));
  }
  absl::StatusOr<net::Netns> host = net::Netns::Current();
  if (!host.ok()) return fail(host.status());
  if (absl::Status st = MoveOut(*csock, *host, *link, original); !st.ok()) return fail(st);
  return finish();
}

absl::Status Check(const CmdArgs& args, const Config& config) {
  ASSIGN_OR_RETURN(std::optional<Result> prev, ParsePrevResult(args.conf));
  if (!prev) return Invalid("required prevResult missing");
  ASSIGN_OR_RETURN(net::Netns container, net::Netns::Open(args.netns));
  if (!config.ipam_type.empty()) RETURN_IF_ERROR(DelegateCheck(config.ipam_type, args));
  ASSIGN_OR_RETURN(Source src, ResolveSource(config));
  if (src.dpdk) return absl::OkStatus();
  ASSIGN_OR_RETURN(size_t index, net::FindPrevInterface(*prev, args.ifname, args.netns),
                   "host-device");
  ASSIGN_OR_RETURN(net::NetlinkSocket sock, net::NetlinkSocket::OpenIn(container));
  ASSIGN_OR_RETURN(net::LinkInfo link, net::CheckPrevLink(sock, prev->interfaces[index], ""),
                   "host-device");
  RETURN_IF_ERROR(net::CheckInterfaceAddresses(sock, link, *prev, index), "host-device");
  RETURN_IF_ERROR(net::CheckRoutes(sock, *prev), "host-device");
  return absl::OkStatus();
}

PluginFuncs Funcs() {
  // DEL and GC read only what the teardown needs (TeardownConfig).
  return TypedWithTeardown<Config, TeardownConfig>(
      {.add = Add, .check = Check, .status = ForwardStatusToIpam<Config>},
      {.del = Del, .gc = ForwardGcToIpam<TeardownConfig>});
}

}  // namespace cni::host_device

#include "cni/plugin/ipam_apply.h"

#include <linux/if_addr.h>
#include <linux/ipv6.h>

#include <chrono>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "cni/net/addr.h"
#include "cni/net/devconf.h"
#include "cni/net/link.h"
#include "cni/net/route.h"
#include "cni/net/sysctl.h"

namespace cni::net {
namespace {

// IPv6 may be switched off per interface (and is, on lo, in some runtimes'
// sandboxes); addresses cannot be added until it is back on. keep_addr_on_down
// keeps static addresses across a down/up of the link (the kernel otherwise
// flushes IPv6 addresses on down). Each setting is read from the link through
// the socket, and written through /proc/sys only when it differs: rtnetlink
// cannot write IPv6's settings, and each /proc/sys access starts a thread in
// the namespace and, on a node with 1,000 containers, costs ~0.25 ms to open
// (IPv6's conf directories are the slow ones, cni/net/devconf.h).
absl::Status PrepareIpv6(NetlinkSocket& sock, int ifindex, absl::string_view ifname) {
  // Turns IPv6 on for `dev` when it is off; when it cannot be read (no IPv6
  // in this kernel or on this link), carries on: the address add will say.
  auto enable = [&sock](absl::string_view dev, const absl::StatusOr<int32_t>& disabled) -> absl::Status {
    if (!disabled.ok() || *disabled == 0) return absl::OkStatus();
    RETURN_IF_ERROR(WriteSysctl(sock.netns(), absl::StrCat("net/ipv6/conf/", dev, "/disable_ipv6"), "0"),
                    "enabling IPv6 on \"", dev, "\"");
    return absl::OkStatus();
  };
  constexpr int kLoopbackIndex = 1;  // lo is the first link of every namespace
  RETURN_IF_ERROR(enable("lo", Ipv6DevConf(sock, kLoopbackIndex, DEVCONF_DISABLE_IPV6)));
  // The interface's two settings from one read.
  absl::StatusOr<Ipv6DevConfs> confs = ReadIpv6DevConfs(sock, ifindex);
  if (!confs.ok()) return absl::OkStatus();
  RETURN_IF_ERROR(enable(ifname, confs->Get(DEVCONF_DISABLE_IPV6)));
  // Missing on kernels before 4.6; nothing to do there.
  if (absl::StatusOr<int32_t> keep = confs->Get(DEVCONF_KEEP_ADDR_ON_DOWN); keep.ok() && *keep != 1) {
    (void)WriteSysctl(sock.netns(), absl::StrCat("net/ipv6/conf/", ifname, "/keep_addr_on_down"), "1");
  }
  return absl::OkStatus();
}

// Waits until none of `addrs` on `ifindex` is tentative any more.
absl::Status WaitForDad(NetlinkSocket& sock, int ifindex, const std::vector<IpPrefix>& addrs,
                        int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    ASSIGN_OR_RETURN(std::vector<AddressInfo> list, ListAddresses(sock, ifindex, Family::kV6));
    bool pending = false;
    for (const AddressInfo& a : list) {
      bool ours = false;
      for (const IpPrefix& p : addrs) ours = ours || p.addr() == a.prefix.addr();
      if (!ours) continue;
      if (a.flags & IFA_F_DADFAILED) {
        return absl::AlreadyExistsError(absl::StrCat(
            "address ", a.prefix.ToString(), ": duplicate address detected on the link"));
      }
      if (a.flags & IFA_F_TENTATIVE) pending = true;
    }
    if (!pending) return absl::OkStatus();
    if (std::chrono::steady_clock::now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "waiting for duplicate address detection: still tentative after ", timeout_ms, " ms"));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

absl::Status Configure(NetlinkSocket& sock, absl::string_view ifname, const Result& result,
                       const ConfigureOptions& opts) {
  ASSIGN_OR_RETURN(LinkInfo link, LinkByName(sock, ifname));

  std::optional<IpAddress> gw4, gw6;
  std::vector<IpPrefix> v6_addrs;
  bool ipv6_ready = false;
  for (const IpConfig& ipc : result.ips) {
    if (!ipc.interface) continue;
    int idx = *ipc.interface;
    if (idx < 0 || idx >= static_cast<int>(result.interfaces.size())) {
      return Error(ErrorCode::kInternal,
                   absl::StrCat("address ", ipc.address.ToString(), ": interface index ", idx,
                                " is out of range (", result.interfaces.size(), " interfaces)"));
    }
    if (result.interfaces[idx].name != ifname) continue;

    AddressOptions aopts;
    if (!ipc.address.is_v4()) {
      if (!ipv6_ready) {
        RETURN_IF_ERROR(PrepareIpv6(sock, link.index, ifname));
        ipv6_ready = true;
      }
      if (!opts.enable_dad) aopts.flags |= IFA_F_NODAD;
      v6_addrs.push_back(ipc.address);
    }
    RETURN_IF_ERROR(AddAddress(sock, link.index, ipc.address, aopts));
    if (ipc.gateway) {
      std::optional<IpAddress>& gw = ipc.gateway->is_v4() ? gw4 : gw6;
      if (!gw) gw = ipc.gateway;
    }
  }

  RETURN_IF_ERROR(SetLinkUp(sock, link));

  // Only now: DAD starts when the link comes up.
  if (opts.enable_dad && !v6_addrs.empty()) {
    RETURN_IF_ERROR(WaitForDad(sock, link.index, v6_addrs, opts.dad_timeout_ms));
  }

  for (const Route& r : result.routes) {
    RouteSpec spec;
    spec.dst = r.dst;
    spec.ifindex = link.index;
    spec.gw = r.gw ? r.gw : (r.dst.is_v4() ? gw4 : gw6);
    spec.scope = r.scope;
    if (r.table) spec.table = *r.table;
    if (r.priority) spec.priority = static_cast<uint32_t>(*r.priority);
    spec.mtu = r.mtu;
    spec.advmss = r.advmss;
    // Alongside, not exclusive: the container may already have a route to the
    // same destination through another network's interface (two default
    // routes when it is on two networks); upstream's request keeps both too.
    RETURN_IF_ERROR(AddRouteAlongside(sock, spec));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ConfigureInterface(NetlinkSocket& sock, absl::string_view ifname, const Result& result,
                                const ConfigureOptions& opts) {
  return Annotate(Configure(sock, ifname, result, opts),
                  absl::StrCat("configuring \"", ifname, "\""));
}

}  // namespace cni::net

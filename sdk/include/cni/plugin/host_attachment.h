// What the plugins share that join a container to the host's network through
// a veth pair, with the host forwarding and optionally masquerading for it
// (bridge, ptp): forwarding on, the ipMasq rules of one attachment, and DEL
// and GC.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/base/status_macros.h"
#include "cni/fw/backend.h"
#include "cni/fw/ipmasq.h"
#include "cni/net/netlink.h"
#include "cni/protocol/invoke.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"

namespace cni::host_attachment {

// IP forwarding on in the host for the families of `ips` (the plugin runs in
// the host namespace: no namespace switch).
absl::Status EnableForwarding(net::NetlinkSocket& host_sock, const std::vector<IpConfig>& ips);

// The names the ipMasq rules of this attachment go by (upstream's): the
// network, CNI_IFNAME and CNI_CONTAINERID.
fw::MasqTarget MasqTargetOf(const CmdArgs& args);

// ADD (ipMasq): masquerades the traffic of `result`'s addresses through
// `backend`; nothing without addresses. A failure removes what was installed
// (one family may be in already).
absl::Status AttachMasquerade(const CmdArgs& args, fw::Backend backend, const Result& result);

// Removes the attachment's masquerade rules of either backend (ours or
// upstream's); missing is fine. Through `nf` (a NETLINK_NETFILTER socket)
// when given, else through sockets of its own.
absl::Status DetachMasquerade(const CmdArgs& args, net::NetlinkSocket* nf);

// What DEL removes of one attachment.
struct Teardown {
  std::string plugin;     // message prefix
  std::string ipam_type;  // IPAM DEL first when set
  bool ip_masq = false;   // the masquerade rules (DetachMasquerade)
  // The plugin's own packet-filter rules (bridge's spoof check), removed
  // before the masquerade rules, through `nf` (nullptr: sockets of their own).
  std::function<absl::Status(net::NetlinkSocket* nf)> filters;
};

// DEL: IPAM first (ReleaseIpamFirst), then the packet-filter rules, then the
// container end of the veth pair (the host end, its addresses and routes go
// with it; a namespace that is gone took the pair with it). Keeps going past
// a failure and reports them all.
absl::Status Del(const CmdArgs& args, const Teardown& teardown);

// GC: with ipMasq, the network's masquerade rules of attachments that are
// not valid any more (fw::GcIpMasq), then IPAM's GC when `ipam_type` is set.
absl::Status Gc(const CmdArgs& args, absl::string_view plugin, bool ip_masq, absl::string_view ipam_type);

// The command table of such a plugin: its own ADD, CHECK and DEL; STATUS is
// `supported` (what ADD needs beyond parsing), then IPAM's STATUS when there
// is IPAM; GC is Gc above. DEL and GC parse `TeardownConfig` (which judges
// fewer keys, so that what ADD refused, or upstream set up, can be torn
// down; its `ip_masq` and `ipam_type` are read).
template <typename Config, typename TeardownConfig>
PluginFuncs Funcs(std::string plugin, std::function<absl::StatusOr<Result>(const CmdArgs&, const Config&)> add,
                  std::function<absl::Status(const CmdArgs&, const Config&)> check,
                  std::function<absl::Status(const CmdArgs&, const TeardownConfig&)> del,
                  std::function<absl::Status(const Config&)> supported) {
  auto status = [supported](const CmdArgs& args, const Config& config) -> absl::Status {
    CNI_RETURN_IF_ERROR(supported(config));
    return ForwardStatusToIpam(args, config);
  };
  auto gc = [plugin](const CmdArgs& args, const TeardownConfig& config) {
    return Gc(args, plugin, config.ip_masq, config.ipam_type);
  };
  return TypedWithTeardown<Config, TeardownConfig>(
      {.add = std::move(add), .check = std::move(check), .status = status}, {.del = std::move(del), .gc = gc});
}

}  // namespace cni::host_attachment

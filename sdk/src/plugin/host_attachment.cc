#include "cni/plugin/host_attachment.h"

#include <optional>

#include "cni/base/status_macros.h"
#include "cni/fw/nft.h"
#include "cni/net/devconf.h"
#include "cni/net/link.h"
#include "cni/plugin/teardown.h"
#include "cni/protocol/invoke.h"

namespace cni::host_attachment {

absl::Status EnableForwarding(net::NetlinkSocket& host_sock, const std::vector<IpConfig>& ips) {
  bool v4 = false, v6 = false;
  for (const IpConfig& ip : ips) (ip.address.is_v4() ? v4 : v6) = true;
  if (v4) RETURN_IF_ERROR(net::EnsureForwarding(host_sock, net::Family::kV4));
  if (v6) RETURN_IF_ERROR(net::EnsureForwarding(host_sock, net::Family::kV6));
  return absl::OkStatus();
}

fw::MasqTarget MasqTargetOf(const CmdArgs& args) {
  return {args.conf.name, args.ifname, args.container_id};
}

absl::Status AttachMasquerade(const CmdArgs& args, fw::Backend backend, const Result& result) {
  if (result.ips.empty()) return absl::OkStatus();
  std::vector<net::IpPrefix> addrs;
  for (const IpConfig& ip : result.ips) addrs.push_back(ip.address);
  const fw::MasqTarget target = MasqTargetOf(args);
  absl::Status st = fw::SetupIpMasq(backend, addrs, target);
  if (!st.ok()) (void)fw::TeardownIpMasq(target);
  return st;
}

absl::Status DetachMasquerade(const CmdArgs& args, net::NetlinkSocket* nf) {
  return nf != nullptr ? fw::TeardownIpMasq(*nf, MasqTargetOf(args)) : fw::TeardownIpMasq(MasqTargetOf(args));
}

absl::Status Del(const CmdArgs& args, const Teardown& t) {
  Failures failures;
  RETURN_IF_ERROR(ReleaseIpamFirst(args, t.ipam_type, t.plugin, failures));
  // The rules before the link, on a socket kept open until the end: the
  // kernel frees deleted rules after an RCU grace period, and closing a
  // netfilter socket waits for that (nf_tables flushes its destroy work on
  // release). Deleting the link is a grace period of its own; this way the
  // two run side by side instead of one after the other (~10 ms).
  std::optional<absl::StatusOr<net::NetlinkSocket>> nf_sock;
  if (t.ip_masq || t.filters) nf_sock = fw::nft::OpenSocket();
  net::NetlinkSocket* nf = nf_sock.has_value() && nf_sock->ok() ? &**nf_sock : nullptr;
  if (t.filters) failures.Keep(t.filters(nf), t.plugin);
  if (t.ip_masq) failures.Keep(DetachMasquerade(args, nf), t.plugin);
  if (!args.netns.empty()) failures.Keep(net::DeleteLinkInNetns(args.netns, args.ifname));
  return failures.Joined();
}

absl::Status Gc(const CmdArgs& args, absl::string_view plugin, bool ip_masq, absl::string_view ipam_type) {
  Failures failures;
  if (ip_masq) failures.Keep(fw::GcIpMasq(args.conf.name, args.conf.valid_attachments), plugin);
  if (!ipam_type.empty()) failures.Keep(DelegateGc(ipam_type, args));
  return failures.Joined();
}

}  // namespace cni::host_attachment

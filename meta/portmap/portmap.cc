#include "portmap.h"

#include <memory>
#include <thread>

#include "absl/strings/str_cat.h"
#include "cni/error.h"
#include "cni/fw/iptables.h"
#include "cni/fw/nft.h"
#include "cni/net/link.h"
#include "cni/net/netlink.h"
#include "cni/net/route.h"
#include "cni/net/sysctl.h"
#include "cni/status_macros.h"
#include "cni/version.h"

namespace cni::portmap {
namespace {

std::vector<net::IpPrefix> Addresses(const Config& c) {
  std::vector<net::IpPrefix> out;
  if (c.cont_v4) out.push_back(*c.cont_v4);
  if (c.cont_v6) out.push_back(*c.cont_v6);
  return out;
}

std::vector<int> UdpPorts(const Config& c) {
  std::vector<int> ports;
  for (const PortMapping& m : c.mappings) {
    if (m.protocol == fw::L4Protocol::kUdp) ports.push_back(m.host_port);
  }
  return ports;
}

absl::StatusOr<Config> Parse(const CmdArgs& args) {
  absl::StatusOr<Config> c = ParseConfig(args.conf, args.ifname);
  if (!c.ok()) return Annotate(c.status(), "failed to parse config");
  return c;
}

// The host interface whose route reaches `ip` (longest prefix in the main
// table), "" when none: localhost traffic DNATed to the container crosses it,
// so it needs route_localnet=1 (127/8 may not otherwise leave lo).
std::string RoutableHostInterface(const net::IpAddress& ip) {
  absl::StatusOr<net::NetlinkSocket> sock = net::NetlinkSocket::Open();
  if (!sock.ok()) return "";
  absl::StatusOr<std::vector<net::RouteSpec>> routes = net::ListRoutes(*sock, {.family = ip.family()});
  if (!routes.ok()) return "";
  int best_len = -1, ifindex = 0;
  for (const net::RouteSpec& r : *routes) {
    if (r.ifindex == 0 || !r.dst.Contains(ip) || r.dst.len() <= best_len) continue;
    best_len = r.dst.len();
    ifindex = r.ifindex;
  }
  if (ifindex == 0) return "";
  absl::StatusOr<net::LinkInfo> link = net::LinkByIndex(*sock, ifindex);
  return link.ok() ? link->name : "";
}

absl::Status EnableLocalnetRouting(const net::IpAddress& container_ip) {
  std::string ifname = RoutableHostInterface(container_ip);
  if (ifname.empty()) return absl::OkStatus();  // upstream: nothing to do
  return net::WriteSysctlHere(absl::StrCat("net/ipv4/conf/", ifname, "/route_localnet"), "1");
}

}  // namespace

absl::StatusOr<net::NetlinkSocket*> LazyNetfilter::Get() {
  if (!nl_.has_value()) {
    ASSIGN_OR_RETURN(nl_, fw::nft::OpenSocket());
  }
  return &*nl_;
}

std::unique_ptr<PortmapBackend> MakeBackend(fw::Backend backend) {
  return backend == fw::Backend::kNftables ? MakeNftablesBackend() : MakeIptablesBackend();
}

absl::StatusOr<Result> Add(const CmdArgs& args) {
  absl::StatusOr<Config> c = Parse(args);
  if (!c.ok()) return c.status();
  if (!c->prev_result.has_value()) {
    return Error(ErrorCode::kInvalidNetworkConfig, "portmap: must be called as chained plugin (no prevResult)");
  }
  // No mappings: no firewall work at all.
  if (c->mappings.empty()) return *c->prev_result;

  std::vector<net::IpPrefix> addrs = Addresses(*c);
  if (addrs.empty()) return *c->prev_result;
  // A failed ADD must leave nothing (an iptables family may already be
  // committed when the other fails): undo with DEL, which is thorough.
  auto undo = [&](absl::Status st) {
    (void)Del(args);
    return st;
  };
  std::unique_ptr<PortmapBackend> backend = MakeBackend(c->backend);
  if (absl::Status st = backend->Add(*c, args.container_id, addrs); !st.ok()) {
    return backend->Transactional() ? st : undo(st);
  }
  if (c->cont_v4.has_value() && c->snat) {
    if (absl::Status st = EnableLocalnetRouting(c->cont_v4->addr()); !st.ok()) return undo(st);
  }
  // After the rules exist, so new packets meet them. Failures are not fatal
  // (upstream only logs them): a stale entry only delays the mapping.
  for (const net::IpPrefix& a : addrs) (void)FlushUdpConntrack(!a.is_v4(), UdpPorts(*c));
  return *c->prev_result;
}

absl::Status Del(const CmdArgs& args) {
  absl::StatusOr<Config> c = Parse(args);
  if (!c.ok()) return c.status();
  if (c->mappings.empty()) return absl::OkStatus();
  // Both backends: the config may have changed backends since ADD, or
  // upstream may have made the rules. Keep going past a failure. They touch
  // different tables, so they run side by side (DEL is on the pod tear-down
  // path, and iptables-save of a big nat table is the slow part).
  absl::Status st_ipt;
  std::thread ipt_thread([&] { st_ipt = MakeIptablesBackend()->Del(*c, args.container_id); });
  absl::Status st_nft = MakeNftablesBackend()->Del(*c, args.container_id);
  ipt_thread.join();
  for (bool v6 : {false, true}) (void)FlushUdpConntrack(v6, UdpPorts(*c));
  if (!st_ipt.ok() && !st_nft.ok()) {
    return Error(ErrorCode::kInternal, absl::StrCat(st_ipt.message(), "; ", st_nft.message()));
  }
  return st_ipt.ok() ? st_nft : st_ipt;
}

absl::Status Check(const CmdArgs& args) {
  absl::StatusOr<Config> c = Parse(args);
  if (!c.ok()) return c.status();
  if (!c->prev_result.has_value()) return Error(ErrorCode::kInvalidNetworkConfig, "portmap: required prevResult missing");
  if (c->mappings.empty()) return absl::OkStatus();
  return MakeBackend(c->backend)->Check(*c, args.container_id, Addresses(*c));
}

absl::Status Gc(const CmdArgs& args) {
  absl::StatusOr<Config> c = Parse(args);
  if (!c.ok()) return c.status();
  std::vector<std::string> valid;
  for (const Attachment& a : args.conf.valid_attachments) valid.push_back(a.container_id);
  absl::Status st_ipt = MakeIptablesBackend()->Gc(*c, valid);
  absl::Status st_nft = MakeNftablesBackend()->Gc(*c, valid);
  return st_ipt.ok() ? st_nft : st_ipt;
}

PluginFuncs Funcs() { return {.add = Add, .del = Del, .check = Check, .gc = Gc}; }

std::vector<std::string> SupportedVersions() {
  std::vector<std::string> out;
  for (const std::string& v : AllVersions()) {
    if (VersionAtLeast(v, "0.3.0")) out.push_back(v);  // prevResult: chaining
  }
  return out;
}

}  // namespace cni::portmap

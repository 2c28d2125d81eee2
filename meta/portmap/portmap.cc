#include "portmap.h"

#include <linux/ip.h>
#include <sys/socket.h>

#include <initializer_list>
#include <memory>

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "cni/fw/iptables.h"
#include "cni/fw/nft.h"
#include "cni/net/devconf.h"
#include "cni/net/link.h"
#include "cni/net/netlink.h"
#include "cni/net/route.h"
#include "cni/net/sysctl.h"
#include "cni/protocol/version.h"

namespace cni::portmap {
namespace {

std::vector<net::IpPrefix> Addresses(const Config& c) {
  std::vector<net::IpPrefix> out;
  if (c.cont_v4) out.push_back(*c.cont_v4);
  if (c.cont_v6) out.push_back(*c.cont_v6);
  return out;
}

// The failed ones of `results`, in order, as one status (cni::JoinErrors).
absl::Status JoinFailures(std::initializer_list<absl::Status> results) {
  std::vector<absl::Status> failures;
  for (const absl::Status& st : results) {
    if (!st.ok()) failures.push_back(st);
  }
  return JoinErrors(failures);
}

// Both backends' rules of the container go: the config may have changed
// backends since ADD, or upstream may have made the rules. The configured
// backend goes first (its rules are the likely ones, and a commit made early
// lets the kernel's release of the deleted rules overlap the other's
// lookups). Keeps going past a failure; reports every failure, iptables'
// first.
absl::Status RemoveRules(LazyNetfilter& nf, const TeardownConfig& c, const std::string& id) {
  absl::Status ipt, nft;
  if (c.nftables_configured) {
    nft = MakeNftablesRuleSet(nf)->Del(c, id);
    ipt = MakeIptablesRuleSet(nf)->Del(c, id);
  } else {
    ipt = MakeIptablesRuleSet(nf)->Del(c, id);
    nft = MakeNftablesRuleSet(nf)->Del(c, id);
  }
  return JoinFailures({ipt, nft});
}

// What DEL does, and a failed ADD to undo itself: the rules, then the UDP
// conntrack entries of the host ports (failures there are not fatal: upstream
// only logs them, and a stale entry only delays a mapping).
absl::Status Teardown(LazyNetfilter& nf, const TeardownConfig& c, const std::string& id) {
  absl::Status st = RemoveRules(nf, c, id);
  (void)FlushUdpConntrack(nf, {AF_INET, AF_INET6}, c.udp_host_ports);
  return st;
}

// Localhost traffic DNATed to the container crosses the host interface the
// kernel routes its address through, which therefore needs route_localnet=1
// (127/8 may not otherwise leave lo); none, nothing to do (as upstream).
// The interface is found with one route lookup, as upstream's RouteGet: a
// dump of the routes would grow with every container of a ptp node (a host
// route each). The setting is read from the link first and written only when
// off: from the node's first mapping on it stays 1, so an ADD then makes one
// GET instead of a name lookup, a /proc/sys open and a write. The write itself
// stays a sysctl write, which also flushes the kernel's route cache.
absl::Status EnableLocalnetRouting(const net::IpAddress& container_ip) {
  absl::StatusOr<net::NetlinkSocket> sock = net::NetlinkSocket::Open();
  if (!sock.ok()) return absl::OkStatus();
  absl::StatusOr<int> ifindex = net::RouteOutputInterface(*sock, container_ip);
  if (!ifindex.ok() || *ifindex == 0) return absl::OkStatus();
  absl::StatusOr<uint32_t> on = net::Ipv4DevConf(*sock, *ifindex, IPV4_DEVCONF_ROUTE_LOCALNET);
  if (on.ok() && *on == 1) return absl::OkStatus();
  absl::StatusOr<net::LinkInfo> link = net::LinkByIndex(*sock, *ifindex);
  if (!link.ok()) return absl::OkStatus();
  return net::WriteSysctlHere(absl::StrCat("net/ipv4/conf/", link->name, "/route_localnet"), "1");
}

}  // namespace


std::unique_ptr<RuleSet> MakeRuleSet(fw::Backend backend, LazyNetfilter& nf) {
  return backend == fw::Backend::kNftables ? MakeNftablesRuleSet(nf) : MakeIptablesRuleSet(nf);
}

absl::StatusOr<Result> Add(const CmdArgs& args, const Config& c) {
  if (!c.prev_result.has_value()) {
    return Error(ErrorCode::kInvalidNetworkConfig, "portmap: must be called as chained plugin (no prevResult)");
  }
  // No mappings or no container address: no firewall work at all.
  std::vector<net::IpPrefix> addrs = Addresses(c);
  if (c.mappings.empty() || addrs.empty()) return *c.prev_result;

  LazyNetfilter nf;
  std::unique_ptr<RuleSet> rules = MakeRuleSet(c.backend, nf);
  // A failed ADD must leave nothing (an iptables family may already be
  // committed when the other fails): undo with DEL, which is thorough.
  auto undo = [&](absl::Status st) {
    (void)Teardown(nf, TeardownConfig::Of(c), args.container_id);
    return st;
  };
  if (absl::Status st = rules->Add(c, args.container_id, addrs); !st.ok()) {
    return rules->Transactional() ? st : undo(st);
  }
  if (c.cont_v4.has_value() && c.snat) {
    if (absl::Status st = EnableLocalnetRouting(c.cont_v4->addr()); !st.ok()) return undo(st);
  }
  // After the rules exist, so new packets meet them (not fatal, as above).
  std::vector<int> families;
  for (const net::IpPrefix& a : addrs) families.push_back(a.is_v4() ? AF_INET : AF_INET6);
  (void)FlushUdpConntrack(nf, families, TeardownConfig::Of(c).udp_host_ports);
  return *c.prev_result;
}

absl::Status Del(const CmdArgs& args, const TeardownConfig& c) {
  if (!c.has_mappings) return absl::OkStatus();
  LazyNetfilter nf;
  return Teardown(nf, c, args.container_id);
}

absl::Status Check(const CmdArgs& args, const Config& c) {
  if (!c.prev_result.has_value()) return Error(ErrorCode::kInvalidNetworkConfig, "portmap: required prevResult missing");
  if (c.mappings.empty()) return absl::OkStatus();
  LazyNetfilter nf;
  return MakeRuleSet(c.backend, nf)->Check(c, args.container_id, Addresses(c));
}

absl::Status Gc(const CmdArgs& args, const TeardownConfig& c) {
  std::vector<std::string> valid;
  for (const Attachment& a : args.conf.valid_attachments) valid.push_back(a.container_id);
  LazyNetfilter nf;
  // Both backends, every failure reported.
  absl::Status ipt = MakeIptablesRuleSet(nf)->Gc(c.name, valid);
  absl::Status nft = MakeNftablesRuleSet(nf)->Gc(c.name, valid);
  return JoinFailures({ipt, nft});
}

PluginFuncs Funcs() {
  // DEL and GC read the configuration leniently (see TeardownConfig).
  return TypedWithTeardown<Config, TeardownConfig>({.add = Add, .check = Check}, {.del = Del, .gc = Gc});
}


std::vector<std::string> SupportedVersions() {
  std::vector<std::string> out;
  for (const std::string& v : AllVersions()) {
    if (VersionAtLeast(v, "0.3.0")) out.push_back(v);  // prevResult: chaining
  }
  return out;
}

}  // namespace cni::portmap

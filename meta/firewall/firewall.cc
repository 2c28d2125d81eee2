#include "firewall.h"

#include <net/if.h>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "bus_probe.h"
#include "cni/base/error.h"
#include "cni/base/hash.h"
#include "cni/base/status_macros.h"
#include "cni/fw/iptables.h"
#include "cni/net/link.h"
#include "cni/protocol/version.h"
#include "firewalld_helper.h"
#include "system_bus.h"

namespace cni::firewall {
namespace {

Owner OwnerOf(const CmdArgs& args, const Config& c) {
  return Owner{.network = c.name, .container_id = args.container_id, .ifname = args.ifname};
}

absl::Status NeedPrevResult(const Config& c) {
  if (c.prev_result.has_value()) return absl::OkStatus();
  return Error(ErrorCode::kInvalidNetworkConfig, "firewall: missing prevResult from earlier plugin");
}

const char* PolicyName(IngressPolicy p) {
  switch (p) {
    case IngressPolicy::kSameBridge: return "same-bridge";
    case IngressPolicy::kIsolated: return "isolated";
    case IngressPolicy::kOpen: break;
  }
  return "open";
}

// The ingress policies isolate bridges: they need the bridge, which the
// bridge plugin reports as prevResult's first interface (upstream's rule).
// Upstream takes that interface whatever it is: after ptp (a host veth
// first) it writes isolation rules per veth, which no other container
// shares and no DEL removes. So the interface must be a host link (no
// sandbox) whose kind is bridge: one netlink look-up, before any change.
absl::Status NeedBridge(const Config& c) {
  if (c.ingress_policy == IngressPolicy::kOpen) return absl::OkStatus();
  auto refuse = [&](absl::string_view why) {
    return Error(ErrorCode::kInvalidNetworkConfig,
                 absl::StrCat("firewall: interface needs to be set for ingress policy \"", PolicyName(c.ingress_policy),
                              "\", make sure to chain \"firewall\" plugin with \"bridge\"", why));
  };
  if (c.bridge.empty()) return refuse("");
  const Interface& first = c.prev_result->interfaces.front();
  const std::string what = absl::StrCat(": prevResult's first interface \"", c.bridge, "\"");
  if (!first.sandbox.empty()) return refuse(absl::StrCat(what, " is in the container"));
  if (c.bridge.size() >= IFNAMSIZ) return refuse(absl::StrCat(what, " is too long for a link name"));
  ASSIGN_OR_RETURN(net::NetlinkSocket nl, net::NetlinkSocket::Open());
  absl::StatusOr<net::LinkInfo> link = net::LinkByName(nl, c.bridge);
  if (absl::IsNotFound(link.status())) return refuse(absl::StrCat(what, " is not a link of the host"));
  RETURN_IF_ERROR(link.status());
  if (link->kind != "bridge") {
    return refuse(absl::StrCat(what, " is a ", link->kind.empty() ? "device" : link->kind, ", not a bridge"));
  }
  return absl::OkStatus();
}

}  // namespace

std::string Owner::IntentPrefix(const std::string& network) { return HashWithPrefix(13, "", network) + "-"; }

std::string Owner::Key() const { return absl::StrCat(container_id, "-", ifname); }

absl::StatusOr<std::unique_ptr<RuleSet>> MakeRuleSet(BackendKind kind, LazyNetfilter& nf, const CmdArgs& args) {
  switch (kind) {
    case BackendKind::kIptables: return MakeIptablesRuleSet(nf);
    case BackendKind::kNftables: return MakeNftablesRuleSet(nf);
    case BackendKind::kFirewalld: {
      ASSIGN_OR_RETURN(firewalld::Helper helper, firewalld::Helper::Find(args));
      return MakeFirewalldRuleSet(nf, helper);
    }
    case BackendKind::kAuto: break;
  }
  // Upstream's order: firewalld when it runs (asked only when there is a
  // system bus at all: a stat, so hosts without D-Bus pay nothing), else
  // iptables when installed, else our nftables table. The plugin asks the
  // bus itself (bus_probe.h); the helper only when firewalld runs or the
  // answer was not clear. Then, without the helper: code 50, rather than
  // rules in iptables that firewalld's zones may override.
  if (firewalld::SystemBusPresent() && firewalld::ProbeFirewalld() != firewalld::Probe::kNotRunning) {
    ASSIGN_OR_RETURN(firewalld::Helper helper, firewalld::Helper::Find(args));
    absl::StatusOr<bool> running = helper.FirewalldRunning();
    if (running.ok() && *running) return MakeFirewalldRuleSet(nf, helper);
  }
  if (fw::IptablesAvailable(false)) return MakeIptablesRuleSet(nf);
  return MakeNftablesRuleSet(nf);
}

namespace {

absl::StatusOr<Result> Add(const CmdArgs& args, const Config& c) {
  RETURN_IF_ERROR(NeedPrevResult(c));
  RETURN_IF_ERROR(NeedBridge(c));
  LazyNetfilter nf;
  ASSIGN_OR_RETURN(std::unique_ptr<RuleSet> rules, MakeRuleSet(c.backend, nf, args));
  const Owner owner = OwnerOf(args, c);
  // A failed ADD leaves nothing of the container's (the ingress policy's
  // per-bridge rules are shared, and stay, as upstream's do).
  absl::Cleanup undo = [&] { (void)rules->Del(c, owner); };
  RETURN_IF_ERROR(rules->Add(c, owner));
  if (c.ingress_policy != IngressPolicy::kOpen) RETURN_IF_ERROR(rules->Isolate(c));
  std::move(undo).Cancel();
  return *c.prev_result;
}

absl::Status Del(const CmdArgs& args, const TeardownConfig& t) {
  const Config& c = t.config;
  LazyNetfilter nf;
  absl::StatusOr<std::unique_ptr<RuleSet>> rules = MakeRuleSet(c.backend, nf, args);
  // firewalld not running: its runtime sources went with it. But without
  // the helper, on a host with a system bus, they may still be there.
  const bool no_helper = CodeOf(rules.status()) == static_cast<int>(ErrorCode::kPluginNotAvailable);
  if (!rules.ok() && c.backend == BackendKind::kFirewalld && !(no_helper && firewalld::SystemBusPresent())) {
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(rules.status());
  return (*rules)->Del(c, OwnerOf(args, c));
}

absl::Status Check(const CmdArgs& args, const Config& c) {
  RETURN_IF_ERROR(NeedPrevResult(c));
  LazyNetfilter nf;
  ASSIGN_OR_RETURN(std::unique_ptr<RuleSet> rules, MakeRuleSet(c.backend, nf, args));
  return rules->Check(c, OwnerOf(args, c));
}

absl::Status Gc(const CmdArgs& args, const TeardownConfig& t) {
  std::vector<Owner> valid;
  for (const Attachment& a : args.conf.valid_attachments) {
    valid.push_back(Owner{.network = t.config.name, .container_id = a.container_id, .ifname = a.ifname});
  }
  // The rule sets of both packet filters (the configured backend may have
  // switched);
  // firewalld's zone sources carry no owner, so they are left to DEL.
  LazyNetfilter nf;
  std::vector<absl::Status> failures;
  std::unique_ptr<RuleSet> rule_sets[] = {MakeIptablesRuleSet(nf), MakeNftablesRuleSet(nf)};
  for (const std::unique_ptr<RuleSet>& b : rule_sets) {
    if (absl::Status st = b->Gc(t.config.name, valid); !st.ok()) failures.push_back(st);
  }
  return JoinErrors(failures);
}

absl::Status Status(const CmdArgs& args, const Config& c) {
  auto unavailable = [](absl::string_view why) {
    return Error(ErrorCode::kPluginNotAvailable, absl::StrCat("firewall: ", why));
  };
  switch (c.backend) {
    case BackendKind::kFirewalld: {
      absl::StatusOr<firewalld::Helper> helper = firewalld::Helper::Find(args);
      if (!helper.ok()) return helper.status();  // code 50 already, and says so
      absl::StatusOr<bool> running = helper->FirewalldRunning();
      if (!running.ok()) return unavailable(running.status().message());
      if (!*running) return unavailable("firewalld is not running");
      return absl::OkStatus();
    }
    case BackendKind::kIptables:
      if (!fw::IptablesAvailable(false)) return unavailable("iptables is not installed");
      return absl::OkStatus();
    case BackendKind::kNftables:
    case BackendKind::kAuto: break;  // nftables is always there to fall back on
  }
  return absl::OkStatus();
}

}  // namespace

PluginFuncs Funcs() {
  // DEL and GC read the configuration leniently (see TeardownConfig).
  return TypedWithTeardown<Config, TeardownConfig>({.add = Add, .check = Check, .status = Status},
                                                   {.del = Del, .gc = Gc});
}

// Upstream's range: CHECK exists.
std::vector<std::string> SupportedVersions() { return VersionsFrom("0.4.0"); }

}  // namespace cni::firewall

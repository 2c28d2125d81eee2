// The firewall plugin (chained only): lets traffic of the container's
// addresses through the host's FORWARD filtering, in iptables (upstream's
// CNI-FORWARD chain), firewalld (the addresses as sources of a zone) or
// nftables (a table of our own), and applies the ingress policy.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cni/fw/nft.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"
#include "config.h"
#include "firewalld_helper.h"

namespace cni::firewall {

// The command table for PluginMain, whose handlers are file-local in
// firewall.cc (skel parses first: Config for ADD, CHECK and STATUS, the
// lenient TeardownConfig for DEL and GC).
PluginFuncs Funcs();
std::vector<std::string> SupportedVersions();

// One attachment: its rules are found again through this (records, nftables
// comments). Upstream's rules carry no owner: they are found by address.
struct Owner {
  std::string network;
  std::string container_id;
  std::string ifname;

  // The attachment within its network, "<id>-<ifname>": its key in the
  // network's records (cni/fw/rule_record.h).
  std::string Key() const;
  // What the key of every address intent (intents.h) of `network` starts
  // with ("<network hash>-"); an attachment's is this + Key().
  static std::string IntentPrefix(const std::string& network);
};

using fw::LazyNetfilter;  // the call's one netfilter socket (cni/fw/nft.h)

// The attachment's rules in one place: iptables, nftables, or firewalld's
// zone sources (the configured backend names which). Add: the addresses'
// rules (none may exist yet; repeated ADDs must not duplicate). Del: remove
// them, missing is fine. Check: they exist. Gc: remove the rules of `network`'s attachments not in
// `valid`. Isolate: the ingress policy's rules for c.bridge (only called
// when the policy is not open).
class RuleSet {
 public:
  virtual ~RuleSet() = default;
  virtual absl::Status Add(const Config& c, const Owner& o) = 0;
  virtual absl::Status Del(const Config& c, const Owner& o) = 0;
  virtual absl::Status Check(const Config& c, const Owner& o) = 0;
  virtual absl::Status Gc(const std::string& network, const std::vector<Owner>& valid) = 0;
  virtual absl::Status Isolate(const Config& c) = 0;
};

// iptables.cc: upstream's chains in the filter tables (iptables-nft through
// netlink when it can, else iptables-restore).
std::unique_ptr<RuleSet> MakeIptablesRuleSet(LazyNetfilter& nf);
// nftables.cc: tables ip/ip6 cni_firewall.
std::unique_ptr<RuleSet> MakeNftablesRuleSet(LazyNetfilter& nf);
// firewalld_rule_set.cc: zone sources over D-Bus, through the helper; the
// ingress policy through iptables, as upstream. Code 11 when firewalld does
// not run.
absl::StatusOr<std::unique_ptr<RuleSet>> MakeFirewalldRuleSet(LazyNetfilter& nf, const firewalld::Helper& helper);

// The rule set of the backend a configuration names; for auto, of the one
// the host has. `args`
// tells where the firewalld helper may be (CNI_PATH) and the bus address.
absl::StatusOr<std::unique_ptr<RuleSet>> MakeRuleSet(BackendKind kind, LazyNetfilter& nf, const CmdArgs& args);

}  // namespace cni::firewall

// firewalld backend: each address of the container becomes a source of the
// zone (default "trusted"), in firewalld's runtime configuration, as
// upstream does; firewalld then lets the zone's sources through. The D-Bus
// calls are the helper's (firewalld_helper.h). The ingress policy still goes
// to iptables (upstream's behaviour: firewalld has no bridge isolation of its
// own).
#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "firewall.h"
#include "firewalld_helper.h"
#include "iptables_rules.h"

namespace cni::firewall {
namespace {

std::vector<std::string> Sources(const Config& c) {
  std::vector<std::string> out;
  for (const net::IpPrefix& a : c.addresses) out.push_back(a.ToString());
  return out;
}

class FirewalldRuleSet final : public RuleSet {
 public:
  FirewalldRuleSet(LazyNetfilter& nf, firewalld::Helper helper) : nf_(nf), helper_(std::move(helper)) {}

  // All sources or none: a failure removes those already added.
  absl::Status Add(const Config& c, const Owner&) override { return helper_.AddSources(c.zone, Sources(c)); }

  // Keeps going past a failure, then reports them all.
  absl::Status Del(const Config& c, const Owner&) override { return helper_.RemoveSources(c.zone, Sources(c)); }

  // Upstream only asks; the answer must also be yes.
  absl::Status Check(const Config& c, const Owner&) override { return helper_.CheckSources(c.zone, Sources(c)); }

  // Zone sources carry no owner: nothing can be told stale.
  absl::Status Gc(const std::string&, const std::vector<Owner>&) override { return absl::OkStatus(); }

  absl::Status Isolate(const Config& c) override { return ipt::Isolate(nf_, c); }

 private:
  LazyNetfilter& nf_;
  firewalld::Helper helper_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<RuleSet>> MakeFirewalldRuleSet(LazyNetfilter& nf, const firewalld::Helper& helper) {
  ASSIGN_OR_RETURN(bool running, helper.FirewalldRunning());
  if (!running) return Error(ErrorCode::kTryAgainLater, "firewall: firewalld is not running on the system bus");
  return std::make_unique<FirewalldRuleSet>(nf, helper);
}

}  // namespace cni::firewall

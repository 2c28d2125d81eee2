// firewalld backend: each address of the container becomes a source of the
// zone (default "trusted"), in firewalld's runtime configuration, as
// upstream does; firewalld then lets the zone's sources through. The ingress
// policy still goes to iptables (upstream's behaviour: firewalld has no
// bridge isolation of its own).
#include "absl/strings/str_cat.h"
#include "cni/error.h"
#include "cni/status_macros.h"
#include "firewall.h"
#include "firewalld.h"
#include "iptables_rules.h"

namespace cni::firewall {
namespace {

class FirewalldBackend final : public Backend {
 public:
  FirewalldBackend(LazyNetfilter& nf, firewalld::Client bus) : nf_(nf), bus_(std::move(bus)) {}

  // All sources or none: a failure removes those already added.
  absl::Status Add(const Config& c, const Owner&) override {
    for (size_t i = 0; i < c.addresses.size(); ++i) {
      if (absl::Status st = bus_.AddSource(c.zone, c.addresses[i].ToString()); !st.ok()) {
        for (size_t j = 0; j < i; ++j) (void)bus_.RemoveSource(c.zone, c.addresses[j].ToString());
        return st;
      }
    }
    return absl::OkStatus();
  }

  // Keeps going past a failure, then reports them all.
  absl::Status Del(const Config& c, const Owner&) override {
    std::vector<absl::Status> failures;
    for (const net::IpPrefix& a : c.addresses) {
      if (absl::Status st = bus_.RemoveSource(c.zone, a.ToString()); !st.ok()) failures.push_back(st);
    }
    return JoinErrors(failures);
  }

  // Upstream only asks; the answer must also be yes.
  absl::Status Check(const Config& c, const Owner&) override {
    for (const net::IpPrefix& a : c.addresses) {
      ASSIGN_OR_RETURN(bool in_zone, bus_.QuerySource(c.zone, a.ToString()));
      if (!in_zone) {
        return Error(ErrorCode::kInternal,
                     absl::StrCat("firewalld: ", a.ToString(), " is not a source of zone \"", c.zone, "\""));
      }
    }
    return absl::OkStatus();
  }

  // Zone sources carry no owner: nothing can be told stale.
  absl::Status Gc(const std::string&, const std::vector<Owner>&) override { return absl::OkStatus(); }

  absl::Status Isolate(const Config& c) override { return ipt::Isolate(nf_, c); }

 private:
  LazyNetfilter& nf_;
  firewalld::Client bus_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Backend>> MakeFirewalldBackend(LazyNetfilter& nf) {
  ASSIGN_OR_RETURN(firewalld::Client bus, firewalld::Client::Connect());
  if (!bus.FirewalldRunning()) {
    return Error(ErrorCode::kTryAgainLater, "firewall: firewalld is not running on the system bus");
  }
  return std::make_unique<FirewalldBackend>(nf, std::move(bus));
}

}  // namespace cni::firewall

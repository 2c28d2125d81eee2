// The portmap plugin (chained only): forwards host ports to the container's
// addresses from prevResult, with the nftables or iptables backend of cni/fw.
// With no portMappings it does nothing at all and passes prevResult through.
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cni/fw/ipt_rule.h"
#include "cni/fw/nft.h"
#include "cni/fw/nft_batch.h"
#include "cni/net/netlink.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"
#include "config.h"

namespace cni::portmap {

// Where each rule set's records live (cni/fw/rule_record.h: one file per
// host namespace and container).
inline constexpr const char* kNftRecordDir = "/run/cni/portmap/nftables";
inline constexpr const char* kIptRecordDir = "/run/cni/portmap/iptables";

// The handlers (skel parses the configuration first: Config for ADD and
// CHECK, the lenient TeardownConfig for DEL and GC).
absl::StatusOr<Result> Add(const CmdArgs& args, const Config& c);
absl::Status Del(const CmdArgs& args, const TeardownConfig& c);
absl::Status Check(const CmdArgs& args, const Config& c);
// Removes the rules of containers that are not in cni.dev/valid-attachments.
absl::Status Gc(const CmdArgs& args, const TeardownConfig& c);
PluginFuncs Funcs();
std::vector<std::string> SupportedVersions();

// --- rule sets, one per packet filter (nftables.cc, iptables.cc) -----------
// Both packet filters' tables are of family fw::IpFamily(v6) (with
// iptables-nft, iptables' tables are nf_tables tables too).

// The call's one netfilter socket (cni/fw/nft.h).
using LazyNetfilter = fw::LazyNetfilter;

// The port mappings' rules in one packet filter (the configured
// fw::Backend names which). Add: install the rules for every address in
// `addrs` (at most one per family), replacing this container's earlier
// rules. Del: remove this container's rules, missing is fine. Check: the
// rules exist. Gc: remove the rules of `network`'s containers not in
// `valid_ids`. An object is used by one thread, through the call's netfilter
// socket it was made with.
class RuleSet {
 public:
  explicit RuleSet(LazyNetfilter& nf) : nf_(nf) {}
  virtual ~RuleSet() = default;
  // See above.
  virtual absl::Status Add(const Config& c, const std::string& id, const std::vector<net::IpPrefix>& addrs) = 0;
  // See above.
  virtual absl::Status Del(const TeardownConfig& c, const std::string& id) = 0;
  // See above.
  virtual absl::Status Check(const Config& c, const std::string& id, const std::vector<net::IpPrefix>& addrs) = 0;
  // See above.
  virtual absl::Status Gc(const std::string& network, const std::vector<std::string>& valid_ids) = 0;
  // Whether a failed Add leaves nothing behind (one transaction); if not, the
  // caller cleans up with Del.
  virtual bool Transactional() const { return true; }

 protected:
  LazyNetfilter& nf_;  // the call's netlink socket for nf_tables
};

// nftables.cc: tables ip/ip6 cni_hostport.
std::unique_ptr<RuleSet> MakeNftablesRuleSet(LazyNetfilter& nf);
// iptables.cc: upstream's nat chains (iptables-restore, or netlink with iptables-nft).
std::unique_ptr<RuleSet> MakeIptablesRuleSet(LazyNetfilter& nf);
// The rule set of the configured backend.
std::unique_ptr<RuleSet> MakeRuleSet(fw::Backend backend, LazyNetfilter& nf);

namespace nft {
// The objects of the nftables backend, named as upstream 1.9 names them: a
// node may run both plugins, and each must find the other's table, chains
// and jumps (ip and ip6 tables of this name).
inline constexpr const char* kTable = "cni_hostport";
inline constexpr const char* kHostPortsAll = "hostports_all";        // entered from prerouting/output for local daddrs
inline constexpr const char* kHostIpHostPorts = "hostip_hostports";  // mappings bound to one host IP
inline constexpr const char* kHostPorts = "hostports";               // mappings on every host IP
inline constexpr const char* kMasq = "masquerading";                 // hairpin and localhost masquerade

// Appends the tables, chains and rules Add makes to `batch` (Add puts the
// deletion of the container's stale rules first). For the families in
// `shared_in_place`, whose table already holds the chains and jumps every
// ADD shares, only the container's own rules.
void AppendForward(fw::NftBatch& batch, const Config& c, const std::string& id,
                   const std::vector<net::IpPrefix>& addrs, const std::set<fw::NftFamily>& shared_in_place = {});
}  // namespace nft
namespace ipt {
// The container's chain and its entry rules, each rule described once
// (cni/fw/ipt_rule.h) and rendered as a restore line or, with iptables-nft,
// as its netlink encoding.
struct DnatRules {
  std::string chain;                 // CNI-DN-<hash>
  std::vector<fw::IptRule> entries;  // in CNI-HOSTPORT-DNAT, each "-j chain"
  std::vector<fw::IptRule> rules;    // in the chain
};
DnatRules BuildDnatRules(const Config& c, const std::string& id, const net::IpPrefix& addr);
}  // namespace ipt

// Deletes UDP conntrack entries of the address `families` (AF_INET,
// AF_INET6) whose original destination port is one of `ports` (conntrack.cc,
// libnl-nf, on the call's netfilter socket).
absl::Status FlushUdpConntrack(LazyNetfilter& nf, const std::vector<int>& families, const std::vector<int>& ports);

}  // namespace cni::portmap

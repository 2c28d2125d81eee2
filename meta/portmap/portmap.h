// The portmap plugin (chained only): forwards host ports to the container's
// addresses from prevResult, with the nftables or iptables backend of cni/fw.
// With no portMappings it does nothing at all and passes prevResult through.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cni/fw/nft_batch.h"
#include "cni/skel.h"
#include "cni/types.h"
#include "config.h"

namespace cni::portmap {

absl::StatusOr<Result> Add(const CmdArgs& args);
absl::Status Del(const CmdArgs& args);
absl::Status Check(const CmdArgs& args);
// Removes the rules of containers that are not in cni.dev/valid-attachments.
absl::Status Gc(const CmdArgs& args);
PluginFuncs Funcs();
std::vector<std::string> SupportedVersions();

// --- backends (nftables.cc, iptables.cc) ------------------------------------
// The nf_tables family of an address family: both backends' tables (with
// iptables-nft, iptables' tables are nf_tables tables too).
inline const char* NftFamily(bool v6) { return v6 ? "ip6" : "ip"; }

// Forward: install the rules for every address in `addrs` (at most one per
// family) in one transaction (nftables) / one commit per family (iptables),
// replacing this container's earlier rules. Unforward: remove this
// container's rules, missing is fine. Check: the rules exist. Gc: remove the
// rules of containers not in `valid_ids`.
namespace nft {
absl::Status Forward(const Config& c, const std::string& id, const std::vector<net::IpPrefix>& addrs);
absl::Status Unforward(const std::string& id);
absl::Status Check(const Config& c, const std::string& id, const std::vector<net::IpPrefix>& addrs);
absl::Status Gc(const std::vector<std::string>& valid_ids);
// Appends the tables, chains and rules Forward makes to `batch` (Forward
// puts the deletion of the container's stale rules first).
void AppendForward(fw::NftBatch& batch, const Config& c, const std::string& id,
                   const std::vector<net::IpPrefix>& addrs);
}  // namespace nft
namespace ipt {
absl::Status Forward(const Config& c, const std::string& id, const net::IpPrefix& addr);
// `probe_first`: ask whether the container's chain exists before reading the
// whole nat table (which costs ~30 ms at 1,000 mappings); worth it when the
// rules are most likely elsewhere (the nftables backend). With iptables-nft
// the probe is one netlink GET and is always made, and the removal itself is
// an nf_tables transaction (no iptables-save).
absl::Status Unforward(const std::string& network, const std::string& id, bool probe_first = false);
absl::Status Check(const Config& c, const std::string& id, const net::IpPrefix& addr);
absl::Status Gc(const std::string& network, const std::vector<std::string>& valid_ids);
// The restore lines of the per-container chain and its entry rules (tests).
struct DnatRules {
  std::string chain;                              // CNI-DN-<hash>
  std::vector<std::vector<std::string>> entries;  // in CNI-HOSTPORT-DNAT, each "-j chain"
  std::vector<std::vector<std::string>> rules;    // in the chain
  // `entries` as nf_tables rules encoded as iptables-nft encodes them, for
  // writing them over netlink; empty when conditions (free iptables
  // arguments) are part of them.
  std::vector<fw::NftRuleSpec> entry_rules;
  // `rules` encoded likewise.
  std::vector<fw::NftRuleSpec> chain_rules;
};
DnatRules BuildDnatRules(const Config& c, const std::string& id, const net::IpPrefix& addr);
}  // namespace ipt

// Deletes UDP conntrack entries whose original destination port is one of
// `ports` (conntrack.cc, libnl-nf).
absl::Status FlushUdpConntrack(bool ipv6, const std::vector<int>& ports);

}  // namespace cni::portmap

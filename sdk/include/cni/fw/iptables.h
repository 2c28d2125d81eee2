// iptables through iptables-restore --noflush --wait (argv, input on stdin,
// never a shell). --noflush leaves every chain we do not name alone, so other
// writers of the nat table are tolerated; one restore input is one atomic
// commit per family. Current rules come from iptables-save, parsed.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/net/netlink.h"

namespace cni::fw {

// A table as iptables-save prints it.
struct IptTable {
  std::vector<std::string> chains;                         // every chain, built-ins too
  std::vector<std::pair<std::string, std::string>> rules;  // (chain, "-A <chain> ...")

  // True when `chain` is declared in the table.
  bool HasChain(absl::string_view chain) const;
  // The "-A ..." lines of `chain`, in order.
  std::vector<std::string> RulesOf(absl::string_view chain) const;
  // Whether a rule of `chain` jumps (-j or -g) to `target`.
  bool HasJump(absl::string_view chain, absl::string_view target) const;
};

// Parses iptables-save output for one table.
IptTable ParseIptablesSave(absl::string_view text, absl::string_view table);

// True when (ip6)iptables-restore and -save are installed.
bool IptablesAvailable(bool ipv6);

// Whether (ip6)iptables is iptables-nft, whose tables are nf_tables tables:
// then IptablesHasChain is one netlink GET (no program started), cheap enough
// to ask before every full save.
bool IptablesIsNft(bool ipv6);

// Whether the program at `path` is iptables-nft: the file its chain of
// symbolic links ends at is named *tables-nft or xtables-nft-*. False when
// it cannot be followed (missing, a loop).
bool IsIptablesNftProgram(const std::string& path);

// Whether chain `chain` exists in `table`. With iptables-nft, read from the
// kernel (one nf_tables GET of that chain, ~0.1 ms at any table size); otherwise
// asked with one `(ip6)iptables -S <chain>` (a few ms whatever the table's
// size, unlike a full save), where exit status 1 is "no such chain" and
// anything else that fails is an error.
// `nf`: a NETLINK_NETFILTER socket (nft::OpenSocket) for the netlink GET;
// null asks iptables.
absl::StatusOr<bool> IptablesHasChain(net::NetlinkSocket* nf, bool ipv6, absl::string_view table,
                                      absl::string_view chain);
// Same, with a NETLINK_NETFILTER socket of its own.
absl::StatusOr<bool> IptablesHasChain(bool ipv6, absl::string_view table, absl::string_view chain);

// Runs (ip6)iptables-save -t <table> and parses it.
absl::StatusOr<IptTable> IptablesSave(bool ipv6, absl::string_view table);
// Runs (ip6)iptables-restore --noflush --wait with "*<table>\n" + body + "COMMIT\n".
absl::Status IptablesRestore(bool ipv6, absl::string_view table, absl::string_view body);

// Runs `attempt` (snapshot, build, commit) up to 5 times while it fails: a
// commit built from a snapshot fails when another writer changed what it
// relies on in between (a shared chain created by "-N" meanwhile, a rule it
// deletes gone), and a fresh snapshot then gives the right commit. A failed
// precondition (a missing tool or library) is returned at once.
absl::Status RetryOnConflict(const std::function<absl::Status()>& attempt);

// A rule's restore line: IptRule (cni/fw/ipt_rule.h).
// "-A X ..." (as saved) turned into "-D X ...".
std::string IptDeleteLine(absl::string_view saved_append_line);
// The jump target of a saved rule ("-j X" / "-g X"), "" when none.
std::string IptJumpTarget(absl::string_view saved_line);

}  // namespace cni::fw

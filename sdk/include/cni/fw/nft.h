// nftables: listing rules and chains (a netlink dump) and looking up single
// tables and chains (netlink GETs); applying a batch (NftBatch, nft_batch.h,
// written over netlink, or through the nft program when it holds
// user-written nft text). Either way one change is one transaction: all of
// it or nothing, so a crash never leaves half a rule set.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/fw/protocols.h"
#include "cni/net/netlink.h"

namespace cni::fw {

class NftBatch;  // nft_batch.h

// One rule as listed: where it is, its handle (for "delete rule ... handle N")
// and its comment ("" when none).
struct NftRule {
  NftFamily family = NftFamily::kIp;  // the table's family
  std::string table;                  // the table's name
  std::string chain;                  // the chain's name
  uint64_t handle = 0;                // the rule's handle, unique within its table
  std::string comment;                // the rule's comment, "" when none
  std::string jump;                   // the chain its verdict jumps or goes to, "" when none
  size_t expressions = 0;             // how many expressions it has ("jump x": 1)
  // The 4- and 16-byte values it compares with or loads ("cmp" and
  // "immediate" data, raw): the addresses a rule matches or DNATs to, which
  // tell whose a rule is when its comment does not.
  std::vector<std::string> values;
};

}  // namespace cni::fw

// Reading nf_tables straight from the kernel and applying batches, through
// a NETLINK_NETFILTER socket the caller opens once (OpenSocket) and hands to
// every call: the socket belongs to the namespace it was opened in.
namespace cni::fw::nft {

// A NETLINK_NETFILTER socket in the calling thread's network namespace.
absl::StatusOr<net::NetlinkSocket> OpenSocket();

}  // namespace cni::fw::nft

namespace cni::fw {

// The one NETLINK_NETFILTER socket of a plugin call, opened on first use
// (many calls need none) in the calling thread's namespace, and handed to
// everything the call does. One per call, used by one thread: each socket
// costs system calls to open, and its close after a commit that deleted
// rules waits for the kernel to release them (an RCU grace period, several
// ms), so a call closes one socket, once, at its end.
class LazyNetfilter {
 public:
  // The socket, opened now if not yet.
  absl::StatusOr<net::NetlinkSocket*> Get();

 private:
  std::optional<net::NetlinkSocket> nl_;
};

}  // namespace cni::fw

namespace cni::fw::nft {

// Applies `batch`: NftBatch::Commit (netlink) when it can, else, when a
// rule holds raw nft text, its ToText() through `nft -f -` (one
// transaction, in the calling thread's namespace; code 999 naming the
// package when nft is not installed). Needs no libnftables, so callers can
// be static executables.
absl::Status Apply(net::NetlinkSocket& nl, const NftBatch& batch);
// The rules of table `family` `table`; empty when the table does not exist.
// Read straight from the kernel (a netlink dump, not libnftables): the cost
// stays small with thousands of rules. With `chain`, only that chain's rules
// (the kernel walks only that chain; a missing chain lists nothing).
absl::StatusOr<std::vector<NftRule>> ListRules(net::NetlinkSocket& nl, NftFamily family,
                                               absl::string_view table, absl::string_view chain = "");
// The first `count` rules of a chain (fewer if it has fewer). Only the
// start of the listing is read, and the kernel produces a listing as it
// is read, so the cost does not grow with the chain: for a rule just
// inserted at the top.
absl::StatusOr<std::vector<NftRule>> ListFirstRules(net::NetlinkSocket& nl, NftFamily family,
                                                    absl::string_view table, absl::string_view chain,
                                                    size_t count);
// The chain names of a table; empty when the table does not exist.
absl::StatusOr<std::vector<std::string>> ListChains(net::NetlinkSocket& nl, NftFamily family,
                                                    absl::string_view table);
// The kernel's handle of a table, nullopt when the table does not exist.
// Tables are numbered per network namespace and a number is never reused:
// a table deleted and made again has a new one (and its rules' handles
// start over), so a remembered rule handle is only good while its table's
// handle is unchanged. One GET, no dump.
absl::StatusOr<std::optional<uint64_t>> TableHandle(net::NetlinkSocket& nl, NftFamily family,
                                                    absl::string_view table);
// Whether a chain exists (one GET, whatever the number of chains).
absl::StatusOr<bool> HasChain(net::NetlinkSocket& nl, NftFamily family, absl::string_view table,
                              absl::string_view chain);

}  // namespace cni::fw::nft

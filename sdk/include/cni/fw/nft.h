// nftables: listing rules and chains (a netlink dump), and libnftables for
// what only nft's parser can do: text batches with user-written nft syntax
// (portmap's conditions) and JSON listings. Our own changes are NftBatch
// (nft_batch.h), written over netlink. Either way one change is one
// transaction: all of it or nothing, so a crash never leaves half a rule set.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/json.h"

// libnftables' context, opaque here.
struct nft_ctx;

namespace cni::fw {

class NftBatch;  // nft_batch.h

// One rule as listed: where it is, its handle (for "delete rule ... handle N")
// and its comment ("" when none).
struct NftRule {
  std::string family;   // "ip", "ip6", "inet", "bridge", ...
  std::string table;    // the table's name
  std::string chain;    // the chain's name
  uint64_t handle = 0;  // the rule's handle, unique within its table
  std::string comment;  // the rule's comment, "" when none
};

// Owns an nft_ctx (RAII). Works in the calling thread's network namespace.
class Nft {
 public:
  // A new context whose output and errors are buffered (never printed on our
  // stdout). Fails with code 999 when libnftables cannot be used.
  static absl::StatusOr<Nft> Open();

  // Runs `batch` (commands separated by newlines) as one transaction. Errors
  // carry nft's own message.
  absl::Status Run(absl::string_view batch);
  // Applies `batch`: NftBatch::Commit (netlink) when it can, else, when a
  // rule holds raw nft text, its ToText() through libnftables (Open + Run).
  static absl::Status Apply(const NftBatch& batch);
  // Runs a list command with JSON output and returns the parsed document.
  absl::StatusOr<Json> ListJson(absl::string_view command);
  // The rules of table `family` `table`; empty when the table does not exist.
  // Read straight from the kernel (a netlink dump, not libnftables): the cost
  // stays small with thousands of rules, and no context (nor libnftables) is
  // needed, so clean-up paths list first and Open only when there is work.
  static absl::StatusOr<std::vector<NftRule>> ListRules(absl::string_view family, absl::string_view table);
  // The chain names of a table; empty when the table does not exist (also a
  // netlink dump, no context needed).
  static absl::StatusOr<std::vector<std::string>> ListChains(absl::string_view family, absl::string_view table);

 private:
  struct Deleter {
    void operator()(nft_ctx* ctx) const;
  };
  explicit Nft(nft_ctx* ctx) : ctx_(ctx) {}
  std::unique_ptr<nft_ctx, Deleter> ctx_;
};

}  // namespace cni::fw

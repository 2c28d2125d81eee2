// libnftables for tests: nft's own JSON listings and raw command text, to
// check what the SDK writes over netlink against nft's reading of it. No
// plugin uses it (they write and read nf_tables over netlink, cni/fw/nft.h).
//
// Loaded on first use (dlopen) rather than linked, so a test binary that
// never calls it does not need the library.
#pragma once

#include <nftables/libnftables.h>

#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/base/json.h"
#include "cni/net/netlink.h"

namespace cni::test {

// The entry points of libnftables the tests use.
struct LibNftables {
  decltype(&::nft_ctx_new) ctx_new;
  decltype(&::nft_ctx_free) ctx_free;
  decltype(&::nft_ctx_buffer_output) ctx_buffer_output;
  decltype(&::nft_ctx_buffer_error) ctx_buffer_error;
  decltype(&::nft_ctx_output_set_flags) ctx_output_set_flags;
  decltype(&::nft_ctx_get_output_buffer) ctx_get_output_buffer;
  decltype(&::nft_ctx_get_error_buffer) ctx_get_error_buffer;
  decltype(&::nft_run_cmd_from_buffer) run_cmd_from_buffer;
};

// Loads the library once per process (thread-safe) and returns its entry
// points, or a CNI internal error naming the library when it cannot be loaded
// (Debian package libnftables1 missing).
absl::StatusOr<const LibNftables*> LoadLibNftables();

// A NETLINK_NETFILTER socket in the calling thread's namespace, for the
// cni::fw::nft calls of a test (which creates its namespace first); REQUIREs
// that it opens.
std::unique_ptr<net::NetlinkSocket> NetfilterSocket();

// Owns an nft_ctx (RAII). Works in the calling thread's network namespace.
class Nft {
 public:
  // A new context whose output and errors are buffered (never printed on our
  // stdout). Fails with code 999 when libnftables cannot be used.
  static absl::StatusOr<Nft> Open();

  // Runs `batch` (commands separated by newlines) as one transaction. Errors
  // carry nft's own message.
  absl::Status Run(absl::string_view batch);
  // Runs a list command with JSON output and returns the parsed document.
  absl::StatusOr<Json> ListJson(absl::string_view command);

 private:
  struct Deleter {
    void operator()(nft_ctx* ctx) const;
  };
  explicit Nft(nft_ctx* ctx) : ctx_(ctx) {}
  std::unique_ptr<nft_ctx, Deleter> ctx_;
};

}  // namespace cni::test

// libnftables, loaded on first use instead of linked.
//
// Why: a plugin is a short-lived process on the pod start-up path, and
// libnftables drags in five more shared libraries (libmnl, libnftnl,
// libxtables, libjansson, libgmp). Linking them made every exec of bridge and
// ptp pay about 2 ms of loading and relocation, although most calls (no
// ipMasq, the iptables backend, VERSION, CHECK of a plain bridge) never touch
// nftables. dlopen moves that cost to the calls that really use nftables.
#pragma once

#include <nftables/libnftables.h>

#include "absl/status/statusor.h"

namespace cni::fw::internal {

// The entry points of libnftables the nftables backend uses.
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

}  // namespace cni::fw::internal

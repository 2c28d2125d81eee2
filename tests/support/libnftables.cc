#include "libnftables.h"

#include <dlfcn.h>

#include "absl/strings/str_cat.h"
#include "cni/error.h"

// The soname is read from the development library at configure time
// (sdk/CMakeLists.txt), so a libnftables ABI bump is caught by the build.
#ifndef CNI_LIBNFTABLES_SONAME
#error "CNI_LIBNFTABLES_SONAME must be defined by the build"
#endif

namespace cni::fw::internal {
namespace {

absl::StatusOr<LibNftables> Load() {
  // RTLD_LOCAL: its symbols stay out of the global scope; we only use the
  // pointers resolved here. The handle is never closed: the process is short
  // and the library keeps state (the nft_ctx objects) alive.
  void* handle = dlopen(CNI_LIBNFTABLES_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    // FailedPrecondition: RetryOnConflict does not retry it.
    return WithCode(absl::FailedPreconditionError(
                        absl::StrCat("nftables backend: cannot load ", CNI_LIBNFTABLES_SONAME, " (", dlerror(),
                                     "); install libnftables or use the iptables backend")),
                    ErrorCode::kInternal);
  }
  LibNftables lib{};
  absl::Status missing;
  auto resolve = [&](auto& slot, const char* symbol) {
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(dlsym(handle, symbol));
    if (slot == nullptr && missing.ok()) {
      missing = Error(ErrorCode::kInternal,
                      absl::StrCat("nftables backend: ", CNI_LIBNFTABLES_SONAME, " has no ", symbol));
    }
  };
  resolve(lib.ctx_new, "nft_ctx_new");
  resolve(lib.ctx_free, "nft_ctx_free");
  resolve(lib.ctx_buffer_output, "nft_ctx_buffer_output");
  resolve(lib.ctx_buffer_error, "nft_ctx_buffer_error");
  resolve(lib.ctx_output_set_flags, "nft_ctx_output_set_flags");
  resolve(lib.ctx_get_output_buffer, "nft_ctx_get_output_buffer");
  resolve(lib.ctx_get_error_buffer, "nft_ctx_get_error_buffer");
  resolve(lib.run_cmd_from_buffer, "nft_run_cmd_from_buffer");
  if (!missing.ok()) return missing;
  return lib;
}

}  // namespace

absl::StatusOr<const LibNftables*> LoadLibNftables() {
  // A function-local static is initialised exactly once, also under threads.
  static const absl::StatusOr<LibNftables>* const loaded = new absl::StatusOr<LibNftables>(Load());
  if (!loaded->ok()) return loaded->status();
  return &**loaded;
}

}  // namespace cni::fw::internal

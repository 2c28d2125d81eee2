#include "libnftables.h"

#include <dlfcn.h>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/fw/nft.h"

// The soname is read from the development library at configure time
// (tests/CMakeLists.txt), so a libnftables ABI bump is caught by the build.
#ifndef CNI_LIBNFTABLES_SONAME
#error "CNI_LIBNFTABLES_SONAME must be defined by the build"
#endif

namespace cni::test {
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

namespace {

// Only called once Open() has loaded the library, so the value is always there.
const LibNftables& Lib() { return **LoadLibNftables(); }

}  // namespace

std::unique_ptr<net::NetlinkSocket> NetfilterSocket() {
  absl::StatusOr<net::NetlinkSocket> nl = fw::nft::OpenSocket();
  REQUIRE(nl.ok());
  return std::make_unique<net::NetlinkSocket>(*std::move(nl));
}

void Nft::Deleter::operator()(nft_ctx* ctx) const { Lib().ctx_free(ctx); }

absl::StatusOr<Nft> Nft::Open() {
  absl::StatusOr<const LibNftables*> lib = LoadLibNftables();
  if (!lib.ok()) return lib.status();
  nft_ctx* ctx = (*lib)->ctx_new(NFT_CTX_DEFAULT);
  if (ctx == nullptr) return Error(ErrorCode::kInternal, "nftables: cannot create a context");
  Nft nft(ctx);
  // Output and errors go to buffers we read, never to our stdout.
  if (Lib().ctx_buffer_output(ctx) != 0 || Lib().ctx_buffer_error(ctx) != 0) {
    return Error(ErrorCode::kInternal, "nftables: cannot buffer output");
  }
  return nft;
}

absl::Status Nft::Run(absl::string_view batch) {
  Lib().ctx_output_set_flags(ctx_.get(), 0);
  std::string buf(batch);
  if (Lib().run_cmd_from_buffer(ctx_.get(), buf.c_str()) != 0) {
    std::string err = Lib().ctx_get_error_buffer(ctx_.get());
    return Error(ErrorCode::kInternal, absl::StrCat("nftables transaction failed: ", err));
  }
  (void)Lib().ctx_get_output_buffer(ctx_.get());  // drain
  return absl::OkStatus();
}

absl::StatusOr<Json> Nft::ListJson(absl::string_view command) {
  Lib().ctx_output_set_flags(ctx_.get(), NFT_CTX_OUTPUT_JSON | NFT_CTX_OUTPUT_HANDLE);
  std::string buf(command);
  int rc = Lib().run_cmd_from_buffer(ctx_.get(), buf.c_str());
  std::string out = Lib().ctx_get_output_buffer(ctx_.get());
  std::string err = Lib().ctx_get_error_buffer(ctx_.get());
  Lib().ctx_output_set_flags(ctx_.get(), 0);
  if (rc != 0) {
    absl::Status st = Error(ErrorCode::kInternal, absl::StrCat("nftables: ", command, ": ", err));
    // A missing table or chain is reported as ENOENT; callers treat it as empty.
    if (absl::StrContains(err, "No such file or directory")) return absl::NotFoundError(err);
    return st;
  }
  return ParseJson(out);
}

}  // namespace cni::test

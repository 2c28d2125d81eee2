#include "cni/fw/nft.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cni/error.h"
#include "libnftables.h"

namespace cni::fw {

namespace {

// Only called once Open() has loaded the library, so the value is always there.
const internal::LibNftables& Lib() { return **internal::LoadLibNftables(); }

}  // namespace

void Nft::Deleter::operator()(nft_ctx* ctx) const { Lib().ctx_free(ctx); }

absl::StatusOr<Nft> Nft::Open() {
  absl::StatusOr<const internal::LibNftables*> lib = internal::LoadLibNftables();
  if (!lib.ok()) return lib.status();
  nft_ctx* ctx = (*lib)->ctx_new(NFT_CTX_DEFAULT);
  if (ctx == nullptr) return Error(ErrorCode::kInternal, "nftables: cannot create a context");
  Nft nft(ctx);
  // Output and errors go to buffers we read, never to our stdout (which
  // carries the CNI result).
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

}  // namespace cni::fw

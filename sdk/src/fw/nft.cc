#include "cni/fw/nft.h"

#include <nftables/libnftables.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cni/error.h"

namespace cni::fw {

void Nft::Deleter::operator()(nft_ctx* ctx) const { nft_ctx_free(ctx); }

absl::StatusOr<Nft> Nft::Open() {
  nft_ctx* ctx = nft_ctx_new(NFT_CTX_DEFAULT);
  if (ctx == nullptr) return Error(ErrorCode::kInternal, "nftables: cannot create a context");
  Nft nft(ctx);
  // Output and errors go to buffers we read, never to our stdout (which
  // carries the CNI result).
  if (nft_ctx_buffer_output(ctx) != 0 || nft_ctx_buffer_error(ctx) != 0) {
    return Error(ErrorCode::kInternal, "nftables: cannot buffer output");
  }
  return nft;
}

absl::Status Nft::Run(absl::string_view batch) {
  nft_ctx_output_set_flags(ctx_.get(), 0);
  std::string buf(batch);
  if (nft_run_cmd_from_buffer(ctx_.get(), buf.c_str()) != 0) {
    std::string err = nft_ctx_get_error_buffer(ctx_.get());
    return Error(ErrorCode::kInternal, absl::StrCat("nftables transaction failed: ", err));
  }
  (void)nft_ctx_get_output_buffer(ctx_.get());  // drain
  return absl::OkStatus();
}

absl::StatusOr<Json> Nft::ListJson(absl::string_view command) {
  nft_ctx_output_set_flags(ctx_.get(), NFT_CTX_OUTPUT_JSON | NFT_CTX_OUTPUT_HANDLE);
  std::string buf(command);
  int rc = nft_run_cmd_from_buffer(ctx_.get(), buf.c_str());
  std::string out = nft_ctx_get_output_buffer(ctx_.get());
  std::string err = nft_ctx_get_error_buffer(ctx_.get());
  nft_ctx_output_set_flags(ctx_.get(), 0);
  if (rc != 0) {
    absl::Status st = Error(ErrorCode::kInternal, absl::StrCat("nftables: ", command, ": ", err));
    // A missing table or chain is reported as ENOENT; callers treat it as empty.
    if (absl::StrContains(err, "No such file or directory")) return absl::NotFoundError(err);
    return st;
  }
  return ParseJson(out);
}

absl::StatusOr<std::vector<NftRule>> Nft::ListRules(absl::string_view family, absl::string_view table) {
  absl::StatusOr<Json> doc = ListJson(absl::StrCat("list table ", family, " ", table));
  if (absl::IsNotFound(doc.status())) return std::vector<NftRule>{};
  if (!doc.ok()) return doc.status();
  std::vector<NftRule> rules;
  const Json* items = FindKey(*doc, "nftables");
  if (items == nullptr || !items->is_array()) return rules;
  for (const Json& item : *items) {
    if (!item.is_object() || !item.contains("rule")) continue;
    const Json& r = item["rule"];
    NftRule rule;
    rule.family = r.value("family", "");
    rule.table = r.value("table", "");
    rule.chain = r.value("chain", "");
    rule.handle = r.value("handle", uint64_t{0});
    rule.comment = r.value("comment", "");
    rules.push_back(std::move(rule));
  }
  return rules;
}

absl::StatusOr<std::vector<std::string>> Nft::ListChains(absl::string_view family, absl::string_view table) {
  absl::StatusOr<Json> doc = ListJson(absl::StrCat("list table ", family, " ", table));
  if (absl::IsNotFound(doc.status())) return std::vector<std::string>{};
  if (!doc.ok()) return doc.status();
  std::vector<std::string> chains;
  const Json* items = FindKey(*doc, "nftables");
  if (items == nullptr || !items->is_array()) return chains;
  for (const Json& item : *items) {
    if (item.is_object() && item.contains("chain")) chains.push_back(item["chain"].value("name", ""));
  }
  return chains;
}

std::string NftQuote(absl::string_view text) { return absl::StrCat("\"", text, "\""); }

std::string NftDeleteRule(const NftRule& rule) {
  return absl::StrCat("delete rule ", rule.family, " ", rule.table, " ", rule.chain, " handle ", rule.handle, "\n");
}

}  // namespace cni::fw

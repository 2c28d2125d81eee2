#include "cni/fw/rule_record.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "cni/base/fs.h"
#include "cni/base/json.h"
#include "cni/fw/nft_batch.h"
#include "cni/net/netns.h"

namespace cni::fw {
namespace {

// The longest file name most file systems take.
constexpr size_t kMaxName = 255;

// "ip", "ip6" or "inet", the families Save writes; nullopt for anything else.
std::optional<NftFamily> KnownFamily(const std::string& name) {
  absl::StatusOr<NftFamily> f = ParseNftFamily(name);
  if (!f.ok() || (*f != NftFamily::kIp && *f != NftFamily::kIp6 && *f != NftFamily::kInet)) return std::nullopt;
  return *f;
}

// The record in `text`, nullopt when anything in it is not what Save writes.
std::optional<RuleRecord> Parse(const std::string& text) {
  absl::StatusOr<Json> doc = ParseJson(text);
  if (!doc.ok() || !doc->is_object()) return std::nullopt;
  const Json& tables = (*doc)["tables"];
  const Json& rules = (*doc)["rules"];
  if (!tables.is_object() || !rules.is_array()) return std::nullopt;
  RuleRecord r;
  for (const auto& [name, handle] : tables.items()) {
    std::optional<NftFamily> family = KnownFamily(name);
    if (!family.has_value() || !handle.is_number_unsigned()) return std::nullopt;
    r.tables[*family] = handle.get<uint64_t>();
  }
  for (const Json& j : rules) {
    if (!j.is_object() || !j["family"].is_string() || !j["table"].is_string() || !j["chain"].is_string() ||
        !j["handle"].is_number_unsigned()) {
      return std::nullopt;
    }
    std::optional<NftFamily> family = KnownFamily(j["family"].get<std::string>());
    if (!family.has_value()) return std::nullopt;
    NftRule rule;
    rule.family = *family;
    rule.table = j["table"].get<std::string>();
    rule.chain = j["chain"].get<std::string>();
    rule.handle = j["handle"].get<uint64_t>();
    if (j.contains("jump") && j["jump"].is_string()) rule.jump = j["jump"].get<std::string>();
    // A rule is only trusted under a table whose handle was recorded with it.
    if (r.tables.count(rule.family) == 0 || rule.chain.empty() || rule.handle == 0) return std::nullopt;
    r.rules.push_back(std::move(rule));
  }
  return r;
}

std::string Serialize(const RuleRecord& r) {
  Json doc = {{"tables", Json::object()}, {"rules", Json::array()}};
  for (const auto& [family, handle] : r.tables) doc["tables"][NftFamilyName(family)] = handle;
  for (const NftRule& rule : r.rules) {
    Json j = {{"family", NftFamilyName(rule.family)}, {"table", rule.table}, {"chain", rule.chain},
              {"handle", rule.handle}};
    // The chain a jump leads to: what GC must remove with it (ipMasq).
    if (!rule.jump.empty()) j["jump"] = rule.jump;
    doc["rules"].push_back(std::move(j));
  }
  return doc.dump();
}

}  // namespace

bool TableUnchanged(net::NetlinkSocket& nl, const RuleRecord& record, NftFamily family, const char* table) {
  auto noted = record.tables.find(family);
  if (noted == record.tables.end()) return false;
  absl::StatusOr<std::optional<uint64_t>> now = nft::TableHandle(nl, family, table);
  return now.ok() && *now == noted->second;
}

namespace {
// Whether every table `record` noted still has the handle it had.
bool Trusted(net::NetlinkSocket& nl, const RuleRecord& record, const char* table) {
  return std::all_of(record.tables.begin(), record.tables.end(),
                     [&](const auto& noted) { return TableUnchanged(nl, record, noted.first, table); });
}
}  // namespace

std::optional<std::vector<NftRule>> RuleRecordStore::RulesToReplace(net::NetlinkSocket& nl, const std::string& id,
                                                                    const char* table) const {
  if (!enabled()) return std::nullopt;
  std::optional<RuleRecord> record = Load(id);
  if (!record.has_value()) return std::vector<NftRule>{};
  if (!Trusted(nl, *record, table)) return std::nullopt;
  return std::move(record->rules);
}

bool RuleRecordStore::DeleteRecorded(net::NetlinkSocket& nl, const std::string& id, const char* table) const {
  std::optional<RuleRecord> record = Load(id);
  if (!record.has_value() || !Trusted(nl, *record, table)) return false;
  NftBatch b;
  for (const NftRule& r : record->rules) b.DeleteRule(r);
  if (!b.Commit(nl).ok()) return false;
  Remove(id);
  return true;
}

bool NoteTable(net::NetlinkSocket& nl, RuleRecord& record, NftFamily family, const char* table) {
  absl::StatusOr<std::optional<uint64_t>> now = nft::TableHandle(nl, family, table);
  if (!now.ok() || !now->has_value()) return false;
  record.tables[family] = **now;
  return true;
}

RuleRecordStore RuleRecordStore::ForCurrentNetns(std::string dir, absl::string_view scope) {
  absl::StatusOr<uint64_t> cookie = net::CurrentNetnsCookie();
  if (!cookie.ok()) return RuleRecordStore(std::move(dir), "");
  if (scope.empty()) return RuleRecordStore(std::move(dir), absl::StrCat(*cookie, "-"));
  return RuleRecordStore(std::move(dir), absl::StrCat(*cookie, "-", scope, "-"));
}

std::string RuleRecordStore::PathOf(const std::string& id) const {
  if (!enabled() || prefix_.size() + id.size() > kMaxName) return "";
  return absl::StrCat(dir_, "/", prefix_, id);
}

std::optional<RuleRecord> RuleRecordStore::Load(const std::string& id) const {
  std::string path = PathOf(id);
  if (path.empty()) return std::nullopt;
  absl::StatusOr<std::optional<std::string>> text = ReadRegularFileIfExists(path);
  if (!text.ok() || !text->has_value()) return std::nullopt;
  return Parse(**text);
}

void RuleRecordStore::Save(const std::string& id, const RuleRecord& record) const {
  std::string path = PathOf(id);
  if (path.empty()) return;
  // The first record since boot makes the directories (/run/cni may not
  // exist yet either).
  if (WriteFileAtomic(path, Serialize(record), {.mode = 0644, .make_parents = true}).ok()) return;
  (void)RemoveFileAndTemp(path);  // never an old record describing other rules
}

void RuleRecordStore::Remove(const std::string& id) const {
  std::string path = PathOf(id);
  if (!path.empty()) (void)RemoveFileAndTemp(path);
}

std::vector<std::string> RuleRecordStore::IdsNotIn(const std::vector<std::string>& valid_ids, bool records,
                                               bool temporaries) const {
  std::vector<std::string> ids;
  if (!enabled()) return ids;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    std::string file = entry.path().filename();
    absl::string_view id = file;
    if (!absl::ConsumePrefix(&id, prefix_)) continue;
    // "<record>~": the temporary file of a Save that was killed midway.
    if (!(absl::ConsumeSuffix(&id, "~") ? temporaries : records)) continue;
    if (std::find(valid_ids.begin(), valid_ids.end(), id) == valid_ids.end()) ids.emplace_back(id);
  }
  return ids;
}

void RuleRecordStore::RemoveAllBut(const std::vector<std::string>& valid_ids) const {
  for (const std::string& id : IdsNotIn(valid_ids, /*records=*/true, /*temporaries=*/true)) Remove(id);
}

void RuleRecordStore::RemoveTemporariesBut(const std::vector<std::string>& valid_ids,
                                           absl::string_view id_prefix) const {
  for (const std::string& id : IdsNotIn(valid_ids, /*records=*/false, /*temporaries=*/true)) {
    if (!absl::StartsWith(id, id_prefix)) continue;
    std::error_code ec;
    if (std::string path = PathOf(id); !path.empty()) std::filesystem::remove(TempPathFor(path), ec);
  }
}

}  // namespace cni::fw

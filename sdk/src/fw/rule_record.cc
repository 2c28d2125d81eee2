#include "cni/fw/rule_record.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "cni/base/fs.h"
#include "cni/base/json.h"
#include "cni/base/status_macros.h"
#include "cni/fw/iptables.h"  // RetryOnConflict
#include "cni/fw/names.h"
#include "cni/net/netns.h"

namespace cni::fw {

// The rules one ADD made, and the handle each family's table had then.
struct RuleRecords::Record {
  std::map<NftFamily, uint64_t> tables;
  std::vector<NftRule> rules;  // each with family, table, chain and handle
};

namespace {

// The longest file name most file systems take.
constexpr size_t kMaxName = 255;

// "ip", "ip6" or "inet", the families records name; nullopt for anything else.
std::optional<NftFamily> FamilyNamed(const Json& name) {
  if (!name.is_string()) return std::nullopt;
  absl::StatusOr<NftFamily> f = ParseNftFamily(name.get<std::string>());
  if (!f.ok() || (*f != NftFamily::kIp && *f != NftFamily::kIp6 && *f != NftFamily::kInet)) return std::nullopt;
  return *f;
}

// Whether `family`'s `table` still has the handle noted in `tables`.
bool TableUnchanged(net::NetlinkSocket& nl, const std::map<NftFamily, uint64_t>& tables, NftFamily family,
                    const std::string& table) {
  auto noted = tables.find(family);
  if (noted == tables.end()) return false;
  absl::StatusOr<std::optional<uint64_t>> now = nft::TableHandle(nl, family, table.c_str());
  return now.ok() && *now == noted->second;
}

// The rules of `owned`'s chains that it owns, listed.
absl::StatusOr<std::vector<NftRule>> Listed(net::NetlinkSocket& nl, const std::string& table, const OwnedRules& owned) {
  std::vector<NftRule> out;
  for (const auto& [family, chain] : owned.chains) {
    ASSIGN_OR_RETURN(std::vector<NftRule> rules, chain.empty() ? nft::ListRules(nl, family, table.c_str())
                                                               : nft::ListRules(nl, family, table.c_str(), chain.c_str()));
    for (NftRule& r : rules) {
      if (owned.owns(r)) out.push_back(std::move(r));
    }
  }
  return out;
}

absl::Status DeleteAll(net::NetlinkSocket& nl, const std::vector<NftRule>& rules) {
  NftBatch b;
  for (const NftRule& r : rules) b.DeleteRule(r);
  return b.Commit(nl);  // none: a no-op
}

}  // namespace

RuleRecords::RuleRecords(std::string dir, std::string table, absl::string_view network)
    : dir_(std::move(dir)), table_(std::move(table)) {
  absl::StatusOr<uint64_t> cookie = net::CurrentNetnsCookie();
  if (!cookie.ok()) return;  // disabled
  prefix_ = network.empty() ? absl::StrCat(*cookie, "-") : absl::StrCat(*cookie, "-", NetworkHash(network), "-");
}

// --- The whole life ---------------------------------------------------------

absl::Status RuleRecords::Replace(net::NetlinkSocket& nl, const std::string& key, const OwnedRules& mine,
                                  const std::function<absl::Status(NftBatch&)>& build) const {
  bool first = true;
  return RetryOnConflict([&]() -> absl::Status {
    // The earlier rules: none for a new attachment; a record's while it
    // holds; listed otherwise, and on every retry (the failure may have been
    // a recorded rule deleted by someone else, or a commit whose echo was
    // lost).
    std::optional<std::vector<NftRule>> earlier;
    if (std::exchange(first, false) && !prefix_.empty()) {
      std::optional<Record> record = Load(key);
      if (!record.has_value()) {
        earlier.emplace();
      } else if (std::all_of(record->tables.begin(), record->tables.end(),
                             [&](const auto& t) { return TableUnchanged(nl, record->tables, t.first, table_); })) {
        earlier = std::move(record->rules);
      }
    }
    if (!earlier.has_value()) {
      ASSIGN_OR_RETURN(earlier, Listed(nl, table_, mine));
    }
    NftBatch b;
    for (const NftRule& r : *earlier) b.DeleteRule(r);
    RETURN_IF_ERROR(build(b));
    if (b.HasText()) {
      Forget(key);  // the nft program tells no handles: DEL lists
      return nft::Apply(nl, b);
    }
    std::vector<NftRule> added;
    RETURN_IF_ERROR(b.Commit(nl, &added));
    std::erase_if(added, [&](const NftRule& r) { return !mine.owns(r); });
    // Without every table's handle (or with no rules), no record: DEL lists.
    Record record{.rules = std::move(added)};
    bool noted = !record.rules.empty();
    for (const NftRule& r : record.rules) {
      if (!noted || record.tables.count(r.family) > 0) continue;
      absl::StatusOr<std::optional<uint64_t>> handle = nft::TableHandle(nl, r.family, table_.c_str());
      noted = handle.ok() && handle->has_value();
      if (noted) record.tables[r.family] = **handle;
    }
    if (noted) {
      Save(key, record);
    } else {
      Forget(key);
    }
    return absl::OkStatus();
  });
}

absl::Status RuleRecords::Delete(net::NetlinkSocket& nl, const std::string& key, const OwnedRules& mine) const {
  bool first = true;
  return RetryOnConflict([&]() -> absl::Status {
    if (std::exchange(first, false)) {
      std::optional<Record> record = Load(key);
      if (record.has_value() && !record->tables.empty() &&
          std::all_of(record->tables.begin(), record->tables.end(),
                      [&](const auto& t) { return TableUnchanged(nl, record->tables, t.first, table_); }) &&
          DeleteAll(nl, record->rules).ok()) {
        Forget(key);
        return absl::OkStatus();
      }
    }
    ASSIGN_OR_RETURN(std::vector<NftRule> rules, Listed(nl, table_, mine));
    RETURN_IF_ERROR(DeleteAll(nl, rules));
    Forget(key);
    return absl::OkStatus();
  });
}

absl::Status RuleRecords::Collect(net::NetlinkSocket& nl, const OwnedRules& stale,
                                  const std::vector<std::string>& valid_keys) const {
  ASSIGN_OR_RETURN(std::vector<NftRule> rules, Listed(nl, table_, stale));
  RETURN_IF_ERROR(DeleteAll(nl, rules));
  ForgetAllBut(valid_keys);
  return absl::OkStatus();
}

// --- The pieces -------------------------------------------------------------

bool RuleRecords::Has(const std::string& key) const { return Load(key).has_value(); }

std::optional<std::vector<NftRule>> RuleRecords::Recorded(net::NetlinkSocket& nl, const std::string& key,
                                                          NftFamily family) const {
  std::optional<Record> record = Load(key);
  if (!record.has_value() || !TableUnchanged(nl, record->tables, family, table_)) return std::nullopt;
  std::erase_if(record->rules, [family](const NftRule& r) { return r.family != family; });
  return std::move(record->rules);
}

void RuleRecords::Note(net::NetlinkSocket& nl, const std::string& key, NftFamily family,
                       const std::vector<NftRule>& rules) const {
  if (prefix_.empty()) return;
  absl::StatusOr<std::optional<uint64_t>> handle = nft::TableHandle(nl, family, table_.c_str());
  if (!handle.ok() || !handle->has_value()) return Forget(key);
  Record record = Load(key).value_or(Record{});
  std::erase_if(record.rules, [family](const NftRule& r) { return r.family == family; });
  record.tables[family] = **handle;
  record.rules.insert(record.rules.end(), rules.begin(), rules.end());
  Save(key, record);
}

// --- The files --------------------------------------------------------------

std::string RuleRecords::PathOf(const std::string& key) const {
  if (prefix_.empty() || prefix_.size() + key.size() > kMaxName) return "";
  return absl::StrCat(dir_, "/", prefix_, key);
}

// A record as Save writes it: {"tables": {"<family>": handle}, "rules":
// [{"family", "table", "chain", "handle"[, "jump"]}]}. nullopt for a file
// that is unreadable or not that, and for a rule of a family whose table
// handle was not noted with it.
std::optional<RuleRecords::Record> RuleRecords::Load(const std::string& key) const {
  std::string path = PathOf(key);
  if (path.empty()) return std::nullopt;
  absl::StatusOr<std::optional<std::string>> text = ReadRegularFileIfExists(path);
  if (!text.ok() || !text->has_value()) return std::nullopt;
  absl::StatusOr<Json> doc = ParseJson(**text);
  if (!doc.ok() || !doc->is_object()) return std::nullopt;
  const Json& tables = (*doc)["tables"];
  const Json& rules = (*doc)["rules"];
  if (!tables.is_object() || !rules.is_array()) return std::nullopt;
  Record r;
  for (const auto& [name, handle] : tables.items()) {
    std::optional<NftFamily> family = FamilyNamed(Json(name));
    if (!family.has_value() || !handle.is_number_unsigned()) return std::nullopt;
    r.tables[*family] = handle.get<uint64_t>();
  }
  for (const Json& j : rules) {
    if (!j.is_object() || !j["table"].is_string() || !j["chain"].is_string() || !j["handle"].is_number_unsigned()) {
      return std::nullopt;
    }
    std::optional<NftFamily> family = FamilyNamed(j["family"]);
    if (!family.has_value()) return std::nullopt;
    NftRule rule;
    rule.family = *family;
    rule.table = j["table"].get<std::string>();
    rule.chain = j["chain"].get<std::string>();
    rule.handle = j["handle"].get<uint64_t>();
    // The chain a jump leads to: what GC must remove with it (ipMasq).
    if (j.contains("jump") && j["jump"].is_string()) rule.jump = j["jump"].get<std::string>();
    if (r.tables.count(rule.family) == 0 || rule.chain.empty() || rule.handle == 0) return std::nullopt;
    r.rules.push_back(std::move(rule));
  }
  return r;
}

// Written to a temporary file, then renamed, so a reader never sees half of
// it. Best effort: on failure the old record goes, never left to describe
// other rules.
void RuleRecords::Save(const std::string& key, const Record& record) const {
  std::string path = PathOf(key);
  if (path.empty()) return;
  Json doc = {{"tables", Json::object()}, {"rules", Json::array()}};
  for (const auto& [family, handle] : record.tables) doc["tables"][NftFamilyName(family)] = handle;
  for (const NftRule& rule : record.rules) {
    Json j = {{"family", NftFamilyName(rule.family)}, {"table", rule.table}, {"chain", rule.chain},
              {"handle", rule.handle}};
    if (!rule.jump.empty()) j["jump"] = rule.jump;
    doc["rules"].push_back(std::move(j));
  }
  // The first record since boot makes the directories (/run/cni may not
  // exist yet either).
  if (WriteFileAtomic(path, doc.dump(), {.mode = 0644, .make_parents = true}).ok()) return;
  (void)RemoveFileAndTemp(path);
}

void RuleRecords::Forget(const std::string& key) const {
  std::string path = PathOf(key);
  if (!path.empty()) (void)RemoveFileAndTemp(path);
}

std::vector<std::string> RuleRecords::KeysNotIn(const std::vector<std::string>& valid_keys, bool temporaries) const {
  std::vector<std::string> keys;
  if (prefix_.empty()) return keys;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    std::string file = entry.path().filename();
    absl::string_view key = file;
    if (!absl::ConsumePrefix(&key, prefix_)) continue;
    // "<record>~": the temporary file of a Save that was killed midway.
    if (absl::ConsumeSuffix(&key, "~") != temporaries) continue;
    if (std::find(valid_keys.begin(), valid_keys.end(), key) == valid_keys.end()) keys.emplace_back(key);
  }
  return keys;
}

std::vector<std::string> RuleRecords::StaleKeys(const std::vector<std::string>& valid_keys) const {
  return KeysNotIn(valid_keys, /*temporaries=*/false);
}

void RuleRecords::ForgetAllBut(const std::vector<std::string>& valid_keys) const {
  for (bool temporaries : {false, true}) {
    for (const std::string& key : KeysNotIn(valid_keys, temporaries)) Forget(key);
  }
}

}  // namespace cni::fw

#include "rule_record.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "absl/strings/str_cat.h"
#include "cni/json.h"
#include "cni/net/netns.h"

namespace cni::portmap {
namespace {

// The longest file name most file systems take.
constexpr size_t kMaxName = 255;

// "ip" or "ip6", the families Save writes; nullopt for anything else.
std::optional<fw::NftFamily> KnownFamily(const std::string& name) {
  absl::StatusOr<fw::NftFamily> f = fw::ParseNftFamily(name);
  if (!f.ok() || (*f != fw::NftFamily::kIp && *f != fw::NftFamily::kIp6)) return std::nullopt;
  return *f;
}

// The record in `text`, nullopt when anything in it is not what Save writes.
std::optional<Record> Parse(const std::string& text) {
  absl::StatusOr<Json> doc = ParseJson(text);
  if (!doc.ok() || !doc->is_object()) return std::nullopt;
  const Json& tables = (*doc)["tables"];
  const Json& rules = (*doc)["rules"];
  if (!tables.is_object() || !rules.is_array()) return std::nullopt;
  Record r;
  for (const auto& [name, handle] : tables.items()) {
    std::optional<fw::NftFamily> family = KnownFamily(name);
    if (!family.has_value() || !handle.is_number_unsigned()) return std::nullopt;
    r.tables[*family] = handle.get<uint64_t>();
  }
  for (const Json& j : rules) {
    if (!j.is_object() || !j["family"].is_string() || !j["table"].is_string() || !j["chain"].is_string() ||
        !j["handle"].is_number_unsigned()) {
      return std::nullopt;
    }
    std::optional<fw::NftFamily> family = KnownFamily(j["family"].get<std::string>());
    if (!family.has_value()) return std::nullopt;
    fw::NftRule rule;
    rule.family = *family;
    rule.table = j["table"].get<std::string>();
    rule.chain = j["chain"].get<std::string>();
    rule.handle = j["handle"].get<uint64_t>();
    // A rule is only trusted under a table whose handle was recorded with it.
    if (r.tables.count(rule.family) == 0 || rule.chain.empty() || rule.handle == 0) return std::nullopt;
    r.rules.push_back(std::move(rule));
  }
  return r;
}

std::string Serialize(const Record& r) {
  Json doc = {{"tables", Json::object()}, {"rules", Json::array()}};
  for (const auto& [family, handle] : r.tables) doc["tables"][fw::NftFamilyName(family)] = handle;
  for (const fw::NftRule& rule : r.rules) {
    doc["rules"].push_back({{"family", fw::NftFamilyName(rule.family)},
                            {"table", rule.table},
                            {"chain", rule.chain},
                            {"handle", rule.handle}});
  }
  return doc.dump();
}

}  // namespace

bool TableUnchanged(net::NetlinkSocket& nl, const Record& record, fw::NftFamily family, const char* table) {
  auto noted = record.tables.find(family);
  if (noted == record.tables.end()) return false;
  absl::StatusOr<std::optional<uint64_t>> now = fw::nft::TableHandle(nl, family, table);
  return now.ok() && *now == noted->second;
}

bool NoteTable(net::NetlinkSocket& nl, Record& record, fw::NftFamily family, const char* table) {
  absl::StatusOr<std::optional<uint64_t>> now = fw::nft::TableHandle(nl, family, table);
  if (!now.ok() || !now->has_value()) return false;
  record.tables[family] = **now;
  return true;
}

RecordStore RecordStore::ForCurrentNetns(std::string dir) {
  absl::StatusOr<uint64_t> cookie = net::CurrentNetnsCookie();
  if (!cookie.ok()) return RecordStore(std::move(dir), "");
  return RecordStore(std::move(dir), absl::StrCat(*cookie, "-"));
}

std::string RecordStore::PathOf(const std::string& id) const {
  if (!enabled() || prefix_.size() + id.size() > kMaxName) return "";
  return absl::StrCat(dir_, "/", prefix_, id);
}

std::optional<Record> RecordStore::Load(const std::string& id) const {
  std::string path = PathOf(id);
  if (path.empty()) return std::nullopt;
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return Parse(text.str());
}

void RecordStore::Save(const std::string& id, const Record& record) const {
  std::string path = PathOf(id);
  if (path.empty()) return;
  // "~" cannot be part of a container ID, so the temporary name is no record.
  std::string tmp = absl::StrCat(path, "~");
  std::string text = Serialize(record);
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0 && errno == ENOENT) {
    // The first record since boot: make the directories (/run/cni may not
    // exist yet either).
    for (size_t slash = dir_.find('/', 1); slash != std::string::npos; slash = dir_.find('/', slash + 1)) {
      mkdir(dir_.substr(0, slash).c_str(), 0755);
    }
    mkdir(dir_.c_str(), 0755);
    fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  }
  bool ok = fd >= 0 && write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  if (fd >= 0 && close(fd) != 0) ok = false;
  if (ok && rename(tmp.c_str(), path.c_str()) == 0) return;
  unlink(tmp.c_str());
  unlink(path.c_str());
}

void RecordStore::Remove(const std::string& id) const {
  std::string path = PathOf(id);
  if (!path.empty()) unlink(path.c_str());
}

void RecordStore::RemoveAllBut(const std::vector<std::string>& valid_ids) const {
  if (!enabled()) return;
  DIR* dir = opendir(dir_.c_str());
  if (dir == nullptr) return;
  std::vector<std::string> stale;
  while (dirent* e = readdir(dir)) {
    absl::string_view name(e->d_name);
    if (!absl::ConsumePrefix(&name, prefix_)) continue;
    // A temporary file left by a crash goes too.
    if (absl::EndsWith(name, "~") ||
        std::find(valid_ids.begin(), valid_ids.end(), name) == valid_ids.end()) {
      stale.emplace_back(e->d_name);
    }
  }
  closedir(dir);
  for (const std::string& name : stale) unlink(absl::StrCat(dir_, "/", name).c_str());
}

}  // namespace cni::portmap

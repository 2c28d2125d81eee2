#include "intents.h"

#include <algorithm>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "cni/base/fs.h"
#include "cni/net/netns.h"

namespace cni::firewall {
namespace {

constexpr const char* kDir = "/run/cni/firewall/iptables-addresses";
constexpr size_t kMaxName = 255;

}  // namespace

AddressIntents AddressIntents::ForCurrentNetns() {
  absl::StatusOr<uint64_t> cookie = net::CurrentNetnsCookie();
  return AddressIntents(cookie.ok() ? absl::StrCat(*cookie, "-") : "");
}

std::string AddressIntents::PathOf(const std::string& key) const {
  // "~" ends a temporary file's name: a key never does.
  if (prefix_.empty() || prefix_.size() + key.size() + 1 > kMaxName) return "";
  return absl::StrCat(kDir, "/", prefix_, key);
}

std::vector<net::IpPrefix> AddressIntents::Load(const std::string& key) const {
  std::vector<net::IpPrefix> out;
  const std::string path = PathOf(key);
  if (path.empty()) return out;
  absl::StatusOr<std::optional<std::string>> text = ReadRegularFileIfExists(path);
  if (!text.ok() || !text->has_value()) return out;
  for (absl::string_view line : absl::StrSplit(**text, '\n', absl::SkipEmpty())) {
    if (absl::StatusOr<net::IpPrefix> p = net::IpPrefix::Parse(line); p.ok()) out.push_back(*p);
  }
  return out;
}

bool AddressIntents::Has(const std::string& key) const {
  const std::string path = PathOf(key);
  std::error_code ec;
  return !path.empty() && std::filesystem::exists(path, ec);
}

absl::Status AddressIntents::Save(const std::string& key, const std::vector<net::IpPrefix>& addresses) const {
  const std::string path = PathOf(key);
  if (path.empty()) return absl::OkStatus();
  std::string text;
  for (const net::IpPrefix& a : addresses) absl::StrAppend(&text, a.ToString(), "\n");
  return WriteFileAtomic(path, text, {.mode = 0644, .make_parents = true});
}

void AddressIntents::Remove(const std::string& key) const {
  if (const std::string path = PathOf(key); !path.empty()) (void)RemoveFileAndTemp(path);
}

std::vector<std::string> AddressIntents::KeysWithPrefix(const std::string& prefix) const {
  std::vector<std::string> keys;
  if (prefix_.empty()) return keys;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(kDir, ec)) {
    const std::string file = entry.path().filename();
    absl::string_view key = file;
    if (!absl::ConsumePrefix(&key, prefix_)) continue;
    absl::ConsumeSuffix(&key, "~");  // a killed Save's temporary: its key's too
    if (absl::StartsWith(key, prefix) && std::find(keys.begin(), keys.end(), key) == keys.end()) keys.emplace_back(key);
  }
  return keys;
}

}  // namespace cni::firewall

#include "index.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "fs.h"

namespace cni::hostlocal {
namespace {

// Contains spaces on purpose: see index.h (upstream never matches our files).
constexpr absl::string_view kHeader = "cni-cpp host-local index v1";
constexpr char kStampName[] = "stamp";

using Entries = std::vector<std::pair<std::string, std::string>>;  // (ip, owner)

// Owner keys contain "\r\n"; escape every byte that is not printable ASCII,
// plus ' ' and '%', so a bucket line is "<ip> <key>" with no ambiguity.
std::string Escape(absl::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (c <= 0x20 || c >= 0x7f || c == '%') {
      absl::StrAppendFormat(&out, "%%%02X", c);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out;
}

std::string Unescape(absl::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    int v = 0;
    if (s[i] == '%' && i + 2 < s.size() && absl::SimpleHexAtoi(s.substr(i + 1, 2), &v)) {
      out.push_back(static_cast<char>(v));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

std::string StampText(const struct timespec& ts) {
  return absl::StrCat(kHeader, " ", ts.tv_sec, " ", ts.tv_nsec, "\n");
}

}  // namespace

AttachmentIndex::~AttachmentIndex() {
  if (idx_fd_ >= 0) close(idx_fd_);
}

std::string AttachmentIndex::BucketName(absl::string_view owner) {
  // FNV-1a, 64 bit: stable across builds (absl::Hash is not). The top 12 bits
  // pick one of 4096 buckets: a rebuild writes at most 4096 files, and at
  // 60,000 reservations a bucket holds ~15 lines (well under one page). Lines
  // carry the full key, so sharing a bucket is harmless.
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : owner) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return absl::StrFormat("%03x", h >> 52);
}

absl::StatusOr<int> AttachmentIndex::Dir() {
  if (idx_fd_ >= 0) return idx_fd_;
  std::string name(kIndexDirName);
  if (mkdirat(net_fd_, name.c_str(), 0700) != 0 && errno != EEXIST) {
    return IoError("creating index directory", name, errno);
  }
  idx_fd_ = openat(net_fd_, name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (idx_fd_ < 0) return IoError("opening index directory", name, errno);
  return idx_fd_;
}

absl::StatusOr<bool> AttachmentIndex::IsCurrent() {
  struct stat st;
  if (fstat(net_fd_, &st) != 0) return IoError("stat", "network directory", errno);
  // Read the stamp without creating the index directory.
  std::string path = absl::StrCat(kIndexDirName, "/", kStampName);
  absl::StatusOr<std::optional<std::string>> stamp = ReadFileAt(net_fd_, path);
  if (!stamp.ok()) return stamp.status();
  return stamp->has_value() && **stamp == StampText(st.st_mtim);
}

absl::Status AttachmentIndex::Rebuild(const std::vector<Reservation>& all) {
  absl::StatusOr<int> dir = Dir();
  if (!dir.ok()) return dir.status();
  // Drop every old file (buckets and stamp), then write the new buckets.
  int dup_fd = dup(*dir);
  if (dup_fd < 0) return IoError("reading index directory", kIndexDirName, errno);
  DIR* d = fdopendir(dup_fd);
  if (d == nullptr) {
    close(dup_fd);
    return IoError("reading index directory", kIndexDirName, errno);
  }
  rewinddir(d);
  std::vector<std::string> old;
  while (struct dirent* e = readdir(d)) {
    absl::string_view n = e->d_name;
    if (n != "." && n != "..") old.emplace_back(n);
  }
  closedir(d);
  for (const std::string& n : old) {
    if (unlinkat(*dir, n.c_str(), 0) != 0 && errno != ENOENT) {
      return IoError("removing index file", n, errno);
    }
  }
  absl::flat_hash_map<std::string, Entries> buckets;
  for (const Reservation& r : all) {
    buckets[BucketName(r.owner)].emplace_back(r.ip_text, r.owner);
  }
  for (const auto& [name, entries] : buckets) {
    absl::Status st = WriteBucket(name, entries);
    if (!st.ok()) return st;
  }
  return absl::OkStatus();
}

absl::StatusOr<Entries> AttachmentIndex::ReadBucket(const std::string& name) {
  absl::StatusOr<int> dir = Dir();
  if (!dir.ok()) return dir.status();
  absl::StatusOr<std::optional<std::string>> text = ReadFileAt(*dir, name);
  if (!text.ok()) return text.status();
  Entries out;
  if (!text->has_value()) return out;
  bool first = true;
  for (absl::string_view line : absl::StrSplit(**text, '\n', absl::SkipEmpty())) {
    if (first) {
      first = false;
      if (line == kHeader) continue;
    }
    size_t sp = line.find(' ');
    if (sp == absl::string_view::npos) continue;
    out.emplace_back(std::string(line.substr(0, sp)), Unescape(line.substr(sp + 1)));
  }
  return out;
}

absl::Status AttachmentIndex::WriteBucket(const std::string& name, const Entries& entries) {
  absl::StatusOr<int> dir = Dir();
  if (!dir.ok()) return dir.status();
  if (entries.empty()) {
    if (unlinkat(*dir, name.c_str(), 0) != 0 && errno != ENOENT) {
      return IoError("removing index file", name, errno);
    }
    return absl::OkStatus();
  }
  std::string text = absl::StrCat(kHeader, "\n");
  for (const auto& [ip, owner] : entries) absl::StrAppend(&text, ip, " ", Escape(owner), "\n");
  return WriteFileAt(*dir, name, text, 0600);
}

absl::StatusOr<std::vector<std::string>> AttachmentIndex::Lookup(absl::string_view owner) {
  absl::StatusOr<Entries> entries = ReadBucket(BucketName(owner));
  if (!entries.ok()) return entries.status();
  std::vector<std::string> ips;
  for (const auto& [ip, o] : *entries) {
    if (o == owner) ips.push_back(ip);
  }
  return ips;
}

absl::Status AttachmentIndex::Add(absl::string_view owner, absl::string_view ip_text) {
  std::string name = BucketName(owner);
  absl::StatusOr<Entries> entries = ReadBucket(name);
  if (!entries.ok()) return entries.status();
  for (const auto& [ip, o] : *entries) {
    if (ip == ip_text && o == owner) return absl::OkStatus();
  }
  entries->emplace_back(std::string(ip_text), std::string(owner));
  return WriteBucket(name, *entries);
}

absl::Status AttachmentIndex::Remove(absl::string_view owner, absl::string_view ip_text) {
  std::string name = BucketName(owner);
  absl::StatusOr<Entries> entries = ReadBucket(name);
  if (!entries.ok()) return entries.status();
  size_t before = entries->size();
  std::erase_if(*entries, [&](const auto& e) { return e.first == ip_text && e.second == owner; });
  if (entries->size() == before) return absl::OkStatus();
  return WriteBucket(name, *entries);
}

absl::Status AttachmentIndex::Commit() {
  absl::StatusOr<int> dir = Dir();
  if (!dir.ok()) return dir.status();
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  // `now` is a fine-grained reading. When anyone else later adds or removes a
  // file, the kernel stamps the directory with its own clock; hitting exactly
  // this value again, to the nanosecond, is not a practical concern.
  struct timespec times[2] = {{0, UTIME_OMIT}, now};
  struct stat st;
  bool precise = futimens(net_fd_, times) == 0 && fstat(net_fd_, &st) == 0 &&
                 st.st_mtim.tv_sec == now.tv_sec && st.st_mtim.tv_nsec == now.tv_nsec;
  if (!precise) {
    // Cannot prove completeness later: make the next operation rebuild.
    if (unlinkat(*dir, kStampName, 0) != 0 && errno != ENOENT) {
      return IoError("removing index stamp", kStampName, errno);
    }
    return absl::OkStatus();
  }
  return WriteFileAt(*dir, kStampName, StampText(st.st_mtim), 0600);
}

}  // namespace cni::hostlocal

#include "index.h"

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
#include "cni/base/status_macros.h"
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

bool AttachmentIndex::OpenExisting() {
  if (!idx_fd_.valid()) {
    std::string name(kIndexDirName);
    idx_fd_.reset(openat(net_fd_, name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
  }
  return idx_fd_.valid();
}

absl::StatusOr<int> AttachmentIndex::Dir() {
  if (OpenExisting()) return idx_fd_.get();
  std::string name(kIndexDirName);
  if (errno == ELOOP || errno == ENOTDIR) {
    // Not a directory of ours (a planted symlink, a file): it goes, and the
    // index is built again in a fresh directory.
    if (unlinkat(net_fd_, name.c_str(), 0) != 0 && errno != ENOENT) {
      return IoError("removing", Quoted(name), errno);
    }
  }
  if (mkdirat(net_fd_, name.c_str(), 0700) != 0 && errno != EEXIST) {
    return IoError("creating index directory", Quoted(name), errno);
  }
  if (!OpenExisting()) return IoError("opening index directory", Quoted(name), errno);
  return idx_fd_.get();
}

absl::StatusOr<bool> AttachmentIndex::IsCurrent() {
  struct stat st;
  if (fstat(net_fd_, &st) != 0) return IoError("stat", Quoted("network directory"), errno);
  // Read the stamp without creating the index directory, and without
  // following a symlink at either name: unreadable means "rebuild".
  if (!OpenExisting()) return false;
  absl::StatusOr<std::optional<std::string>> stamp = ReadFileAt(idx_fd_.get(), kStampName);
  return stamp.ok() && stamp->has_value() && **stamp == StampText(st.st_mtim);
}

absl::Status AttachmentIndex::Rebuild(const std::vector<Reservation>& all) {
  ASSIGN_OR_RETURN(int dir, Dir());
  // Drop every old entry (buckets, stamp, anything planted), then write the
  // new buckets.
  ASSIGN_OR_RETURN(std::vector<DirEntry> old,
                   ListDirAt(dir, "reading index directory", kIndexDirName));
  for (const DirEntry& e : old) {
    if (unlinkat(dir, e.name.c_str(), 0) != 0 && errno != ENOENT) {
      return IoError("removing index file", Quoted(e.name), errno);
    }
  }
  absl::flat_hash_map<std::string, Entries> buckets;
  for (const Reservation& r : all) {
    buckets[BucketName(r.owner)].emplace_back(r.ip_text, r.owner);
  }
  for (const auto& [name, entries] : buckets) RETURN_IF_ERROR(WriteBucket(name, entries));
  return absl::OkStatus();
}

absl::StatusOr<Entries> AttachmentIndex::ReadBucket(const std::string& name) {
  ASSIGN_OR_RETURN(int dir, Dir());
  ASSIGN_OR_RETURN(std::optional<std::string> text, ReadFileAt(dir, name));
  Entries out;
  if (!text) return out;
  bool first = true;
  for (absl::string_view line : absl::StrSplit(*text, '\n', absl::SkipEmpty())) {
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
  ASSIGN_OR_RETURN(int dir, Dir());
  if (entries.empty()) {
    if (unlinkat(dir, name.c_str(), 0) != 0 && errno != ENOENT) {
      return IoError("removing index file", Quoted(name), errno);
    }
    return absl::OkStatus();
  }
  std::string text = absl::StrCat(kHeader, "\n");
  for (const auto& [ip, owner] : entries) absl::StrAppend(&text, ip, " ", Escape(owner), "\n");
  return WriteFileAt(dir, name, text, 0600);
}

absl::StatusOr<std::vector<std::string>> AttachmentIndex::Lookup(absl::string_view owner) {
  ASSIGN_OR_RETURN(Entries entries, ReadBucket(BucketName(owner)));
  std::vector<std::string> ips;
  for (const auto& [ip, o] : entries) {
    if (o == owner) ips.push_back(ip);
  }
  return ips;
}

absl::Status AttachmentIndex::Add(absl::string_view owner, absl::string_view ip_text) {
  std::string name = BucketName(owner);
  ASSIGN_OR_RETURN(Entries entries, ReadBucket(name));
  for (const auto& [ip, o] : entries) {
    if (ip == ip_text && o == owner) return absl::OkStatus();
  }
  entries.emplace_back(std::string(ip_text), std::string(owner));
  return WriteBucket(name, entries);
}

absl::Status AttachmentIndex::Remove(absl::string_view owner, absl::string_view ip_text) {
  std::string name = BucketName(owner);
  ASSIGN_OR_RETURN(Entries entries, ReadBucket(name));
  size_t before = entries.size();
  std::erase_if(entries, [&](const auto& e) { return e.first == ip_text && e.second == owner; });
  if (entries.size() == before) return absl::OkStatus();
  return WriteBucket(name, entries);
}

absl::Status AttachmentIndex::Commit() {
  ASSIGN_OR_RETURN(int dir, Dir());
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
    if (unlinkat(dir, kStampName, 0) != 0 && errno != ENOENT) {
      return IoError("removing index stamp", Quoted(kStampName), errno);
    }
    return absl::OkStatus();
  }
  return WriteFileAt(dir, kStampName, StampText(st.st_mtim), 0600);
}

}  // namespace cni::hostlocal

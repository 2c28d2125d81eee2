#include "store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"

namespace cni::hostlocal {
namespace {

constexpr absl::string_view kLastIpPrefix = "last_reserved_ip.";
constexpr absl::string_view kLineBreak = "\r\n";

// Reservation files are the directory entries whose name parses as an address
// (upstream's rule too: lock, last_reserved_ip.* and our index never do).
std::optional<net::IpAddress> ParseName(absl::string_view name) {
  if (name.empty() || name[0] == '.') return std::nullopt;
  absl::StatusOr<net::IpAddress> ip = net::IpAddress::Parse(name);
  if (!ip.ok()) return std::nullopt;
  return *ip;
}

// The reservation files of the network directory: regular (or, where the
// filesystem does not say, possibly regular) entries named like an address.
absl::StatusOr<std::vector<std::string>> ListReservationNames(int dir_fd, const std::string& dir) {
  ASSIGN_OR_RETURN(std::vector<DirEntry> entries, ListDirAt(dir_fd, "reading directory", dir));
  std::vector<std::string> names;
  for (DirEntry& e : entries) {
    if (e.type != DT_REG && e.type != DT_UNKNOWN) continue;
    if (ParseName(e.name)) names.push_back(std::move(e.name));
  }
  return names;
}

// The status of a Status or a StatusOr (for WithIndex, which takes both).
const absl::Status& StatusOf(const absl::Status& s) { return s; }
template <typename T>
const absl::Status& StatusOf(const absl::StatusOr<T>& s) {
  return s.status();
}

// Opens (creating it 0750, like upstream's go-filemutex) the lock file. A
// symlink planted there is replaced by a file of our own, never followed.
absl::StatusOr<UniqueFd> OpenLockFile(int dir_fd, const std::string& dir) {
  const int flags = O_RDONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW;
  UniqueFd fd(openat(dir_fd, "lock", flags, 0750));
  if (!fd.valid() && errno == ELOOP) {
    if (unlinkat(dir_fd, "lock", 0) != 0 && errno != ENOENT) {
      return IoError("opening lock", Quoted(absl::StrCat(dir, "/lock")), errno);
    }
    fd.reset(openat(dir_fd, "lock", flags, 0750));
  }
  if (!fd.valid()) return IoError("opening lock", Quoted(absl::StrCat(dir, "/lock")), errno);
  return fd;
}

}  // namespace

std::string AddressText(const net::IpAddress& ip) {
  if (ip.is_v4()) return ip.ToString();
  // Go (RFC 5952): the longest run of two or more zero groups becomes "::"
  // (the first one on a tie), hex digits lower-case without leading zeros.
  uint16_t g[8];
  for (int i = 0; i < 8; ++i)
    g[i] = static_cast<uint16_t>(ip.data()[2 * i] << 8 | ip.data()[2 * i + 1]);
  int best = -1, best_len = 0;
  for (int i = 0; i < 8;) {
    if (g[i] != 0) {
      ++i;
      continue;
    }
    int j = i;
    while (j < 8 && g[j] == 0) ++j;
    if (j - i > best_len && j - i >= 2) {
      best = i;
      best_len = j - i;
    }
    i = j;
  }
  std::string out;
  for (int i = 0; i < 8; ++i) {
    if (i == best) {
      out += "::";
      i += best_len - 1;
      continue;
    }
    if (!out.empty() && out.back() != ':') out += ':';
    absl::StrAppendFormat(&out, "%x", g[i]);
  }
  return out;
}

std::string OwnerKey(absl::string_view container_id, absl::string_view ifname) {
  return absl::StrCat(TrimSpace(container_id), kLineBreak, ifname);
}

Store::Store(std::string dir, UniqueFd dir_fd, UniqueFd lock_fd)
    : dir_(std::move(dir)),
      dir_fd_(std::move(dir_fd)),
      lock_fd_(std::move(lock_fd)),
      index_(dir_fd_.get()) {}

absl::StatusOr<std::unique_ptr<Store>> Store::Open(const std::string& dir) {
  RETURN_IF_ERROR(MkdirAll(dir, 0755));
  UniqueFd dir_fd(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir_fd.valid()) return IoError("opening directory", Quoted(dir), errno);
  ASSIGN_OR_RETURN(UniqueFd lock_fd, OpenLockFile(dir_fd.get(), dir));
  return std::unique_ptr<Store>(new Store(dir, std::move(dir_fd), std::move(lock_fd)));
}

absl::Status Store::Lock() {
  while (flock(lock_fd_.get(), LOCK_EX) != 0) {
    if (errno != EINTR) return IoError("locking", Quoted(absl::StrCat(dir_, "/lock")), errno);
  }
  locked_ = true;
  dirty_ = false;
  ASSIGN_OR_RETURN(bool current, index_.IsCurrent());
  if (current) return absl::OkStatus();
  // Someone else (upstream, a crash of ours, an operator) changed the
  // directory: one full scan makes the index complete again.
  return RebuildIndex();
}

absl::Status Store::RebuildIndex() {
  ASSIGN_OR_RETURN(std::vector<Reservation> all, Scan());
  RETURN_IF_ERROR(index_.Rebuild(all));
  ++rebuilds_;
  dirty_ = true;
  return absl::OkStatus();
}

template <typename Fn>
auto Store::WithIndex(Fn fn) -> decltype(fn()) {
  auto out = fn();
  // A bucket that is not a file of ours (a planted symlink): the index is a
  // cache, so it is rebuilt from the reservation files and asked again.
  if (out.ok() || !IsNotRegularFile(StatusOf(out))) return out;
  RETURN_IF_ERROR(RebuildIndex());
  return fn();
}

absl::Status Store::Unlock() {
  if (!locked_) return absl::OkStatus();
  absl::Status st = dirty_ ? index_.Commit() : absl::OkStatus();
  dirty_ = false;
  locked_ = false;
  flock(lock_fd_.get(), LOCK_UN);
  return st;
}

absl::StatusOr<bool> Store::Reserve(absl::string_view id, absl::string_view ifname,
                                    const net::IpAddress& ip, int range_id) {
  std::string name = AddressText(ip);
  UniqueFd fd(openat(dir_fd_.get(), name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (!fd.valid()) {
    if (errno == EEXIST) return false;
    return IoError("reserving", Quoted(absl::StrCat(dir_, "/", name)), errno);
  }
  dirty_ = true;
  std::string owner = OwnerKey(id, ifname);
  // Until the file, its index entry and last_reserved_ip are all written,
  // a failure undoes this reservation here: the caller only rolls back what
  // succeeded.
  absl::Cleanup undo = [&] {
    unlinkat(dir_fd_.get(), name.c_str(), 0);
    (void)WithIndex([&] { return index_.Remove(owner, name); });
  };
  std::string path = Quoted(absl::StrCat(dir_, "/", name));
  RETURN_IF_ERROR(WriteAll(fd.get(), owner, path));
  if (absl::Status closed = fd.Close(); !closed.ok()) {
    return IoError("writing", path, ErrnoOf(closed));
  }
  RETURN_IF_ERROR(WithIndex([&] { return index_.Add(owner, name); }));
  RETURN_IF_ERROR(WriteFileAt(dir_fd_.get(), absl::StrCat(kLastIpPrefix, range_id), name, 0600));
  std::move(undo).Cancel();
  return true;
}

std::optional<net::IpAddress> Store::LastReservedIp(int range_id) {
  absl::StatusOr<std::optional<std::string>> text =
      ReadFileAt(dir_fd_.get(), absl::StrCat(kLastIpPrefix, range_id));
  // Unreadable (a planted symlink included) or garbage only costs round-robin
  // order, as upstream; the next reservation rewrites it.
  if (!text.ok() || !text->has_value()) return std::nullopt;
  absl::StatusOr<net::IpAddress> ip = net::IpAddress::Parse(TrimSpace(**text));
  if (!ip.ok()) return std::nullopt;
  return *ip;
}

absl::StatusOr<std::vector<std::string>> Store::Owned(absl::string_view owner) {
  ASSIGN_OR_RETURN(std::vector<std::string> listed,
                   WithIndex([&] { return index_.Lookup(owner); }));
  std::vector<std::string> out;
  for (const std::string& ip_text : listed) {
    ASSIGN_OR_RETURN(std::optional<std::string> content, ReadFileAt(dir_fd_.get(), ip_text));
    if (content && TrimSpace(*content) == owner) out.push_back(ip_text);
  }
  return out;
}

absl::StatusOr<std::vector<net::IpAddress>> Store::GetByAttachment(absl::string_view id,
                                                                   absl::string_view ifname) {
  std::vector<net::IpAddress> out;
  for (const std::string& owner : {OwnerKey(id, ifname), std::string(TrimSpace(id))}) {
    ASSIGN_OR_RETURN(std::vector<std::string> owned, Owned(owner));
    for (const std::string& ip_text : owned) {
      if (std::optional<net::IpAddress> ip = ParseName(ip_text)) out.push_back(*ip);
    }
  }
  return out;
}

absl::StatusOr<bool> Store::FindByAttachment(absl::string_view id, absl::string_view ifname) {
  ASSIGN_OR_RETURN(std::vector<net::IpAddress> ips, GetByAttachment(id, ifname));
  return !ips.empty();
}

absl::StatusOr<bool> Store::ReleaseIfOwned(absl::string_view owner, const std::string& ip_text) {
  ASSIGN_OR_RETURN(std::optional<std::string> content, ReadFileAt(dir_fd_.get(), ip_text));
  bool owned = content && TrimSpace(*content) == owner;
  if (owned) {
    if (unlinkat(dir_fd_.get(), ip_text.c_str(), 0) != 0 && errno != ENOENT) {
      return IoError("releasing", Quoted(absl::StrCat(dir_, "/", ip_text)), errno);
    }
    dirty_ = true;
  }
  // Whether deleted or stale, the entry must go.
  RETURN_IF_ERROR(WithIndex([&] { return index_.Remove(owner, ip_text); }));
  if (!owned && content) {
    // The file was rewritten in place (the directory's mtime does not change
    // then, so the index did not notice): file it under the owner it names
    // now, e.g. an old-format file holding only a container ID, so that
    // owner's DEL finds it.
    RETURN_IF_ERROR(WithIndex([&] { return index_.Add(TrimSpace(*content), ip_text); }));
    dirty_ = true;
  }
  return owned;
}

absl::StatusOr<size_t> Store::ReleaseOwner(absl::string_view owner) {
  ASSIGN_OR_RETURN(std::vector<std::string> listed,
                   WithIndex([&] { return index_.Lookup(owner); }));
  size_t released = 0;
  absl::Status first_error;
  for (const std::string& ip_text : listed) {
    absl::StatusOr<bool> done = ReleaseIfOwned(owner, ip_text);
    if (!done.ok()) {
      if (first_error.ok()) first_error = done.status();  // keep going, as upstream
      continue;
    }
    released += *done ? 1 : 0;
  }
  if (!first_error.ok()) return first_error;
  return released;
}

absl::Status Store::ReleaseByAttachment(absl::string_view id, absl::string_view ifname) {
  ASSIGN_OR_RETURN(size_t n, ReleaseOwner(OwnerKey(id, ifname)));
  if (n > 0) return absl::OkStatus();
  // Files written by old upstream versions hold only the container ID.
  return ReleaseOwner(TrimSpace(id)).status();
}

absl::Status Store::ReleaseIp(absl::string_view id, absl::string_view ifname,
                              const net::IpAddress& ip) {
  return ReleaseIfOwned(OwnerKey(id, ifname), AddressText(ip)).status();
}

absl::StatusOr<std::vector<Reservation>> Store::Scan() {
  ASSIGN_OR_RETURN(std::vector<std::string> names, ListReservationNames(dir_fd_.get(), dir_));
  std::vector<Reservation> out;
  out.reserve(names.size());
  for (std::string& name : names) {
    absl::StatusOr<std::optional<std::string>> content = ReadFileAt(dir_fd_.get(), name);
    // Unreadable files (e.g. a directory named like an IP) are skipped, as upstream does.
    if (!content.ok() || !content->has_value()) continue;
    out.push_back({std::move(name), std::string(TrimSpace(**content))});
  }
  return out;
}

absl::Status Store::ReleaseReservations(const std::vector<Reservation>& victims) {
  absl::Status first_error;
  for (const Reservation& r : victims) {
    absl::StatusOr<bool> done = ReleaseIfOwned(r.owner, r.ip_text);
    if (!done.ok() && first_error.ok()) first_error = done.status();
  }
  return first_error;
}

absl::StatusOr<IpAddressSet> Store::ReservedAddresses() {
  ASSIGN_OR_RETURN(std::vector<std::string> names, ListReservationNames(dir_fd_.get(), dir_));
  IpAddressSet out;
  out.reserve(names.size());
  for (const std::string& name : names) {
    if (std::optional<net::IpAddress> ip = ParseName(name)) out.insert(*ip);
  }
  return out;
}

}  // namespace cni::hostlocal

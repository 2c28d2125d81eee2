// Files, the one way: an owned descriptor, bounded reads of files a
// configuration names, one atomic writer for every state file, directory
// listing, mkdir -p.
//
// Every failure is code 5 (I/O) and carries the errno (cni::ErrnoOf), so
// callers test ENOENT or EEXIST, never message text.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cni {

// An owned file descriptor, closed when it goes out of scope (DESIGN rule 6).
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }  // -1 when empty; still owned
  bool valid() const { return fd_ >= 0; }  // owns an open descriptor
  // Gives up ownership: the caller closes the returned descriptor.
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  // Closes the current descriptor (if any) and owns `fd` instead.
  void reset(int fd = -1);
  // Closes now and reports close(2)'s error, which matters after writes (NFS,
  // quota): the destructor has nowhere to report it.
  absl::Status Close();

 private:
  int fd_ = -1;
};

// Code 5 "<op> <name>: <strerror(err)>", carrying `err`.
absl::Status IoError(absl::string_view op, absl::string_view name, int err);

// open(2) with O_CLOEXEC added; a failure is IoError("opening", path, errno).
absl::StatusOr<UniqueFd> OpenFile(const std::string& path, int flags, mode_t mode = 0);

// Opens `path` read-only and takes an exclusive flock(2) on it, waiting for
// a holder to let go; the lock lasts until the returned descriptor is closed.
// Serialises plugin runs that change one shared object (sbr locks the
// container's namespace file, as upstream does). Failures are code 5.
absl::StatusOr<UniqueFd> LockFile(const std::string& path);

// Writes all of `data`, past short writes and EINTR.
absl::Status WriteAll(int fd, absl::string_view data, absl::string_view name);

// The largest file a plugin reads because a configuration names it
// (resolvConf, subnet files, ...): far above any real one.
inline constexpr size_t kMaxConfigFileBytes = 1 << 20;

// Reads a file a configuration names. It must be a regular file (after
// following symlinks: /etc/resolv.conf often is one) of at most `max_bytes`;
// a device, FIFO or directory is refused before anything is read, so
// "/dev/zero" cannot make a plugin read for ever (errno EINVAL, or EISDIR for
// a directory; EFBIG when too large). ENOENT is reported like any other
// failure; see ReadRegularFileIfExists.
absl::StatusOr<std::string> ReadRegularFile(const std::string& path,
                                            size_t max_bytes = kMaxConfigFileBytes);
// The same, but a missing file is nullopt.
absl::StatusOr<std::optional<std::string>> ReadRegularFileIfExists(
    const std::string& path, size_t max_bytes = kMaxConfigFileBytes);

// The temporary name WriteFileAtomic writes before renaming: "<path>~". It is
// fixed (not per process) so that DEL and GC can remove one a killed writer
// left behind (RemoveFileAndTemp); "~" is not valid in a container ID or
// network name, so it never collides with a state file's own name. Writers of
// one path must be serialized (every state file belongs to one attachment).
std::string TempPathFor(absl::string_view path);

// How WriteFileAtomic creates what it writes.
struct AtomicWriteOptions {
  mode_t mode = 0600;        // the file's mode, whatever the umask
  bool make_parents = false;  // mkdir -p the directory when it is missing
  mode_t parent_mode = 0755;  // for directories it creates
};

// Replaces `path` with `data` atomically: readers see the old or the new
// content, never a part. Writes "<path>~" (opened O_NOFOLLOW: a planted
// symlink there is removed, never written through), then renames it over
// `path` (which replaces a symlink at `path` rather than following it). On
// failure the temporary file is removed and `path` is unchanged.
absl::Status WriteFileAtomic(const std::string& path, absl::string_view data,
                             const AtomicWriteOptions& options = {});

// Removes `path` and a temporary file a killed writer may have left beside
// it. Missing files are success (DEL is idempotent).
absl::Status RemoveFileAndTemp(const std::string& path);

// The names in directory `path` (not "." or ".."), sorted, of every kind
// (files, directories, symlinks, a killed writer's "<name>~"): the caller
// decides what it reads. A missing directory is ENOENT (code 5, like every
// failure here); see ListDirectoryIfExists.
absl::StatusOr<std::vector<std::string>> ListDirectory(const std::string& path);
// The same, but a missing directory lists as empty (nothing stored yet).
absl::StatusOr<std::vector<std::string>> ListDirectoryIfExists(const std::string& path);

// mkdir -p: creates each missing component with `mode` (existing ones are
// kept as they are, as Go's os.MkdirAll does).
absl::Status MkdirAll(const std::string& path, mode_t mode);

}  // namespace cni

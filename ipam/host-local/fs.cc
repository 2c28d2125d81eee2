#include "fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/quoted.h"
#include "cni/base/status_macros.h"

namespace cni::hostlocal {


absl::StatusOr<std::optional<std::string>> ReadFileAt(int dir_fd, const std::string& name) {
  // O_NONBLOCK: a FIFO planted under a reservation's name must not block us.
  UniqueFd fd(openat(dir_fd, name.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (!fd.valid()) {
    if (errno == ENOENT) return std::optional<std::string>();
    return IoError("opening", Quoted(name), errno);
  }
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return IoError("reading", Quoted(name), errno);
  if (!S_ISREG(st.st_mode)) return IoError("reading", Quoted(name), EINVAL);
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd.get(), buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return IoError("reading", Quoted(name), errno);
    if (n == 0) break;
    if (out.size() + static_cast<size_t>(n) > kMaxConfigFileBytes) {
      return IoError("reading", Quoted(name), EFBIG);
    }
    out.append(buf, static_cast<size_t>(n));
  }
  return std::optional<std::string>(std::move(out));
}

absl::Status WriteFileAt(int dir_fd, const std::string& name, absl::string_view content, int mode) {
  const int flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW;
  UniqueFd fd(openat(dir_fd, name.c_str(), flags, mode));
  if (!fd.valid() && errno == ELOOP) {
    // Someone planted a symlink under our name: drop it, write a file of our own.
    if (unlinkat(dir_fd, name.c_str(), 0) != 0 && errno != ENOENT) {
      return IoError("writing", Quoted(name), errno);
    }
    fd.reset(openat(dir_fd, name.c_str(), flags | O_EXCL, mode));
  }
  if (!fd.valid()) return IoError("writing", Quoted(name), errno);
  RETURN_IF_ERROR(WriteAll(fd.get(), content, Quoted(name)));
  if (absl::Status closed = fd.Close(); !closed.ok()) {
    return IoError("writing", Quoted(name), ErrnoOf(closed));
  }
  return absl::OkStatus();
}

bool IsNotRegularFile(const absl::Status& status) {
  int err = ErrnoOf(status);
  return err == ELOOP || err == EINVAL;
}

absl::StatusOr<std::vector<DirEntry>> ListDirAt(int dir_fd, absl::string_view op,
                                                absl::string_view name) {
  // readdir needs a DIR of its own: it takes over (and closes) a duplicate.
  UniqueFd dup_fd(dup(dir_fd));
  if (!dup_fd.valid()) return IoError(op, Quoted(name), errno);
  std::unique_ptr<DIR, int (*)(DIR*)> dir(fdopendir(dup_fd.get()), closedir);
  if (dir == nullptr) return IoError(op, Quoted(name), errno);
  dup_fd.release();
  rewinddir(dir.get());
  std::vector<DirEntry> out;
  errno = 0;
  while (struct dirent* e = readdir(dir.get())) {
    absl::string_view n = e->d_name;
    if (n != "." && n != "..") out.push_back({std::string(n), e->d_type});
  }
  if (errno != 0) return IoError(op, Quoted(name), errno);
  return out;
}

absl::string_view TrimSpace(absl::string_view s) { return absl::StripAsciiWhitespace(s); }

}  // namespace cni::hostlocal

#include "cni/base/fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"

namespace cni {

void UniqueFd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

absl::Status UniqueFd::Close() {
  int fd = release();
  if (fd >= 0 && ::close(fd) != 0 && errno != EINTR) return ErrnoError(errno, "close");
  return absl::OkStatus();
}

absl::Status IoError(absl::string_view op, absl::string_view name, int err) {
  return WithErrno(Error(ErrorCode::kIoFailure,
                         absl::StrCat(op, " ", name, ": ", std::strerror(err))),
                   err);
}

absl::StatusOr<UniqueFd> OpenFile(const std::string& path, int flags, mode_t mode) {
  int fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
  if (fd < 0) return IoError("opening", path, errno);
  return UniqueFd(fd);
}

absl::StatusOr<UniqueFd> LockFile(const std::string& path) {
  ASSIGN_OR_RETURN(UniqueFd fd, OpenFile(path, O_RDONLY));
  while (::flock(fd.get(), LOCK_EX) != 0) {
    if (errno != EINTR) return IoError("locking", path, errno);
  }
  return fd;
}

absl::Status WriteAll(int fd, absl::string_view data, absl::string_view name) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return IoError("writing", name, errno);
    if (n == 0) return IoError("writing", name, EIO);
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

namespace {

absl::StatusOr<std::string> ReadOpened(int fd, const std::string& path, size_t max_bytes) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return IoError("reading", path, errno);
  if (!S_ISREG(st.st_mode)) {
    return WithErrno(Error(ErrorCode::kIoFailure, absl::StrCat("reading ", path, ": not a regular file")),
                     S_ISDIR(st.st_mode) ? EISDIR : EINVAL);
  }
  if (static_cast<size_t>(st.st_size) > max_bytes) {
    return WithErrno(Error(ErrorCode::kIoFailure,
                           absl::StrCat("reading ", path, ": larger than ", max_bytes, " bytes")),
                     EFBIG);
  }
  std::string out;
  char buf[8192];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return IoError("reading", path, errno);
    if (n == 0) return out;
    // The size can grow after fstat (a file being written): still bounded.
    if (out.size() + static_cast<size_t>(n) > max_bytes) {
      return WithErrno(Error(ErrorCode::kIoFailure,
                             absl::StrCat("reading ", path, ": larger than ", max_bytes, " bytes")),
                       EFBIG);
    }
    out.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace

absl::StatusOr<std::string> ReadRegularFile(const std::string& path, size_t max_bytes) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused by
  // the type check right after.
  absl::StatusOr<UniqueFd> fd = OpenFile(path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
  if (!fd.ok()) return IoError("reading", path, ErrnoOf(fd.status()));
  return ReadOpened(fd->get(), path, max_bytes);
}

absl::StatusOr<std::optional<std::string>> ReadRegularFileIfExists(const std::string& path,
                                                                   size_t max_bytes) {
  absl::StatusOr<std::string> text = ReadRegularFile(path, max_bytes);
  if (text.ok()) return std::optional<std::string>(*std::move(text));
  if (ErrnoOf(text.status()) == ENOENT) return std::optional<std::string>();
  return text.status();
}

std::string TempPathFor(absl::string_view path) { return absl::StrCat(path, "~"); }

absl::Status WriteFileAtomic(const std::string& path, absl::string_view data,
                             const AtomicWriteOptions& options) {
  const std::string tmp = TempPathFor(path);
  const int flags = O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW;
  absl::StatusOr<UniqueFd> fd = OpenFile(tmp, flags, options.mode);
  if (!fd.ok() && ErrnoOf(fd.status()) == ENOENT && options.make_parents) {
    const std::string dir = path.substr(0, path.rfind('/'));
    if (!dir.empty()) RETURN_IF_ERROR(MkdirAll(dir, options.parent_mode));
    fd = OpenFile(tmp, flags, options.mode);
  }
  if (!fd.ok() && ErrnoOf(fd.status()) == ELOOP) {
    // Someone planted a symlink at our temporary name: it is not ours to
    // follow, and the name is ours to use.
    ::unlink(tmp.c_str());
    fd = OpenFile(tmp, flags | O_EXCL, options.mode);
  }
  if (!fd.ok()) return IoError("writing", tmp, ErrnoOf(fd.status()));
  absl::Status st = WriteAll(fd->get(), data, tmp);
  // The mode regardless of the umask.
  if (st.ok() && ::fchmod(fd->get(), options.mode) != 0) st = IoError("writing", tmp, errno);
  if (absl::Status closed = fd->Close(); st.ok() && !closed.ok()) {
    st = IoError("writing", tmp, ErrnoOf(closed));
  }
  if (st.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) st = IoError("saving", path, errno);
  if (!st.ok()) ::unlink(tmp.c_str());
  return st;
}

absl::Status RemoveFileAndTemp(const std::string& path) {
  absl::Status st;
  for (const std::string& name : {path, TempPathFor(path)}) {
    if (::unlink(name.c_str()) != 0 && errno != ENOENT && st.ok()) st = IoError("removing", name, errno);
  }
  return st;
}

absl::Status MkdirAll(const std::string& path, mode_t mode) {
  if (path.empty()) return absl::OkStatus();
  for (size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
    const std::string prefix = path.substr(0, slash);
    if (::mkdir(prefix.c_str(), mode) != 0 && errno != EEXIST) {
      return IoError("creating directory", prefix, errno);
    }
    if (slash == std::string::npos) break;
  }
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return IoError("creating directory", path, errno);
  if (!S_ISDIR(st.st_mode)) return IoError("creating directory", path, ENOTDIR);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> ListDirectory(const std::string& path) {
  std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(path.c_str()), ::closedir);
  if (dir == nullptr) return IoError("listing", path, errno);
  std::vector<std::string> names;
  for (;;) {
    errno = 0;
    const dirent* e = ::readdir(dir.get());
    if (e == nullptr) break;
    absl::string_view name = e->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
  }
  if (errno != 0) return IoError("listing", path, errno);
  std::sort(names.begin(), names.end());
  return names;
}

absl::StatusOr<std::vector<std::string>> ListDirectoryIfExists(const std::string& path) {
  absl::StatusOr<std::vector<std::string>> names = ListDirectory(path);
  if (!names.ok() && ErrnoOf(names.status()) == ENOENT) return std::vector<std::string>();
  return names;
}

}  // namespace cni

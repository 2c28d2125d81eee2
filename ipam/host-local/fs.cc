#include "fs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "cni/error.h"

namespace cni::hostlocal {

Fd::~Fd() {
  if (fd_ >= 0) close(fd_);
}

Fd& Fd::operator=(Fd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) close(fd_);
    fd_ = o.release();
  }
  return *this;
}

absl::Status IoError(absl::string_view op, absl::string_view name, int err) {
  return Error(ErrorCode::kIoFailure, absl::StrCat(op, " \"", name, "\": ", std::strerror(err)));
}

absl::StatusOr<std::optional<std::string>> ReadFileAt(int dir_fd, const std::string& name) {
  Fd fd(openat(dir_fd, name.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd.valid()) {
    if (errno == ENOENT) return std::optional<std::string>();
    return IoError("opening", name, errno);
  }
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd.get(), buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return IoError("reading", name, errno);
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return std::optional<std::string>(std::move(out));
}

absl::Status WriteFileAt(int dir_fd, const std::string& name, absl::string_view content, int mode) {
  Fd fd(openat(dir_fd, name.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode));
  if (!fd.valid()) return IoError("writing", name, errno);
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = write(fd.get(), content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return IoError("writing", name, errno);
    done += static_cast<size_t>(n);
  }
  if (close(fd.release()) != 0) return IoError("writing", name, errno);
  return absl::OkStatus();
}

absl::Status MkdirAll(const std::string& path, int mode) {
  struct stat st;
  if (stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return absl::OkStatus();
    return IoError("creating directory", path, ENOTDIR);
  }
  size_t slash = path.find_last_of('/');
  if (slash != std::string::npos && slash > 0) {
    absl::Status parent = MkdirAll(path.substr(0, slash), mode);
    if (!parent.ok()) return parent;
  }
  if (mkdir(path.c_str(), static_cast<mode_t>(mode)) != 0 && errno != EEXIST) {
    return IoError("creating directory", path, errno);
  }
  return absl::OkStatus();
}

absl::string_view TrimSpace(absl::string_view s) { return absl::StripAsciiWhitespace(s); }

}  // namespace cni::hostlocal

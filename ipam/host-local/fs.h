// Small POSIX file helpers for the store: everything is relative to an open
// directory fd (openat & co.), so a long dataDir path is resolved once, and
// errors come back as statuses naming the file.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cni::hostlocal {

// An owned file descriptor, closed on destruction.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd();
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept;
  int get() const { return fd_; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  bool valid() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// An I/O failure (code 5) "<op> <name>: <strerror(err)>".
absl::Status IoError(absl::string_view op, absl::string_view name, int err);

// Reads a whole file; nullopt if it does not exist.
absl::StatusOr<std::optional<std::string>> ReadFileAt(int dir_fd, const std::string& name);

// Writes `content` to `name`, creating it with `mode` or truncating it (as Go's
// os.WriteFile does).
absl::Status WriteFileAt(int dir_fd, const std::string& name, absl::string_view content, int mode);

// mkdir -p with `mode` for each created component (like Go's os.MkdirAll).
absl::Status MkdirAll(const std::string& path, int mode);

// Go's strings.TrimSpace for the ASCII whitespace upstream can produce.
absl::string_view TrimSpace(absl::string_view s);

}  // namespace cni::hostlocal

#include "cni/net/netns.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <system_error>
#include <thread>

#include "absl/strings/str_cat.h"
#include "cni/error.h"

namespace cni::net {
namespace {

// Before Linux 3.19 namespace files lived on procfs rather than nsfs.
// Linux 5.14's socket option (older libc headers may lack it).
#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

#ifndef NSFS_MAGIC
#define NSFS_MAGIC 0x6e736673
#endif

absl::Status OpenError(int err, absl::string_view path) {
  std::string msg = absl::StrCat("opening netns \"", path, "\": ", std::strerror(err));
  if (err == ENOENT) {
    // Code 3 tells the runtime the container is gone; DEL treats it as done.
    return WithCode(absl::NotFoundError(msg), ErrorCode::kUnknownContainer);
  }
  return Error(ErrorCode::kIoFailure, msg);
}

absl::Status NotNetnsError(absl::string_view path, absl::string_view why) {
  return WithCode(absl::InvalidArgumentError(absl::StrCat(
                      "opening netns \"", path, "\": not a network namespace (", why, ")")),
                  ErrorCode::kInvalidEnvironment);
}

}  // namespace

Netns& Netns::operator=(Netns&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    dev_ = other.dev_;
    ino_ = other.ino_;
  }
  return *this;
}

Netns::~Netns() {
  if (fd_ >= 0) close(fd_);
}

absl::StatusOr<Netns> Netns::FromFd(int fd, std::string path) {
  struct statfs sfs;
  if (fstatfs(fd, &sfs) != 0) {
    int err = errno;
    close(fd);
    return OpenError(err, path);
  }
  if (static_cast<unsigned long>(sfs.f_type) != NSFS_MAGIC &&
      static_cast<unsigned long>(sfs.f_type) != PROC_SUPER_MAGIC) {
    close(fd);
    return NotNetnsError(path, "not a namespace file");
  }
  // nsfs also holds mount, pid, uts... namespaces: ask which kind this is.
  // Kernels before 4.11 lack NS_GET_NSTYPE (ENOTTY); the magic check must do there.
  int type = ioctl(fd, NS_GET_NSTYPE);
  if (type < 0 && errno != ENOTTY) {
    int err = errno;
    close(fd);
    return OpenError(err, path);
  }
  if (type >= 0 && type != CLONE_NEWNET) {
    close(fd);
    return NotNetnsError(path, "a namespace of another kind");
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int err = errno;
    close(fd);
    return OpenError(err, path);
  }
  return Netns(fd, std::move(path), st.st_dev, st.st_ino);
}

absl::StatusOr<Netns> Netns::Open(absl::string_view path) {
  std::string p(path);
  if (p.empty()) return NotNetnsError(p, "empty path");
  int fd = open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return OpenError(errno, p);
  return FromFd(fd, std::move(p));
}

absl::StatusOr<Netns> Netns::Current() {
  // thread-self, not self: the namespace is a per-thread property.
  return Open("/proc/thread-self/ns/net");
}

absl::StatusOr<Netns> Netns::Dup() const {
  int fd = fcntl(fd_, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return OpenError(errno, path_);
  return Netns(fd, path_, dev_, ino_);
}

absl::Status Netns::Run(const std::function<absl::Status()>& fn) const {
  absl::Status result;
  // The thread enters the namespace and then ends; the caller's thread is never
  // moved, so nothing has to be restored afterwards.
  try {
    std::thread worker([&] {
      if (setns(fd_, CLONE_NEWNET) != 0) {
        result = Error(ErrorCode::kIoFailure,
                       absl::StrCat("entering netns \"", path_, "\": ", std::strerror(errno)));
        return;
      }
      // An exception must not escape a std::thread (that would terminate).
      try {
        result = fn();
      } catch (const std::exception& e) {
        result = absl::InternalError(absl::StrCat("in netns \"", path_, "\": ", e.what()));
      }
    });
    worker.join();
  } catch (const std::system_error& e) {  // thread creation failed (e.g. EAGAIN)
    return Error(ErrorCode::kIoFailure,
                 absl::StrCat("starting a thread for netns \"", path_, "\": ", e.what()));
  }
  return result;
}

absl::StatusOr<uint64_t> CurrentNetnsCookie() {
  // Any socket will do: it belongs to the namespace of the thread making it.
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Error(ErrorCode::kInternal, absl::StrCat("socket: ", std::strerror(errno)));
  uint64_t cookie = 0;
  socklen_t len = sizeof(cookie);
  int rc = getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &len);
  int err = errno;
  close(fd);
  if (rc != 0) {
    return Error(ErrorCode::kInternal, absl::StrCat("reading the network namespace cookie: ", std::strerror(err)));
  }
  return cookie;
}

}  // namespace cni::net

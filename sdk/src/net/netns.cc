#include "cni/net/netns.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <linux/nsfs.h>
#include <linux/sockios.h>
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
#include "cni/base/error.h"
#include "cni/base/fs.h"

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

absl::StatusOr<Netns> Netns::FromFd(UniqueFd fd, std::string path) {
  struct statfs sfs;
  if (fstatfs(fd.get(), &sfs) != 0) return OpenError(errno, path);
  if (static_cast<unsigned long>(sfs.f_type) != NSFS_MAGIC &&
      static_cast<unsigned long>(sfs.f_type) != PROC_SUPER_MAGIC) {
    return NotNetnsError(path, "not a namespace file");
  }
  // nsfs also holds mount, pid, uts... namespaces: ask which kind this is.
  // Kernels before 4.11 lack NS_GET_NSTYPE (ENOTTY); the magic check must do there.
  int type = ioctl(fd.get(), NS_GET_NSTYPE);
  if (type < 0 && errno != ENOTTY) return OpenError(errno, path);
  if (type >= 0 && type != CLONE_NEWNET) return NotNetnsError(path, "a namespace of another kind");
  return Identified(std::move(fd), std::move(path));
}

absl::StatusOr<Netns> Netns::Identified(UniqueFd fd, std::string path) {
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return OpenError(errno, path);
  return Netns(std::move(fd), std::move(path), st.st_dev, st.st_ino);
}

absl::StatusOr<Netns> Netns::Open(absl::string_view path) {
  std::string p(path);
  if (p.empty()) return NotNetnsError(p, "empty path");
  UniqueFd fd(open(p.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return OpenError(errno, p);
  return FromFd(std::move(fd), std::move(p));
}

absl::StatusOr<std::optional<Netns>> OpenNetnsForTeardown(absl::string_view path) {
  if (path.empty()) return std::nullopt;
  absl::StatusOr<Netns> ns = Netns::Open(path);
  if (absl::IsNotFound(ns.status())) return std::nullopt;
  if (!ns.ok()) return ns.status();
  return std::optional<Netns>(*std::move(ns));
}

absl::StatusOr<Netns> Netns::OfSocket(int sock_fd, std::string label) {
  UniqueFd fd(ioctl(sock_fd, SIOCGSKNS));
  if (!fd.valid()) return ErrnoError(errno, "asking a socket for its network namespace");
  return Identified(std::move(fd), std::move(label));
}

absl::StatusOr<Netns> Netns::Current() {
  // thread-self, not self: the namespace is a per-thread property. Asked of a
  // socket first, so that no /proc/<pid>/task/<tid> entry is looked up: a
  // Netns::Run thread that does leaves proc dentries behind, and when the
  // runtime reaps the process the kernel invalidates them in the reaper
  // (wait4 -> release_task -> proc_flush_pid -> shrink_dcache_parent), which
  // loops until the exiting thread has let go of them. With the reaper on the
  // exiting thread's CPU that loop ran for the rest of its time slice: a
  // tuning ADD took 4.0 ms instead of 0.9 with the runtime and the plugin on
  // one CPU (README, "Sharing a CPU with the runtime"). SIOCGSKNS needs
  // CAP_NET_ADMIN over the namespace (and Linux 4.9); without it, /proc.
  std::string path = "/proc/thread-self/ns/net";
  UniqueFd probe(socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (probe.valid()) {
    absl::StatusOr<Netns> ns = OfSocket(probe.get(), path);
    if (ns.ok()) return ns;
  }
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return OpenError(errno, path);
  return Identified(std::move(fd), std::move(path));
}

absl::StatusOr<Netns> Netns::Dup() const {
  UniqueFd fd(fcntl(fd_.get(), F_DUPFD_CLOEXEC, 0));
  if (!fd.valid()) return OpenError(errno, path_);
  return Netns(std::move(fd), path_, dev_, ino_);
}

absl::Status Netns::Run(const std::function<absl::Status()>& fn) const {
  absl::Status result;
  // The thread enters the namespace and then ends; the caller's thread is never
  // moved, so nothing has to be restored afterwards.
  try {
    std::thread worker([&] {
      if (setns(fd_.get(), CLONE_NEWNET) != 0) {
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
  UniqueFd fd(socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return ErrnoError(errno, "socket");
  uint64_t cookie = 0;
  socklen_t len = sizeof(cookie);
  if (getsockopt(fd.get(), SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &len) != 0) {
    return ErrnoError(errno, "reading the network namespace cookie");
  }
  return cookie;
}

}  // namespace cni::net

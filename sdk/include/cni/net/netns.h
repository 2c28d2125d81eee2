// Network namespaces: a handle that owns the namespace fd, and the one safe way
// to do work inside a namespace.
//
// Rule (DESIGN.md, "Namespaces"): never setns() on a thread that outlives the
// work. Netns::Run starts a fresh thread, enters the namespace there, runs the
// function and lets the thread end, so a thread can never be left behind in the
// wrong namespace and there is no "failed to switch back" state. Prefer to enter
// only to open a netlink socket (see netlink.h) and drive that from anywhere.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/base/fs.h"

namespace cni::net {

// An open network namespace: owns its fd (O_CLOEXEC) and remembers the path it
// was opened from and its device/inode. Move-only.
class Netns {
 public:
  // Opens `path` (e.g. CNI_NETNS, "/run/netns/x", "/proc/123/ns/net") and checks
  // that it is a network namespace. Errors name the path:
  //   missing path            -> code 3 (unknown container), absl NotFound
  //   not a network namespace -> code 4 (CNI_NETNS is wrong), InvalidArgument
  //   any other open failure  -> code 5 (I/O failure)
  static absl::StatusOr<Netns> Open(absl::string_view path);

  // The namespace of the calling thread. Learnt from a socket (SIOCGSKNS),
  // without looking up /proc/thread-self (netns.cc says why); from /proc only
  // when the kernel refuses (no CAP_NET_ADMIN over the namespace).
  static absl::StatusOr<Netns> Current();

  // The namespace socket `sock_fd` belongs to (SIOCGSKNS: Linux 4.9, and
  // CAP_NET_ADMIN over that namespace; else an error). `label` is its path()
  // for messages.
  static absl::StatusOr<Netns> OfSocket(int sock_fd, std::string label);

  // Move-only: one owner per fd, closed with the handle (the namespace itself
  // lives on while others refer to it). Dup() makes a second handle; a
  // moved-from handle has fd() == -1.
  Netns(Netns&& other) noexcept = default;
  Netns& operator=(Netns&& other) noexcept = default;
  Netns(const Netns&) = delete;
  Netns& operator=(const Netns&) = delete;

  // Another handle on the same namespace (dup of the fd).
  absl::StatusOr<Netns> Dup() const;

  // The namespace fd, still owned by this handle (e.g. for IFLA_NET_NS_FD).
  int fd() const { return fd_.get(); }
  // The path it was opened from, for messages ("/proc/thread-self/ns/net" for Current()).
  const std::string& path() const { return path_; }
  // Device of the namespace file (with ino(), the namespace's identity).
  dev_t dev() const { return dev_; }
  // Inode of the namespace file (with dev(), the namespace's identity).
  ino_t ino() const { return ino_; }

  // Runs `fn` on a new thread that has entered this namespace, waits for it and
  // returns its status. A failed setns is reported as an error (code 5) and `fn`
  // is not called. Only the network namespace is entered; the thread shares the
  // process's mounts, so /proc/sys/net opened there belongs to this namespace.
  absl::Status Run(const std::function<absl::Status()>& fn) const;

  // Run() for functions that return a value.
  template <typename T>
  absl::StatusOr<T> RunFor(const std::function<absl::StatusOr<T>()>& fn) const {
    std::optional<absl::StatusOr<T>> out;
    absl::Status st = Run([&]() -> absl::Status {
      out.emplace(fn());
      return absl::OkStatus();
    });
    if (!st.ok()) return st;
    return std::move(*out);
  }

  // True when both handles refer to the same namespace (device and inode).
  static bool Same(const Netns& a, const Netns& b) {
    return a.dev_ == b.dev_ && a.ino_ == b.ino_;
  }

 private:
  Netns(UniqueFd fd, std::string path, dev_t dev, ino_t ino)
      : fd_(std::move(fd)), path_(std::move(path)), dev_(dev), ino_(ino) {}
  // Validates `fd` as a network namespace (closed on failure).
  static absl::StatusOr<Netns> FromFd(UniqueFd fd, std::string path);
  // `fd` with its identity (device and inode, for Same), unchecked.
  static absl::StatusOr<Netns> Identified(UniqueFd fd, std::string path);

  UniqueFd fd_;
  std::string path_;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
};

// DEL's way into the container: the namespace at `path`, or nullopt when
// `path` is empty or names a namespace that is gone (nothing is left to undo
// there). Any other failure to open it is an error.
absl::StatusOr<std::optional<Netns>> OpenNetnsForTeardown(absl::string_view path);

// The cookie of the calling thread's network namespace: a 64-bit number the
// kernel gives each namespace and never gives another until reboot (unlike the
// nsfs inode, which is reused once the namespace is gone). State that belongs
// to a namespace's kernel objects, e.g. remembered nftables handles, is keyed
// by it. Linux 5.14 and later (SO_NETNS_COOKIE); code 999 before.
absl::StatusOr<uint64_t> CurrentNetnsCookie();

}  // namespace cni::net

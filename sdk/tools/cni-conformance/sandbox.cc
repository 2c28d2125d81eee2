#include "sandbox.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <thread>

#include "absl/strings/str_cat.h"
#include "cni/net/link.h"
#include "cni/net/netlink.h"
#include "cni/net/netns.h"

namespace conformance {
namespace {

absl::Status Errno(absl::string_view what) {
  return absl::InternalError(absl::StrCat(what, ": ", std::strerror(errno)));
}

absl::Status MountTmpfs(const std::string& dir) {
  if (mount("tmpfs", dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0) {
    return Errno(absl::StrCat("mounting a private tmpfs on ", dir));
  }
  return absl::OkStatus();
}

bool Under(const std::string& path, const std::string& dir) {
  return path == dir || path.rfind(dir + "/", 0) == 0;
}

}  // namespace

absl::Status EnterPrivateHost(const std::vector<std::string>& data_dirs) {
  if (geteuid() != 0) return absl::PermissionDeniedError("cni-conformance must run as root");
  if (unshare(CLONE_NEWNET | CLONE_NEWNS) != 0) return Errno("unshare(CLONE_NEWNET|CLONE_NEWNS)");
  // Private propagation first, or the mounts below would appear on the machine.
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return Errno("making / private");
  umount2("/sys", MNT_DETACH);  // not mounted is fine
  if (mount("sysfs", "/sys", "sysfs", 0, nullptr) != 0) return Errno("remounting /sys");
  if (absl::Status s = MountTmpfs("/run"); !s.ok()) return s;
  // /var/lib/cni when it exists; else a tmpfs on /var/lib holds a fresh one,
  // so that nothing is created on the machine's own disk.
  std::error_code ec;
  if (std::filesystem::is_directory("/var/lib/cni", ec)) {
    if (absl::Status s = MountTmpfs("/var/lib/cni"); !s.ok()) return s;
  } else {
    if (absl::Status s = MountTmpfs("/var/lib"); !s.ok()) return s;
    if (mkdir("/var/lib/cni", 0755) != 0) return Errno("creating /var/lib/cni");
  }
  for (const std::string& dir : data_dirs) {
    if (Under(dir, "/run") || Under(dir, "/var/lib/cni")) {
      std::filesystem::create_directories(dir, ec);
      if (ec) return absl::InternalError(absl::StrCat("creating ", dir, ": ", ec.message()));
      continue;
    }
    if (!std::filesystem::is_directory(dir, ec)) {
      return absl::InvalidArgumentError(absl::StrCat("--data-dir ", dir,
                                                     ": not a directory (outside /run and /var/lib/cni it must exist)"));
    }
    if (absl::Status s = MountTmpfs(dir); !s.ok()) return s;
  }
  if (mkdir(kToolDir, 0755) != 0) return Errno(absl::StrCat("creating ", kToolDir));
  if (mkdir(absl::StrCat(kToolDir, "/netns").c_str(), 0755) != 0) return Errno("creating the netns directory");
  absl::StatusOr<cni::net::NetlinkSocket> sock = cni::net::NetlinkSocket::Open();
  if (!sock.ok()) return sock.status();
  absl::StatusOr<cni::net::LinkInfo> lo = cni::net::LinkByName(*sock, "lo");
  if (!lo.ok()) return lo.status();
  return cni::net::SetLinkUp(*sock, *lo);
}

Sandboxes::~Sandboxes() {
  for (const std::string& path : std::vector<std::string>(pinned_)) (void)Remove(path);
}

absl::StatusOr<std::string> Sandboxes::Create() {
  std::string path = absl::StrCat(kToolDir, "/netns/ctr", ++counter_);
  int fd = open(path.c_str(), O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
  if (fd < 0) return Errno(absl::StrCat("creating ", path));
  close(fd);
  // A throwaway thread makes the namespace and pins it with a bind mount of
  // its own namespace file; the main thread never changes namespace.
  int err = 0;
  std::thread([&] {
    if (unshare(CLONE_NEWNET) != 0 ||
        mount("/proc/thread-self/ns/net", path.c_str(), nullptr, MS_BIND, nullptr) != 0) {
      err = errno;
    }
  }).join();
  if (err != 0) {
    unlink(path.c_str());
    errno = err;
    return Errno(absl::StrCat("creating network namespace ", path));
  }
  pinned_.push_back(path);
  return path;
}

absl::Status Sandboxes::Remove(const std::string& path) {
  std::erase(pinned_, path);
  if (umount2(path.c_str(), MNT_DETACH) != 0 && errno != EINVAL && errno != ENOENT) {
    return Errno(absl::StrCat("unmounting ", path));
  }
  if (unlink(path.c_str()) != 0 && errno != ENOENT) return Errno(absl::StrCat("removing ", path));
  return absl::OkStatus();
}

std::string HostVethPeer(const std::string& name) { return (name + "-p").substr(0, 15); }

absl::Status CreateHostVeth(const std::string& name) {
  absl::StatusOr<cni::net::NetlinkSocket> sock = cni::net::NetlinkSocket::Open();
  if (!sock.ok()) return sock.status();
  std::string peer = HostVethPeer(name);
  if (absl::Status s = cni::net::CreateVeth(*sock, {.name = name, .peer_name = peer}); !s.ok()) return s;
  for (const std::string& n : {name, peer}) {
    absl::StatusOr<cni::net::LinkInfo> link = cni::net::LinkByName(*sock, n);
    if (!link.ok()) return link.status();
    if (absl::Status s = cni::net::SetLinkUp(*sock, *link); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace conformance

#include "cni/testing/netns.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip_icmp.h>
#include <poll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include "cni/net/netns.h"

namespace cni::testing {
namespace {

constexpr const char* kNetnsDir = "/run/netns";
// Where plugins keep state: in the private /run, and under /var/lib/cni.
constexpr const char* kStateDirs[] = {"/run/cni", "/var/lib/cni"};
constexpr const char* kVarLibCni = "/var/lib/cni";

[[noreturn]] void Fail(const std::string& what) {
  throw std::runtime_error("netns fixture: " + what + ": " + std::strerror(errno));
}

ino_t NetnsInode() {
  struct stat st;
  if (stat("/proc/thread-self/ns/net", &st) != 0) Fail("stat /proc/thread-self/ns/net");
  return st.st_ino;
}

// Brings lo up with the classic ioctl: the fixture should not depend on the
// netlink code it is used to test.
void LoopbackUp() {
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) Fail("socket for lo");
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
  if (ioctl(fd, SIOCGIFFLAGS, &ifr) != 0) {
    close(fd);
    Fail("SIOCGIFFLAGS lo");
  }
  ifr.ifr_flags |= IFF_UP;
  int rc = ioctl(fd, SIOCSIFFLAGS, &ifr);
  close(fd);
  if (rc != 0) Fail("SIOCSIFFLAGS lo");
}

std::vector<std::string> LinkNamesHere() {
  std::vector<std::string> names;
  if (struct if_nameindex* list = if_nameindex()) {
    for (struct if_nameindex* p = list; p->if_index != 0; ++p) names.emplace_back(p->if_name);
    if_freenameindex(list);
  }
  std::sort(names.begin(), names.end());
  return names;
}

uint16_t Checksum(const uint8_t* data, size_t len) {
  uint32_t sum = 0;
  for (size_t i = 0; i + 1 < len; i += 2) sum += static_cast<uint32_t>(data[i] << 8 | data[i + 1]);
  if (len % 2) sum += static_cast<uint32_t>(data[len - 1] << 8);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return htons(static_cast<uint16_t>(~sum));
}

// /var/lib/cni (host-local's leases, a runtime's result cache) private to
// this mount namespace and empty. Where the machine has that directory, a
// tmpfs goes over it. Where it has none, creating it would leave a trace on
// the machine, so /var/lib becomes an overlay whose writes land in the private
// /run: the rest of /var/lib stays readable, and nothing is written to it.
// Without overlayfs (or without /var/lib, as in a minimal VM guest) a tmpfs
// goes over /var/lib, or /var, instead: private too, but it hides the rest.
void PrivateVarLibCni() {
  struct stat st;
  if (stat(kVarLibCni, &st) == 0) {
    if (mount("tmpfs", kVarLibCni, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0) {
      Fail("mounting a private tmpfs on /var/lib/cni");
    }
    return;
  }
  const std::string upper = "/run/.cni-testing-var-lib", work = "/run/.cni-testing-var-lib-work";
  const std::string options = "lowerdir=/var/lib,upperdir=" + upper + ",workdir=" + work;
  bool private_var_lib = stat("/var/lib", &st) == 0 && mkdir(upper.c_str(), 0755) == 0 &&
                         mkdir(work.c_str(), 0755) == 0 &&
                         mount("overlay", "/var/lib", "overlay", MS_NOSUID | MS_NODEV, options.c_str()) == 0;
  for (const char* dir : {"/var/lib", "/var"}) {
    if (private_var_lib) break;
    private_var_lib = stat(dir, &st) == 0 &&
                      mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") == 0;
  }
  if (!private_var_lib) Fail("making /var/lib private (overlay, or a tmpfs on /var/lib or /var)");
  std::error_code ec;
  std::filesystem::create_directories(kVarLibCni, ec);
  if (ec) {
    errno = ec.value();
    Fail("creating /var/lib/cni in the private /var/lib");
  }
}

// host-local's per-network files, which outlive every attachment by design
// (upstream's too): its lock, the last address handed out per range, and
// cni-cpp's index of the store. An address's reservation is not among them.
bool IpamBookkeeping(const std::filesystem::path& file) {
  const std::string name = file.filename().string();
  return name == "lock" || name.rfind("last_reserved_ip.", 0) == 0 ||
         file.parent_path().filename() == ".cni-cpp-index";
}

}  // namespace

NetnsFixture::NetnsFixture() {
  if (geteuid() != 0) {
    throw std::runtime_error("netns fixture: namespace tests must run as root");
  }
  ino_t before = NetnsInode();
  // Only the calling thread moves; test code runs on this (main) thread and
  // threads it starts later inherit the new namespaces.
  if (unshare(CLONE_NEWNET | CLONE_NEWNS) != 0) Fail("unshare(CLONE_NEWNET|CLONE_NEWNS)");
  if (NetnsInode() == before) {
    errno = EINVAL;
    Fail("still in the original network namespace after unshare");
  }
  // Private propagation first: without it, the mounts below (and every
  // namespace pinned by AddNetns) would show up on the machine.
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) Fail("making / private");
  // A sysfs mount shows the network namespace of whoever mounted it.
  umount2("/sys", MNT_DETACH);  // may fail if /sys was not mounted; fine
  if (mount("sysfs", "/sys", "sysfs", 0, nullptr) != 0) Fail("remounting /sys");
  // A private /run: named namespaces (/run/netns) and the state plugins keep
  // there (/run/cni) never appear on the machine and die with the process,
  // and two tests never see each other's.
  if (mount("tmpfs", "/run", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0) {
    Fail("mounting a private tmpfs on /run");
  }
  if (mkdir(kNetnsDir, 0755) != 0) Fail("creating /run/netns");
  PrivateVarLibCni();
  LoopbackUp();
  host_netns_ = "/proc/" + std::to_string(getpid()) + "/task/" +
                std::to_string(syscall(SYS_gettid)) + "/ns/net";
}

NetnsFixture::~NetnsFixture() {
  for (const std::string& path : std::vector<std::string>(created_)) {
    try {
      DelNetns(path);
    } catch (...) {
      // Destructors must not throw; the process exit drops the mount anyway.
    }
  }
}

std::string NetnsFixture::AddNetns(const std::string& name) {
  std::string n = name.empty() ? "cni-test-" + std::to_string(++counter_) : name;
  std::string path = std::string(kNetnsDir) + "/" + n;
  int fd = open(path.c_str(), O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
  if (fd < 0) Fail("creating " + path);
  close(fd);
  // A helper thread makes the namespace and pins it with a bind mount of its
  // own ns file; when the thread ends, the mount keeps the namespace alive.
  int err = 0;
  std::thread([&] {
    if (unshare(CLONE_NEWNET) != 0) {
      err = errno;
      return;
    }
    if (mount("/proc/thread-self/ns/net", path.c_str(), nullptr, MS_BIND, nullptr) != 0) {
      err = errno;
    }
  }).join();
  if (err != 0) {
    unlink(path.c_str());
    errno = err;
    Fail("creating netns " + path);
  }
  created_.push_back(path);
  return path;
}

void NetnsFixture::DelNetns(const std::string& path) {
  auto it = std::find(created_.begin(), created_.end(), path);
  if (it != created_.end()) created_.erase(it);
  if (umount2(path.c_str(), MNT_DETACH) != 0 && errno != EINVAL && errno != ENOENT) {
    Fail("unmounting " + path);
  }
  if (unlink(path.c_str()) != 0 && errno != ENOENT) Fail("removing " + path);
}

RunResult NetnsFixture::Exec(const std::string& netns_path, const std::vector<std::string>& argv,
                             int timeout_ms) const {
  std::vector<std::string> full;
  if (!netns_path.empty()) {
    // nsenter enters only the network namespace, then execs argv via PATH.
    full = {FindProgram("nsenter"), "--net=" + netns_path, "--"};
    full.insert(full.end(), argv.begin(), argv.end());
  } else {
    full = argv;
    if (!full.empty()) full[0] = FindProgram(full[0]);
  }
  return RunProcess(full, {kTestPath}, "", timeout_ms);
}

std::vector<std::string> NetnsFixture::Links(const std::string& netns_path) const {
  if (netns_path.empty()) return LinkNamesHere();
  absl::StatusOr<net::Netns> ns = net::Netns::Open(netns_path);
  if (!ns.ok()) throw std::runtime_error(std::string(ns.status().message()));
  std::vector<std::string> names;
  absl::Status st = ns->Run([&] {
    names = LinkNamesHere();
    return absl::OkStatus();
  });
  if (!st.ok()) throw std::runtime_error(std::string(st.message()));
  return names;
}

std::vector<std::string> NetnsFixture::Leftovers() const {
  std::vector<std::string> left;
  for (const std::string& link : LinkNamesHere()) {
    if (link != "lo") left.push_back("host link " + link);
  }
  for (const std::string& path : created_) left.push_back("netns " + path);
  // State files (e.g. portmap's records) that DEL should have removed.
  for (const char* dir : kStateDirs) {
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      if (!it->is_directory() && !IpamBookkeeping(it->path())) {
        left.push_back("state file " + it->path().string());
      }
    }
  }
  return left;
}

bool Ping(const std::string& netns_path, const net::IpAddress& dst, int timeout_ms) {
  const bool v4 = dst.is_v4();
  auto open_socket = [v4]() -> int {
    int proto = v4 ? static_cast<int>(IPPROTO_ICMP) : static_cast<int>(IPPROTO_ICMPV6);
    return socket(v4 ? AF_INET : AF_INET6, SOCK_RAW | SOCK_CLOEXEC, proto);
  };
  int fd = -1;
  if (netns_path.empty()) {
    fd = open_socket();
  } else {
    // A socket stays in the namespace it was created in.
    absl::StatusOr<net::Netns> ns = net::Netns::Open(netns_path);
    if (!ns.ok()) return false;
    (void)ns->Run([&] {
      fd = open_socket();
      return absl::OkStatus();
    });
  }
  if (fd < 0) return false;

  sockaddr_storage to{};
  socklen_t to_len;
  if (v4) {
    auto* sin = reinterpret_cast<sockaddr_in*>(&to);
    sin->sin_family = AF_INET;
    std::memcpy(&sin->sin_addr, dst.data(), 4);
    to_len = sizeof(sockaddr_in);
  } else {
    auto* sin6 = reinterpret_cast<sockaddr_in6*>(&to);
    sin6->sin6_family = AF_INET6;
    std::memcpy(&sin6->sin6_addr, dst.data(), 16);
    to_len = sizeof(sockaddr_in6);
  }
  const uint16_t id = static_cast<uint16_t>(getpid());
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  bool replied = false;
  for (uint16_t seq = 1; !replied && std::chrono::steady_clock::now() < deadline; ++seq) {
    // Echo request: type, code, checksum, identifier, sequence, payload.
    uint8_t pkt[16] = {};
    pkt[0] = static_cast<uint8_t>(v4 ? static_cast<int>(ICMP_ECHO) : static_cast<int>(ICMP6_ECHO_REQUEST));
    pkt[4] = static_cast<uint8_t>(id >> 8);
    pkt[5] = static_cast<uint8_t>(id);
    pkt[6] = static_cast<uint8_t>(seq >> 8);
    pkt[7] = static_cast<uint8_t>(seq);
    std::memcpy(pkt + 8, "cni-ping", 8);
    if (v4) {  // the kernel computes ICMPv6 checksums itself, not ICMPv4 ones
      uint16_t sum = Checksum(pkt, sizeof(pkt));
      std::memcpy(pkt + 2, &sum, 2);
    }
    sendto(fd, pkt, sizeof(pkt), 0, reinterpret_cast<sockaddr*>(&to), to_len);
    // Wait up to 200 ms for this round's reply, then send another request
    // (the first ones can be lost while neighbour discovery runs).
    auto round_end = std::min(deadline, std::chrono::steady_clock::now() +
                                            std::chrono::milliseconds(200));
    while (!replied) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                      round_end - std::chrono::steady_clock::now()).count();
      if (left <= 0) break;
      pollfd pfd{fd, POLLIN, 0};
      if (poll(&pfd, 1, static_cast<int>(left)) <= 0) continue;
      uint8_t buf[1500];
      ssize_t n = recv(fd, buf, sizeof(buf), 0);
      if (n <= 0) continue;
      const uint8_t* icmp = buf;
      size_t len = static_cast<size_t>(n);
      if (v4) {  // raw IPv4 sockets deliver the IP header too
        size_t ihl = static_cast<size_t>(buf[0] & 0x0f) * 4;
        if (len < ihl + 8) continue;
        icmp += ihl;
        len -= ihl;
      }
      if (len < 8) continue;
      int want = v4 ? static_cast<int>(ICMP_ECHOREPLY) : static_cast<int>(ICMP6_ECHO_REPLY);
      uint16_t got_id = static_cast<uint16_t>(icmp[4] << 8 | icmp[5]);
      if (icmp[0] == want && got_id == id) replied = true;
    }
  }
  close(fd);
  return replied;
}

}  // namespace cni::testing

// cni_thread_cost: what entering a namespace costs a fresh process. A plugin
// enters the container's namespace on a thread of its own (Netns::Run;
// DESIGN.md: never setns() on the main thread), and a plugin process is
// short-lived, so every call pays for its first thread: its stack, its malloc
// arena, its start and its exit.
//
// It runs itself N times in each mode (cni::RunCommand, as the other bench
// programs run a plugin), the modes interleaved so that they see the same
// machine, and prints each mode's median time from start to reaped exit:
//   none    opens its own namespace (Netns::Open) and exits;
//   run     the same, then one Netns::Run of an empty function;
//   socket  the same, then NetlinkSocket::OpenIn (a Run that opens a socket).
// "run" minus "none" is the thread's cost per process. Linked as the plugins
// are (a static PIE), so it also runs in the VM tier's guest.
//
//   cni_thread_cost [N]     (default 1000)
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include "cni/base/exec.h"
#include "cni/net/netlink.h"
#include "cni/net/netns.h"

namespace {

constexpr const char* kModes[] = {"none", "run", "socket"};

// The child: one mode's work, then exit. Any failure is exit status 1, which
// the parent reports (a mode that failed would time nothing).
int Child(const char* mode) {
  absl::StatusOr<cni::net::Netns> ns = cni::net::Netns::Open("/proc/self/ns/net");
  if (!ns.ok()) return 1;
  if (std::strcmp(mode, "run") == 0) {
    if (!ns->Run([] { return absl::OkStatus(); }).ok()) return 1;
  } else if (std::strcmp(mode, "socket") == 0) {
    if (!cni::net::NetlinkSocket::OpenIn(*ns).ok()) return 1;
  }
  return 0;
}

// Microseconds from start to reaped exit; -1 when the child failed.
double TimeOne(const std::string& self, const char* mode) {
  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<cni::CommandResult> r = cni::RunCommand({self, "--child", mode}, {}, "");
  if (!r.ok() || r->exit_code != 0) return -1;
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--child") == 0) return Child(argv[2]);
  int n = argc > 1 ? std::atoi(argv[1]) : 1000;
  if (n <= 0) {
    std::fprintf(stderr, "usage: cni_thread_cost [N]\n");
    return 2;
  }
  // The child is this very binary. Its path is read once: a /proc lookup per
  // spawn would add /proc entries for the reaping to clear.
  char path[4096] = {};
  if (readlink("/proc/self/exe", path, sizeof(path) - 1) <= 0) {
    std::perror("cni_thread_cost: /proc/self/exe");
    return 1;
  }
  const std::string self = path;
  std::vector<std::vector<double>> times(std::size(kModes));
  for (int i = 0; i < n; ++i) {
    for (size_t m = 0; m < std::size(kModes); ++m) {
      double us = TimeOne(self, kModes[m]);
      if (us < 0) {
        std::fprintf(stderr, "cni_thread_cost: the %s child failed\n", kModes[m]);
        return 1;
      }
      times[m].push_back(us);
    }
  }
  for (size_t m = 0; m < std::size(kModes); ++m) {
    std::sort(times[m].begin(), times[m].end());
    std::printf("thread_cost %-6s median %6.0f us  (n=%d)\n", kModes[m], times[m][n / 2], n);
  }
  return 0;
}

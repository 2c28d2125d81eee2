// cni::testing (the plugin author's test kit): a private host network
// namespace per test case, and container namespaces in it. Nothing a test
// does with the kernel may reach the machine's own interfaces, routes,
// firewall or files, so:
//
//   TEST_CASE("...", "[netns]") {
//     cni::testing::NetnsFixture fx;         // FIRST: unshare before any kernel work
//     std::string ns = fx.AddNetns("ctr");   // "/run/netns/ctr" (private /run)
//     ... run plugins with CNI_NETNS=ns, fx.Exec(ns, {"ip", "addr"}) ...
//     CHECK(fx.Leftovers().empty());
//   }
//
// The constructor unshares the network and mount namespaces of the calling
// (main) thread, makes every mount private (so nothing propagates back to the
// machine), remounts /sys (so /sys/class/net shows the private namespace),
// mounts a private tmpfs on /run (so named namespaces in /run/netns and plugin
// state in /run/cni never appear on the machine, and die with the process),
// makes /var/lib/cni private the same way (host-local's leases, a runtime's
// result cache; the rest of /var/lib stays readable) and brings lo up. Run
// each test case in its own process where you can (ctest does, with
// catch_discover_tests); several test cases in one process each get a fresh
// namespace. Child processes (plugins) inherit the private namespaces.
// Needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN).
#pragma once

#include <string>
#include <vector>

#include "cni/base/ip.h"
#include "cni/testing/process.h"

namespace cni::testing {

// The private host namespace of one test case (see above); root only.
class NetnsFixture {
 public:
  // Throws std::runtime_error (failing the test before it touches the kernel)
  // when not root or when any isolation step fails.
  NetnsFixture();
  // Deletes the container namespaces this fixture created (also when the test
  // failed or threw).
  ~NetnsFixture();
  NetnsFixture(const NetnsFixture&) = delete;
  NetnsFixture& operator=(const NetnsFixture&) = delete;

  // Creates a network namespace pinned at /run/netns/<name> (a fresh name when
  // `name` is empty) and returns that path: what a test passes as CNI_NETNS.
  std::string AddNetns(const std::string& name = "");
  // Unpins and removes a namespace made by AddNetns (its links go with it).
  void DelNetns(const std::string& path);

  // Path of the private host namespace ("/proc/<pid>/task/<tid>/ns/net").
  const std::string& host_netns() const { return host_netns_; }

  // Runs argv (argv[0] looked up in PATH, no shell) inside `netns_path`, or in
  // the private host namespace when it is empty.
  RunResult Exec(const std::string& netns_path, const std::vector<std::string>& argv,
                 int timeout_ms = 30000) const;

  // Link names in a namespace ("" = the private host namespace), sorted.
  std::vector<std::string> Links(const std::string& netns_path = "") const;

  // What a test left behind: host links other than lo, namespaces under
  // /run/netns that the test created but did not delete, and files under
  // /run/cni and /var/lib/cni (plugin state that DEL should have removed;
  // not host-local's per-network lock, last_reserved_ip.N and index files,
  // which stay by design). Empty when clean.
  std::vector<std::string> Leftovers() const;

 private:
  std::string host_netns_;
  std::vector<std::string> created_;  // namespace paths still pinned
  int counter_ = 0;
};

// Sends ICMP echo requests to `dst` from inside `netns_path` ("" = the private
// host namespace) until a reply arrives or `timeout_ms` passes. Uses a raw
// socket, so it needs no ping binary.
bool Ping(const std::string& netns_path, const net::IpAddress& dst, int timeout_ms = 3000);

}  // namespace cni::testing

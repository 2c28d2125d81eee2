// A private system D-Bus and a real firewalld, inside a NetnsFixture:
//
//   TEST_CASE("...", "[netns][firewalld]") {
//     cni::test::NetnsFixture fx;                 // FIRST: private netns, mounts, /run
//     cni::test::FirewalldFixture fw(fx);         // dbus-daemon + firewalld, up and RUNNING
//     ... a D-Bus client (or a plugin) uses the system bus: the private one ...
//   }
//
// dbus-daemon listens on /run/dbus/system_bus_socket in the fixture's private
// /run, with a configuration of its own (a TempDir: every name may be owned,
// every call is allowed, no service activation). firewalld runs in the private
// network namespace (its nftables rules go there, never into the machine's
// ruleset) with its own system configuration directory (a TempDir with a
// firewalld.conf: default zone "public", nftables backend; the zones come from
// /usr/lib/firewalld, read only), its log in the TempDir, no pid file, and
// only runtime changes (nothing permanent is written). Both are children of
// this process, killed if it dies (PR_SET_PDEATHSIG), and stopped (SIGTERM,
// then SIGKILL after a grace time) by the destructor.
//
// While the fixture lives, this process's DBUS_SYSTEM_BUS_ADDRESS names the
// private socket, so no client in the test can reach the machine's bus.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "support/netns_fixture.h"
#include "support/run.h"

namespace cni::test {

class FirewalldFixture {
 public:
  enum class Start {
    kNothing,    // no bus at all (DBUS_SYSTEM_BUS_ADDRESS still names the private path)
    kBusOnly,    // dbus-daemon, no firewalld
    kFirewalld,  // dbus-daemon and firewalld
  };

  // The address every client of the private bus uses.
  static constexpr const char* kBusAddress = "unix:path=/run/dbus/system_bus_socket";

  // `fx` must already exist (its private namespaces and /run are where this
  // runs). Throws std::runtime_error, with the daemon's log, when a daemon
  // does not come up within its deadline.
  explicit FirewalldFixture(const NetnsFixture& fx, Start start = Start::kFirewalld);
  ~FirewalldFixture();
  FirewalldFixture(const FirewalldFixture&) = delete;
  FirewalldFixture& operator=(const FirewalldFixture&) = delete;

  // Stops firewalld (SIGTERM; SIGKILL after the grace time); dbus-daemon stays.
  void StopFirewalld();

  // firewall-cmd (firewalld's own client, python-dbus: independent of the
  // code under test) with `args`, on the private bus.
  RunResult FirewallCmd(const std::vector<std::string>& args) const;

  // firewalld's log (its --log-file and its stdout/stderr), for failure messages.
  std::string FirewalldLog() const;

  // How long firewalld took from exec to answering "RUNNING", in ms (0 when
  // not started).
  long startup_ms() const { return startup_ms_; }

 private:
  // A daemon started by this fixture.
  struct Child {
    pid_t pid = -1;
    std::string name;
  };
  Child Spawn(const std::string& name, const std::vector<std::string>& argv, const std::string& log) const;
  void Stop(Child& child);
  // Runs dbus-send on the private bus; its stdout on success, nullopt else.
  std::optional<std::string> DbusSend(const std::vector<std::string>& args) const;
  void StartBus();
  void StartFirewalld();

  TempDir dir_;
  std::optional<std::string> saved_address_;  // the DBUS_SYSTEM_BUS_ADDRESS before us
  Child dbus_;
  Child firewalld_;
  long startup_ms_ = 0;
};

}  // namespace cni::test

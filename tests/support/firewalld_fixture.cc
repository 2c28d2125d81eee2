#include "support/firewalld_fixture.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace cni::test {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kSocket = "/run/dbus/system_bus_socket";
constexpr auto kBusDeadline = std::chrono::seconds(10);
// firewalld is a python program that loads every zone, service and icmptype
// file and writes its whole ruleset in one transaction: about a second here,
// much more on a loaded machine.
constexpr auto kFirewalldDeadline = std::chrono::seconds(30);
constexpr auto kStopGrace = std::chrono::seconds(5);
constexpr auto kPoll = std::chrono::milliseconds(20);

// The private bus: a system bus (EXTERNAL auth, as sd-bus and libdbus expect
// of one) on the private /run, where everything is allowed and nothing is
// activated (no <servicedir>: a call to an absent name fails, it never starts
// a service).
constexpr const char* kBusConfig = R"(<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=/run/dbus/system_bus_socket</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
)";

// firewalld's own configuration: Debian's defaults, written out so that the
// machine's /etc/firewalld is never read. CleanupOnExit removes its ruleset on
// SIGTERM (the namespace dies with the test anyway).
constexpr const char* kFirewalldConf = R"(DefaultZone=public
CleanupOnExit=yes
CleanupModulesOnExit=no
Lockdown=no
IPv6_rpfilter=yes
IndividualCalls=no
LogDenied=off
FirewallBackend=nftables
FlushAllOnReload=yes
RFC3964_IPv4=yes
)";

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  if (!f.flush()) throw std::runtime_error("firewalld fixture: writing " + path);
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

bool IsSocket(const char* path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

// Reaps `pid` if it has exited; true then.
bool Exited(pid_t pid) { return pid > 0 && waitpid(pid, nullptr, WNOHANG) == pid; }

ino_t InodeOf(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    throw std::runtime_error("firewalld fixture: stat " + path + ": " + std::strerror(errno));
  }
  return st.st_ino;
}

}  // namespace

FirewalldFixture::FirewalldFixture(const NetnsFixture& fx, Start start) {
  // The daemons are children of this (main) thread: they must land in the
  // private namespaces, never in the machine's.
  if (InodeOf("/proc/thread-self/ns/net") != InodeOf(fx.host_netns())) {
    throw std::runtime_error("firewalld fixture: not in the NetnsFixture's network namespace");
  }
  if (const char* old = getenv("DBUS_SYSTEM_BUS_ADDRESS")) saved_address_ = old;
  setenv("DBUS_SYSTEM_BUS_ADDRESS", kBusAddress, 1);
  try {
    if (start != Start::kNothing) StartBus();
    if (start == Start::kFirewalld) StartFirewalld();
  } catch (...) {
    Stop(firewalld_);
    Stop(dbus_);
    if (saved_address_) setenv("DBUS_SYSTEM_BUS_ADDRESS", saved_address_->c_str(), 1);
    else unsetenv("DBUS_SYSTEM_BUS_ADDRESS");
    throw;
  }
}

FirewalldFixture::~FirewalldFixture() {
  Stop(firewalld_);
  Stop(dbus_);
  if (saved_address_) {
    setenv("DBUS_SYSTEM_BUS_ADDRESS", saved_address_->c_str(), 1);
  } else {
    unsetenv("DBUS_SYSTEM_BUS_ADDRESS");
  }
}

FirewalldFixture::Child FirewalldFixture::Spawn(const std::string& name, const std::vector<std::string>& argv,
                                                const std::string& log) const {
  // Everything the child needs is built before fork: after it, only
  // async-signal-safe calls.
  std::vector<std::string> env = {kTestPath, std::string("DBUS_SYSTEM_BUS_ADDRESS=") + kBusAddress,
                                  "LANG=C.UTF-8",
                                  // nothing under /usr/lib/python3 is (re)written
                                  "PYTHONDONTWRITEBYTECODE=1"};
  std::vector<char*> cargv, cenv;
  for (const std::string& s : argv) cargv.push_back(const_cast<char*>(s.c_str()));
  cargv.push_back(nullptr);
  for (const std::string& s : env) cenv.push_back(const_cast<char*>(s.c_str()));
  cenv.push_back(nullptr);
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("firewalld fixture: fork: " + std::string(std::strerror(errno)));
  if (pid == 0) {
    // Dies with the test process, whatever kills it.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    int out = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (out < 0 || in < 0) _exit(127);
    dup2(in, 0);
    dup2(out, 1);
    dup2(out, 2);
    execve(cargv[0], cargv.data(), cenv.data());
    _exit(127);
  }
  return Child{pid, name};
}

void FirewalldFixture::Stop(Child& child) {
  if (child.pid <= 0) return;
  kill(child.pid, SIGTERM);
  const auto deadline = Clock::now() + kStopGrace;
  int status = 0;
  while (waitpid(child.pid, &status, WNOHANG) == 0) {
    if (Clock::now() > deadline) {
      kill(child.pid, SIGKILL);
      waitpid(child.pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(kPoll);
  }
  child.pid = -1;
}

std::optional<std::string> FirewalldFixture::DbusSend(const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {"/usr/bin/dbus-send", "--system", "--print-reply", "--reply-timeout=2000"};
  argv.insert(argv.end(), args.begin(), args.end());
  RunResult r = RunProcess(argv, {kTestPath, std::string("DBUS_SYSTEM_BUS_ADDRESS=") + kBusAddress}, "", 5000);
  if (r.exit_code != 0) return std::nullopt;
  return r.out;
}

void FirewalldFixture::StartBus() {
  const std::string config = (dir_.path() / "bus.conf").string();
  const std::string log = (dir_.path() / "dbus-daemon.log").string();
  WriteFile(config, kBusConfig);
  if (mkdir("/run/dbus", 0755) != 0 && errno != EEXIST) {
    throw std::runtime_error("firewalld fixture: mkdir /run/dbus: " + std::string(std::strerror(errno)));
  }
  dbus_ = Spawn("dbus-daemon",
                {"/usr/bin/dbus-daemon", "--config-file=" + config, "--nofork", "--nopidfile", "--nosyslog"}, log);
  const auto deadline = Clock::now() + kBusDeadline;
  while (!IsSocket(kSocket) ||
         !DbusSend({"--dest=org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.GetId"})) {
    if (Exited(dbus_.pid)) dbus_.pid = -1;
    if (dbus_.pid < 0 || Clock::now() > deadline) {
      throw std::runtime_error("firewalld fixture: dbus-daemon did not come up: " + ReadFile(log));
    }
    std::this_thread::sleep_for(kPoll);
  }
}

void FirewalldFixture::StartFirewalld() {
  const std::string etc = (dir_.path() / "etc").string();
  mkdir(etc.c_str(), 0755);
  WriteFile(etc + "/firewalld.conf", kFirewalldConf);
  const auto t0 = Clock::now();
  firewalld_ = Spawn("firewalld",
                     {"/usr/bin/python3", "/usr/sbin/firewalld", "--nofork", "--nopid", "--system-config", etc,
                      "--log-target", "file", "--log-file", (dir_.path() / "firewalld.log").string()},
                     (dir_.path() / "firewalld.out").string());
  // firewalld owns its name before it has loaded (python-dbus queues the
  // calls meanwhile); "RUNNING" is its state once the ruleset is in place.
  const auto deadline = Clock::now() + kFirewalldDeadline;
  for (;;) {
    if (DbusSend({"--dest=org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.GetNameOwner",
                  "string:org.fedoraproject.FirewallD1"})) {
      std::optional<std::string> state =
          DbusSend({"--dest=org.fedoraproject.FirewallD1", "/org/fedoraproject/FirewallD1",
                    "org.freedesktop.DBus.Properties.Get", "string:org.fedoraproject.FirewallD1", "string:state"});
      if (state && absl::StrContains(*state, "\"RUNNING\"")) break;
    }
    if (Exited(firewalld_.pid)) firewalld_.pid = -1;
    if (firewalld_.pid < 0 || Clock::now() > deadline) {
      throw std::runtime_error("firewalld fixture: firewalld did not come up: " + FirewalldLog());
    }
    std::this_thread::sleep_for(kPoll);
  }
  startup_ms_ = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
}

void FirewalldFixture::StopFirewalld() { Stop(firewalld_); }

RunResult FirewalldFixture::FirewallCmd(const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {"/usr/bin/python3", "/usr/bin/firewall-cmd"};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunProcess(argv,
                    {kTestPath, std::string("DBUS_SYSTEM_BUS_ADDRESS=") + kBusAddress, "PYTHONDONTWRITEBYTECODE=1"},
                    "", 30000);
}

std::string FirewalldFixture::FirewalldLog() const {
  return absl::StrCat("\n--- firewalld.log ---\n", ReadFile((dir_.path() / "firewalld.log").string()),
                      "--- firewalld stdout/stderr ---\n", ReadFile((dir_.path() / "firewalld.out").string()));
}

}  // namespace cni::test

// The dhcp IPAM plugin and its daemon against a real DHCP server: dnsmasq in a
// private "server" namespace of the test, with its own configuration, lease
// file and log under a temp dir (never the machine's service). The server's
// namespace is linked to the test's host namespace by a veth pair whose host
// end, mst0, is the macvlan master (or is enslaved to a bridge), so container
// interfaces reach the server. The daemon runs in the test's host namespace,
// on a socket and state directory in the temp dir.
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cni/base/ip.h"
#include "cni/base/json.h"
#include "cni/net/netns.h"
#include "cni/protocol/types.h"
#include "cni/protocol/version.h"
#include "cni/runtime/runtime.h"
#include "support/cni_call.h"
#include "support/netns_fixture.h"
#include "support/netns_tools.h"
#include "support/run.h"

namespace {

using cni::Json;
using namespace cni::test;  // NOLINT: test brevity

constexpr char kServer[] = "10.77.0.1";
constexpr char kServer6[] = "2001:db8:77::1";

cni::net::IpAddress A(const std::string& text) { return *cni::net::IpAddress::Parse(text); }

std::string ReadFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Polls `pred` every 100 ms until it holds or `timeout_ms` passes.
bool WaitFor(const std::function<bool()>& pred, int timeout_ms) {
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return pred();
}

// True when something accepts connections on the unix socket `path`.
bool Listening(const std::string& path) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), std::min(path.size(), sizeof(addr.sun_path) - 1));
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return ok;
}

// A child process with its stderr (and stdout) in `log`, killed with SIGKILL
// if the test process dies, stopped (SIGTERM) on destruction unless already
// reaped. With `listen_fd` >= 0 it gets that socket as fd 3 with LISTEN_FDS=1
// and LISTEN_PID set to its own pid (systemd socket activation). Its
// environment is PATH plus `env` ("NAME=value" each).
class Child {
 public:
  Child(const std::vector<std::string>& argv, const std::string& log, int listen_fd = -1,
        const std::vector<std::string>& env = {}) {
    std::vector<std::string> args = argv;
    std::vector<char*> cargv;
    for (std::string& s : args) cargv.push_back(s.data());
    cargv.push_back(nullptr);
    std::vector<std::string> env_strings = {kTestPath};
    env_strings.insert(env_strings.end(), env.begin(), env.end());
    std::vector<char*> envp;
    for (std::string& s : env_strings) envp.push_back(s.data());
    const size_t listen_at = envp.size();  // LISTEN_PID and LISTEN_FDS go here, then the end
    envp.insert(envp.end(), 3, nullptr);
    pid_ = fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
      if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
      }
      char pid_env[64] = "LISTEN_PID=";
      if (listen_fd >= 0) {
        // dup2 onto itself would keep the socket's close-on-exec flag.
        if (listen_fd == 3) {
          fcntl(3, F_SETFD, 0);
        } else {
          dup2(listen_fd, 3);
        }
        // getpid() and the number by hand: async-signal-safe after fork.
        pid_t me = getpid();
        char digits[16];
        int n = 0;
        do {
          digits[n++] = static_cast<char>('0' + me % 10);
          me /= 10;
        } while (me > 0);
        size_t at = strlen(pid_env);
        while (n > 0) pid_env[at++] = digits[--n];
        pid_env[at] = '\0';
        envp[listen_at] = pid_env;
        envp[listen_at + 1] = const_cast<char*>("LISTEN_FDS=1");
      }
      execve(cargv[0], cargv.data(), envp.data());
      _exit(127);
    }
  }
  ~Child() { Stop(SIGTERM); }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  // Sends `sig` and reaps the child (SIGKILL after 5 s).
  void Stop(int sig) {
    if (pid_ <= 0) return;
    kill(pid_, sig);
    for (int i = 0; i < 50; ++i) {
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
};

// The test's DHCP world: the server namespace with dnsmasq, mst0 in the host,
// the temp dir for every file, and the daemon.
struct Lab {
  NetnsFixture& fx;
  TempDir dir;
  std::string server_ns;
  std::unique_ptr<Child> dnsmasq;
  std::unique_ptr<Child> kea;  // Kea's DHCPv6 server, where a test uses it instead of dnsmasq
  std::unique_ptr<Child> daemon;
  std::string server_if = "srv0";  // the interface dnsmasq serves
  // Where Kea runs: the server's namespace and interface unless a test
  // gives it a link of its own.
  std::string kea_ns, kea_if = "srv0";

  explicit Lab(NetnsFixture& f) : fx(f) {
    server_ns = fx.AddNetns("dhcpsrv");
    kea_ns = server_ns;
    MustExec(fx, "", {"ip", "link", "add", "mst0", "type", "veth", "peer", "name", "srv0", "netns", server_ns});
    MustExec(fx, "", {"ip", "link", "set", "mst0", "up"});
    MustExec(fx, server_ns, {"ip", "addr", "add", std::string(kServer) + "/24", "dev", "srv0"});
    // IPv6: the server's addresses are usable at once (no DAD), so dnsmasq
    // sends RAs from its link-local address as soon as it starts.
    MustExec(fx, server_ns, {"sysctl", "-qw", "net.ipv6.conf.srv0.accept_dad=0"});
    MustExec(fx, server_ns, {"ip", "addr", "add", std::string(kServer6) + "/64", "dev", "srv0", "nodad"});
    MustExec(fx, server_ns, {"ip", "link", "set", "srv0", "up"});
    MustExec(fx, server_ns, {"ip", "link", "set", "lo", "up"});
  }
  ~Lab() { Stop(); }
  // Stops the daemon (SIGTERM: it keeps its leases) and the server.
  // Its log goes to stderr (shown by ctest when the test fails).
  void Stop() {
    if (!daemon && !dnsmasq && !kea) return;
    daemon.reset();
    dnsmasq.reset();
    kea.reset();
    std::string log = ReadFile(DaemonLog());
    if (!log.empty()) fprintf(stderr, "--- dhcp daemon log\n%s", log.c_str());
    std::string kea_log = ReadFile(KeaLog());
    if (!kea_log.empty()) fprintf(stderr, "--- kea-dhcp6 log\n%s", kea_log.c_str());
  }

  // Stops both, deletes `containers`, the server namespace and mst0 (plus
  // `links`), and CHECKs that nothing is left over.
  void Finish(const std::vector<std::string>& containers, std::vector<std::string> links = {}) {
    Stop();
    std::vector<std::string> all = containers;
    all.push_back(server_ns);
    links.insert(links.begin(), "mst0");
    TearDown(fx, all, links);
  }

  std::string Socket() const { return dir.str() + "/dhcp.sock"; }
  std::string Leases() const { return dir.str() + "/dnsmasq.leases"; }
  std::string ServerLog() const { return dir.str() + "/dnsmasq.log"; }
  std::string DaemonLog() const { return dir.str() + "/daemon.log"; }
  std::string StateFile() const { return dir.str() + "/state/leases.json"; }

  // dnsmasq on srv0, addresses 10.77.0.50-150, 2 min leases (its minimum),
  // router and DNS server 10.77.0.1, domain dhcp.test, plus `extra` options.
  void StartServer(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv = {
        "/usr/bin/nsenter", "--net=" + server_ns, "--", "/usr/sbin/dnsmasq", "--keep-in-foreground",
        "--conf-file=/dev/null", "--user=root", "--group=root", "--port=0", "--no-resolv", "--no-hosts",
        "--interface=" + server_if, "--bind-interfaces", "--dhcp-authoritative", "--log-dhcp", "--no-ping",
        "--dhcp-range=10.77.0.50,10.77.0.150,255.255.255.0,2m", "--dhcp-leasefile=" + Leases(),
        "--pid-file=" + dir.str() + "/dnsmasq.pid", "--log-facility=" + ServerLog(),
        "--dhcp-option=option:router,10.77.0.1", "--dhcp-option=option:dns-server,10.77.0.1",
        "--dhcp-option=option:domain-name,dhcp.test"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    dnsmasq = std::make_unique<Child>(argv, dir.str() + "/dnsmasq.out");
    REQUIRE(WaitFor([&] { return absl::StrContains(ReadFile(ServerLog()), "DHCP, IP range"); }, 5000));
  }

  // dnsmasq as a DHCPv6 server and router on srv0: addresses
  // 2001:db8:77::10 to ::<last> (2 min leases), DNS server kServer6, search
  // list dhcp.test, router advertisements (the stateful range's prefix,
  // on-link, M flag) plus `extra` options. With `v4`, the DHCPv4 range too.
  // Without `ra`, dnsmasq sends no router advertisements (the test does).
  void StartServer6(const std::string& last = "2001:db8:77::20", bool v4 = false,
                    const std::vector<std::string>& extra = {}, bool ra = true) {
    std::vector<std::string> argv = {
        "/usr/bin/nsenter", "--net=" + server_ns, "--", "/usr/sbin/dnsmasq", "--keep-in-foreground",
        "--conf-file=/dev/null", "--user=root", "--group=root", "--port=0", "--no-resolv", "--no-hosts",
        "--interface=" + server_if, "--bind-interfaces", "--dhcp-authoritative", "--log-dhcp", "--no-ping",
        "--dhcp-range=2001:db8:77::10," + last + ",64,2m",
        "--dhcp-leasefile=" + Leases(), "--pid-file=" + dir.str() + "/dnsmasq.pid", "--log-facility=" + ServerLog(),
        "--dhcp-option=option6:dns-server,[" + std::string(kServer6) + "]",
        "--dhcp-option=option6:domain-search,dhcp.test"};
    if (ra) argv.insert(argv.end(), {"--enable-ra", "--ra-param=" + server_if + ",10,1800"});
    if (v4) {
      argv.insert(argv.end(), {"--dhcp-range=10.77.0.50,10.77.0.150,255.255.255.0,2m",
                               "--dhcp-option=option:router,10.77.0.1"});
    }
    argv.insert(argv.end(), extra.begin(), extra.end());
    dnsmasq = std::make_unique<Child>(argv, dir.str() + "/dnsmasq.out");
    REQUIRE(WaitFor([&] { return absl::StrContains(ReadFile(ServerLog()), "DHCPv6, IP range"); }, 5000));
  }

  std::string KeaLog() const { return dir.str() + "/kea.log"; }
  std::string KeaLeases() const { return dir.str() + "/kea-leases6.csv"; }

  // Kea's DHCPv6 server (kea-dhcp6) on srv0, all its files in the temp dir
  // (configuration, memfile lease file, log, pid file; no lock file, no
  // control socket; a fixed server identifier, not persisted, so that a
  // restarted Kea is the same server): addresses `first` to
  // `last` of 2001:db8:77::/64, the timers and lifetimes given (seconds),
  // DNS server kServer6 and search list dhcp.test. No Rapid Commit (Kea's
  // default): SOLICIT, ADVERTISE, REQUEST, REPLY. Kea sends no RAs.
  void StartKea(const std::string& first, const std::string& last, int renew, int rebind, int valid) {
    Json config = {
        {"Dhcp6",
         {{"interfaces-config", {{"interfaces", {kea_if}}}},
          {"server-id", {{"type", "EN"}, {"enterprise-id", 2495}, {"identifier", "6b6561"}, {"persist", false}}},
          {"lease-database", {{"type", "memfile"}, {"name", KeaLeases()}, {"lfc-interval", 0}}},
          {"renew-timer", renew},
          {"rebind-timer", rebind},
          {"preferred-lifetime", valid},
          {"valid-lifetime", valid},
          {"option-data",
           {{{"name", "dns-servers"}, {"data", kServer6}}, {{"name", "domain-search"}, {"data", "dhcp.test"}}}},
          {"subnet6",
           {{{"id", 1},
             {"subnet", "2001:db8:77::/64"},
             {"interface", kea_if},
             {"pools", {{{"pool", first + "-" + last}}}}}}},
          // Debug level 55 logs every message received, by type (DHCP6_PACKET_RECEIVED).
          {"loggers",
           {{{"name", "kea-dhcp6"},
             {"output_options", {{{"output", KeaLog()}}}},
             {"severity", "DEBUG"},
             {"debuglevel", 55}}}}}}};
    // Kea opens no socket on an interface that is not running yet (the
    // kernel reports the veth's carrier up to a second after both ends came up).
    REQUIRE(WaitFor(
        [&] { return absl::StrContains(MustExec(fx, kea_ns, {"ip", "-o", "link", "show", kea_if}), "state UP"); },
        3000));
    const std::string path = dir.str() + "/kea-dhcp6.json";
    std::ofstream(path) << config.dump(2);
    // A copy of the program runs: Debian's AppArmor profile for
    // /usr/sbin/kea-dhcp6 (where AppArmor is on) confines it to /etc/kea,
    // /var/lib/kea and /run/kea, not the temp dir.
    const std::string program = dir.str() + "/kea-dhcp6";
    if (!std::filesystem::exists(program)) std::filesystem::copy_file("/usr/sbin/kea-dhcp6", program);
    const int started = KeaCount("DHCP6_STARTED");  // a restart appends to the log
    kea = std::make_unique<Child>(
        std::vector<std::string>{"/usr/bin/nsenter", "--net=" + kea_ns, "--", program, "-c", path},
        dir.str() + "/kea.out", -1,
        std::vector<std::string>{"KEA_PIDFILE_DIR=" + dir.str(), "KEA_LOCKFILE_DIR=none"});
    REQUIRE(WaitFor([&] { return KeaCount("DHCP6_STARTED") > started; }, 5000));
  }
  // How many times Kea logged `what`.
  int KeaCount(const std::string& what) const {
    std::string log = ReadFile(KeaLog());
    int n = 0;
    for (size_t at = log.find(what); at != std::string::npos; at = log.find(what, at + 1)) ++n;
    return n;
  }

  std::vector<std::string> DaemonArgv(const std::vector<std::string>& extra) const {
    std::vector<std::string> argv = {PluginDir() + "/dhcp", "daemon", "-socketpath", Socket(), "-statedir",
                                     dir.str() + "/state", "-timeout", "2s", "-resendtimeout", "10s"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  }

  void StartDaemon(const std::vector<std::string>& extra = {}) {
    daemon = std::make_unique<Child>(DaemonArgv(extra), DaemonLog());
    REQUIRE(WaitFor([&] { return Listening(Socket()); }, 5000));
  }

  // How many times the server logged `what` (e.g. "DHCPACK(srv0) 10.77.0.57 ").
  int ServerCount(const std::string& what) const {
    std::string log = ReadFile(ServerLog());
    int n = 0;
    for (size_t at = log.find(what); at != std::string::npos; at = log.find(what, at + 1)) ++n;
    return n;
  }
  // dnsmasq rewrites its lease file in place (rewind, ftruncate, write): a
  // read in between sees it empty. An empty file is read again for up to
  // 200 ms before it is believed (it is empty for real once no lease is left).
  bool ServerHasLease(const std::string& ip) const {
    std::string leases = ReadFile(Leases());
    for (int i = 0; i < 20 && leases.empty(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      leases = ReadFile(Leases());
    }
    return absl::StrContains(leases, " " + ip + " ");
  }
};

Json DhcpIpam(const Lab& lab, const Json& extra = Json::object()) {
  Json ipam = {{"type", "dhcp"}, {"daemonSocketPath", lab.Socket()}};
  for (const auto& [k, v] : extra.items()) ipam[k] = v;
  return ipam;
}

std::string MacvlanConf(const Lab& lab, const Json& ipam_extra = Json::object()) {
  return Json{{"cniVersion", "1.1.0"}, {"name", "dhcpnet"}, {"type", "macvlan"}, {"master", "mst0"},
              {"ipam", DhcpIpam(lab, ipam_extra)}}
      .dump();
}

RunResult Mv(const std::string& command, const std::string& conf, const std::string& netns, const std::string& id) {
  return CallPlugin("macvlan", command, conf, netns, id);
}

// A client identifier of type 0 as dnsmasq's lease file shows it: "00:63:74:...".
std::string ClientIdHex(const std::string& id) {
  std::string out = "00";
  for (unsigned char c : id) out += absl::StrCat(":", absl::Hex(c, absl::kZeroPad2));
  return out;
}

std::string Addr(const cni::Result& r) { return r.ips.at(0).address.addr().ToString(); }

// Router advertisements from srv0 (to ff02::1, hop limit 255) every 200 ms
// while it lives: router lifetime 1800 s, the on-link prefix
// 2001:db8:77::/64 and an RFC 4191 route to 2001:db8:99::/48 (600 s).
// dnsmasq sends no route information option.
class RouteInfoAdvertiser {
 public:
  explicit RouteInfoAdvertiser(const std::string& server_ns) {
    absl::StatusOr<cni::net::Netns> ns = cni::net::Netns::Open(server_ns);
    REQUIRE(ns.ok());
    int ifindex = 0;
    REQUIRE(ns->Run([&] {
                  fd_ = socket(AF_INET6, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMPV6);
                  ifindex = static_cast<int>(if_nametoindex("srv0"));
                  return absl::OkStatus();
                }).ok());
    REQUIRE(fd_ >= 0);
    REQUIRE(ifindex > 0);
    int hops = 255;
    setsockopt(fd_, IPPROTO_IPV6, IPV6_MULTICAST_HOPS, &hops, sizeof(hops));
    setsockopt(fd_, IPPROTO_IPV6, IPV6_MULTICAST_IF, &ifindex, sizeof(ifindex));
    const unsigned char ra[] = {
        134, 0, 0, 0, 64, 0x80, 0x07, 0x08, 0, 0, 0, 0, 0, 0, 0, 0,  // M flag, lifetime 1800
        3, 4, 64, 0x80, 0, 0, 0x1c, 0x20, 0, 0, 0x0e, 0x10, 0, 0, 0, 0,  // PIO, L flag
        0x20, 0x01, 0x0d, 0xb8, 0, 0x77, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        24, 2, 48, 0, 0, 0, 0x02, 0x58, 0x20, 0x01, 0x0d, 0xb8, 0, 0x99, 0, 0};  // RIO
    sockaddr_in6 to{};
    to.sin6_family = AF_INET6;
    to.sin6_addr.s6_addr[0] = 0xff;
    to.sin6_addr.s6_addr[1] = 0x02;
    to.sin6_addr.s6_addr[15] = 1;
    to.sin6_scope_id = static_cast<uint32_t>(ifindex);
    thread_ = std::thread([this, ra_bytes = std::string(reinterpret_cast<const char*>(ra), sizeof(ra)), to] {
      while (!stop_) {
        sendto(fd_, ra_bytes.data(), ra_bytes.size(), 0, reinterpret_cast<const sockaddr*>(&to), sizeof(to));
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }
    });
  }
  ~RouteInfoAdvertiser() {
    stop_ = true;
    thread_.join();
    close(fd_);
  }

 private:
  int fd_ = -1;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// The link-local address of srv0, the router of the IPv6 tests.
std::string ServerLinkLocal(const NetnsFixture& fx, const Lab& lab) {
  std::string out = MustExec(fx, lab.server_ns, {"ip", "-6", "-o", "addr", "show", "dev", "srv0", "scope", "link"});
  size_t at = out.find("fe80::");
  REQUIRE(at != std::string::npos);
  return out.substr(at, out.find('/', at) - at);
}

// Two containers, c1 (ctr1) and c2 (ctr2), each with a macvlan eth0 and a lease.
struct TwoLeases {
  std::string c1, c2, conf, ip1, ip2;
};
TwoLeases AddTwo(NetnsFixture& fx, const Lab& lab) {
  TwoLeases t{fx.AddNetns("c1"), fx.AddNetns("c2"), MacvlanConf(lab), "", ""};
  t.ip1 = Addr(MustResult(Mv("ADD", t.conf, t.c1, "ctr1")));
  t.ip2 = Addr(MustResult(Mv("ADD", t.conf, t.c2, "ctr2")));
  return t;
}

}  // namespace

TEST_CASE("dhcp: macvlan ADD gets a lease that works, CHECK passes, DEL releases it", "[netns][dhcp]") {
  NetnsFixture fx;
  Lab lab(fx);
  lab.StartServer();
  lab.StartDaemon();
  std::string c1 = fx.AddNetns("c1");
  std::string conf = MacvlanConf(lab);
  RunResult add = Mv("ADD", conf, c1, "ctr1");
  cni::Result r = MustResult(add);
  REQUIRE(r.ips.size() == 1);
  std::string ip = Addr(r);
  CHECK(absl::StartsWith(ip, "10.77.0."));
  CHECK(r.ips[0].address.len() == 24);
  CHECK(r.ips[0].gateway == A(kServer));
  REQUIRE(r.routes.size() == 1);
  CHECK(r.routes[0].dst.ToString() == "0.0.0.0/0");
  CHECK(r.routes[0].gw == A(kServer));
  CHECK(r.dns.nameservers == std::vector<std::string>{kServer});
  CHECK(r.dns.domain == "dhcp.test");
  // The address is on eth0 and works.
  CHECK(absl::StrContains(MustExec(fx, c1, {"ip", "-4", "addr", "show", "eth0"}), ip + "/24"));
  CHECK(Ping(c1, A(kServer)));
  // The server holds the lease under upstream's client identifier.
  CHECK(lab.ServerHasLease(ip));
  CHECK(absl::StrContains(ReadFile(lab.Leases()), " " + ClientIdHex("ctr1/dhcpnet/eth0")));
  // A second ADD of the same attachment returns the same lease.
  CHECK(Addr(MustResult(CallPlugin("dhcp", "ADD", conf, c1, "ctr1"))) == ip);
  MustSucceed(Mv("CHECK", WithPrevResult(conf, add.out), c1, "ctr1"));
  // STATUS: the daemon answers.
  MustSucceed(CallPlugin("dhcp", "STATUS", Json{{"cniVersion", "1.1.0"}, {"name", "dhcpnet"}, {"type", "dhcp"},
                                                  {"ipam", DhcpIpam(lab)}}.dump(), "", ""));
  // DEL sends DHCPRELEASE and the server frees the lease.
  MustSucceed(Mv("DEL", conf, c1, "ctr1"));
  CHECK(WaitFor([&] { return lab.ServerCount("DHCPRELEASE(srv0) " + ip) == 1; }, 3000));
  CHECK(WaitFor([&] { return !lab.ServerHasLease(ip); }, 3000));
  MustSucceed(Mv("DEL", conf, c1, "ctr1"));  // unknown to the daemon now: success
  // CHECK after DEL: the daemon keeps no lease.
  RunResult check = CallPlugin("dhcp", "CHECK", WithPrevResult(conf, add.out), c1, "ctr1");
  CHECK(check.exit_code != 0);
  CHECK(absl::StrContains(ErrorMessage(check), "no lease"));
  CHECK(fx.Links(c1) == std::vector<std::string>{"lo"});
  lab.Finish({c1});
}

TEST_CASE("dhcp: renewals at T1 go to the server and keep the address", "[netns][dhcp]") {
  NetnsFixture fx;
  Lab lab(fx);
  // dnsmasq's shortest lease is 2 minutes; T1 and T2 sent explicitly make the
  // client renew every 3 s.
  lab.StartServer({"--dhcp-option=option:T1,3s", "--dhcp-option=option:T2,100s"});
  lab.StartDaemon();
  std::string c1 = fx.AddNetns("c1");
  std::string conf = MacvlanConf(lab);
  cni::Result r = MustResult(Mv("ADD", conf, c1, "ctr1"));
  std::string ip = Addr(r);
  std::string ack = "DHCPACK(srv0) " + ip + " ";
  CHECK(lab.ServerCount(ack) == 1);
  int discovers = lab.ServerCount("DHCPDISCOVER(srv0)");
  // Two renewals: three ACKs for the same address in all.
  CHECK(WaitFor([&] { return lab.ServerCount(ack) >= 3; }, 12000));
  INFO(ReadFile(lab.ServerLog()));
  // Renewals are unicast REQUESTs carrying the leased address (ciaddr).
  CHECK(lab.ServerCount("DHCPREQUEST(srv0) " + ip) >= 3);
  CHECK(lab.ServerCount("DHCPDISCOVER(srv0)") == discovers);
  CHECK(lab.ServerCount("DHCPNAK") == 0);
  CHECK(Addr(MustResult(CallPlugin("dhcp", "ADD", conf, c1, "ctr1"))) == ip);
  CHECK(Ping(c1, A(kServer)));
  CHECK(absl::StrContains(ReadFile(lab.DaemonLog()), "renewing the lease"));
  MustSucceed(Mv("DEL", conf, c1, "ctr1"));
  lab.Finish({c1});
}

TEST_CASE("dhcp: the same lease result as upstream's plugin and daemon, plus DNS", "[netns][dhcp]") {
  NetnsFixture fx;
  Lab lab(fx);
  lab.StartServer({"--dhcp-option=121,192.168.99.0/24,10.77.0.254,0.0.0.0/0,10.77.0.1"});
  lab.StartDaemon();
  if (!std::filesystem::exists(std::string(kUpstreamDir) + "/dhcp")) {
    WARN("upstream's dhcp plugin is not installed");
    return;
  }
  std::string up_socket = lab.dir.str() + "/upstream.sock";
  Child upstream({std::string(kUpstreamDir) + "/dhcp", "daemon", "-socketpath", up_socket},
                 lab.dir.str() + "/upstream.log");
  REQUIRE(WaitFor([&] { return Listening(up_socket); }, 5000));
  std::string c1 = fx.AddNetns("c1"), c2 = fx.AddNetns("c2");
  // Upstream 1.1.1 speaks CNI up to 1.0.0.
  auto at_1_0 = [](const std::string& conf) {
    Json j = Json::parse(conf);
    j["cniVersion"] = "1.0.0";
    return j.dump();
  };
  // Upstream asks only for routers and subnet-mask by default (dnsmasq sends
  // option 121 only to those who ask): both request it.
  Json request = Json::array({{{"option", "121"}}});
  std::string ours_conf = at_1_0(MacvlanConf(lab, {{"request", request}}));
  std::string up_conf = at_1_0(MacvlanConf(lab, {{"request", request}, {"daemonSocketPath", up_socket}}));
  cni::Result ours = MustResult(Mv("ADD", ours_conf, c1, "ctr1"));
  cni::Result up = MustResult(CallPlugin("macvlan", "ADD", up_conf, c2, "ctr2", {.dir = kUpstreamDir}));
  INFO(cni::ResultToJson(ours, "1.1.0")->dump() << "\n" << cni::ResultToJson(up, "1.1.0")->dump());
  REQUIRE(ours.ips.size() == 1);
  REQUIRE(up.ips.size() == 1);
  CHECK(ours.ips[0].address.len() == up.ips[0].address.len());
  CHECK(ours.ips[0].gateway == up.ips[0].gateway);
  CHECK(ours.routes == up.routes);
  CHECK(up.dns == cni::Dns());  // upstream leaves it empty
  CHECK(ours.dns.nameservers == std::vector<std::string>{kServer});
  CHECK(absl::StrContains(MustExec(fx, c1, {"ip", "-4", "route"}), "192.168.99.0/24 via 10.77.0.254"));
  MustSucceed(CallPlugin("macvlan", "DEL", up_conf, c2, "ctr2", {.dir = kUpstreamDir}));
  MustSucceed(Mv("DEL", ours_conf, c1, "ctr1"));
  CHECK(WaitFor([&] { return !lab.ServerHasLease(Addr(ours)) && !lab.ServerHasLease(Addr(up)); }, 3000));
  upstream.Stop(SIGTERM);
  lab.Finish({c1, c2});
}

TEST_CASE("dhcp: renewals that get no answer rebind at T2 by broadcast and keep the address", "[netns][dhcp]") {
  NetnsFixture fx;
  Lab lab(fx);
  // Renewals from T1 to T2: several transmissions a second apart.
  lab.StartServer({"--dhcp-option=option:T1,3s", "--dhcp-option=option:T2,8s"});
  lab.StartDaemon({"-timeout", "1s"});
  std::string c1 = fx.AddNetns("c1");
  std::string conf = MacvlanConf(lab);
  std::string ip = Addr(MustResult(Mv("ADD", conf, c1, "ctr1")));
  std::string ack = "DHCPACK(srv0) " + ip + " ";
  int discovers = lab.ServerCount("DHCPDISCOVER(srv0)");
  // The server drops unicast to its port: renewals are lost, the broadcast
  // exchange at T2 reaches it.
  MustExec(fx, lab.server_ns,
           {"nft", "add table inet lossy; add chain inet lossy in { type filter hook input priority 0; }; "
                   "add rule inet lossy in udp dport 67 meta pkttype host drop"});
  int acks = lab.ServerCount(ack);
  CHECK(WaitFor([&] { return lab.ServerCount("DHCPDISCOVER(srv0)") > discovers && lab.ServerCount(ack) > acks; },
                12000));
  INFO(ReadFile(lab.DaemonLog()));
  CHECK(absl::StrContains(ReadFile(lab.DaemonLog()), "rebinding the lease"));
  CHECK(absl::StrContains(ReadFile(lab.DaemonLog()), "no DHCP reply to REQUEST (renewal)"));
  CHECK(Addr(MustResult(CallPlugin("dhcp", "ADD", conf, c1, "ctr1"))) == ip);
  // Unicast renewals get through again: ACKs without DISCOVERs.
  MustExec(fx, lab.server_ns, {"nft", "delete table inet lossy"});
  discovers = lab.ServerCount("DHCPDISCOVER(srv0)");
  acks = lab.ServerCount(ack);
  CHECK(WaitFor([&] { return lab.ServerCount(ack) >= acks + 2; }, 8000));
  CHECK(lab.ServerCount("DHCPDISCOVER(srv0)") == discovers);
  // The server's link address changes (failover, a re-made bridge): the
  // container's neighbour entry still has the old one, so a renewal is lost,
  // and the next transmission resolves the new one: still no DISCOVER.
  MustExec(fx, lab.server_ns, {"ip", "link", "set", "srv0", "address", "02:00:00:00:77:01"});
  acks = lab.ServerCount(ack);
  CHECK(WaitFor([&] { return lab.ServerCount(ack) >= acks + 2; }, 12000));
  CHECK(lab.ServerCount("DHCPDISCOVER(srv0)") == discovers);
  MustSucceed(Mv("DEL", conf, c1, "ctr1"));
  CHECK(WaitFor([&] { return !lab.ServerHasLease(ip); }, 3000));
  lab.Finish({c1});
}

TEST_CASE("dhcp: a lease that cannot be renewed expires and takes the link down", "[netns][dhcp]") {
  NetnsFixture fx;
  Lab lab(fx);
  lab.StartServer();
  lab.StartDaemon({"-timeout", "1s", "-resendtimeout", "3s"});
  std::string c1 = fx.AddNetns("c1");
  std::string conf = MacvlanConf(lab);
  RunResult add = Mv("ADD", conf, c1, "ctr1");
  MustResult(add);
  // The daemon stops and the server goes away; when the daemon starts again
  // its 2-minute lease has 4 s left (dnsmasq grants no shorter lease: the
  // state file's "boundAt" is moved back instead of waiting).
  lab.daemon->Stop(SIGTERM);
  lab.dnsmasq.reset();
  Json state = Json::parse(ReadFile(lab.StateFile()));
  REQUIRE(state["leases"].size() == 1);
  state["leases"][0]["boundAt"] = static_cast<int64_t>(time(nullptr)) - 116;
  std::ofstream(lab.StateFile()) << state.dump();
  lab.StartDaemon({"-timeout", "1s", "-resendtimeout", "3s"});
  CHECK(WaitFor([&] { return absl::StrContains(ReadFile(lab.DaemonLog()), "lease expired"); }, 10000));
  INFO(ReadFile(lab.DaemonLog()));
  CHECK(absl::StrContains(ReadFile(lab.DaemonLog()), "rebinding the lease"));
  CHECK(!absl::StrContains(MustExec(fx, c1, {"ip", "link", "show", "eth0"}), ",UP"));
  RunResult check = Mv("CHECK", WithPrevResult(conf, add.out), c1, "ctr1");
  CHECK(check.exit_code != 0);
  CHECK(absl::StrContains(ErrorMessage(check), "expired"));
  // An expired lease is not persisted; DEL forgets it.
  CHECK(!absl::StrContains(ReadFile(lab.StateFile()), "\"containerID\":\"ctr1\""));
  MustSucceed(Mv("DEL", conf, c1, "ctr1"));
  lab.Finish({c1});
}

TEST_CASE("dhcp: two containers get different leases and reach each other (broadcast flag)", "[netns][dhcp]") {
  NetnsFixture fx;
  Lab lab(fx);
  lab.StartServer();
  lab.StartDaemon({"-broadcast"});  // the server broadcasts its OFFERs and ACKs
  auto [c1, c2, conf, ip1, ip2] = AddTwo(fx, lab);
  CHECK(ip1 != ip2);
  CHECK(lab.ServerHasLease(ip1));
  CHECK(lab.ServerHasLease(ip2));
  CHECK(Ping(c1, A(ip2)));
  CHECK(Ping(c2, A(ip1)));
  MustSucceed(Mv("DEL", conf, c1, "ctr1"));
  CHECK(WaitFor([&] { return !lab.ServerHasLease(ip1); }, 3000));
  CHECK(lab.ServerHasLease(ip2));  // the other lease is untouched
  MustSucceed(Mv("DEL", conf, c2, "ctr2"));
  CHECK(WaitFor([&] { return !lab.ServerHasLease(ip2); }, 3000));
  lab.Finish({c1, c2});
}

TEST_CASE("dhcp: option 121 routes are applied, request and provide options go out", "[netns][dhcp]") {
  NetnsFixture fx;
  Lab lab(fx);
  lab.StartServer({"--dhcp-option=121,192.168.99.0/24,10.77.0.1,0.0.0.0/0,10.77.0.1"});
  lab.StartDaemon();
  std::string c1 = fx.AddNetns("c1");
  std::string conf = MacvlanConf(
      lab, {{"priority", 300},
            {"provide", Json::array({{{"option", "host-name"}, {"fromArg", "K8S_POD_NAME"}}})}});
  RunResult add = CallPlugin("macvlan", "ADD", conf, c1, "ctr1", {.args = "IgnoreUnknown=1;K8S_POD_NAME=web-7"});
  cni::Result r = MustResult(add);
  REQUIRE(r.routes.size() == 2);
  CHECK(r.routes[0].dst.ToString() == "192.168.99.0/24");
  CHECK(r.routes[0].gw == A(kServer));
  CHECK(r.routes[0].priority == 300);
  CHECK(r.routes[1].dst.ToString() == "0.0.0.0/0");
  std::string routes = MustExec(fx, c1, {"ip", "-4", "route", "show"});
  INFO(routes);
  CHECK(absl::StrContains(routes, "192.168.99.0/24 via 10.77.0.1 dev eth0 metric 300"));
  CHECK(absl::StrContains(routes, "default via 10.77.0.1 dev eth0 metric 300"));
  // The host name from CNI_ARGS reached the server (its lease file names it),
  // and the request list asked for option 121.
  CHECK(absl::StrContains(ReadFile(lab.Leases()), " web-7 "));
  CHECK(absl::StrContains(ReadFile(lab.ServerLog()), "121"));
  MustSucceed(CallPlugin("macvlan", "DEL", conf, c1, "ctr1", {.args = "IgnoreUnknown=1;K8S_POD_NAME=web-7"}));
  lab.Finish({c1});
}

TEST_CASE("dhcp: no server answers: a clear error within the timeout, nothing left", "[netns][dhcp]") {
  NetnsFixture fx;
  Lab lab(fx);
  lab.StartDaemon({"-timeout", "1s", "-resendtimeout", "4s"});
  std::string c1 = fx.AddNetns("c1");
  std::string conf = MacvlanConf(lab);
  auto start = std::chrono::steady_clock::now();
  RunResult add = Mv("ADD", conf, c1, "ctr1");
  auto took = std::chrono::steady_clock::now() - start;
  CHECK(add.exit_code != 0);
  CHECK(ErrorCode(add) == 11);
  CHECK(absl::StrContains(ErrorMessage(add), "no DHCP reply to DISCOVER on \"eth0\""));
  CHECK(took >= std::chrono::seconds(4));
  CHECK(took < std::chrono::seconds(8));
  CHECK(fx.Links(c1) == std::vector<std::string>{"lo"});
  // The daemon keeps nothing for it.
  RunResult check = CallPlugin("dhcp", "CHECK", conf, c1, "ctr1");
  CHECK(absl::StrContains(ErrorMessage(check), "no lease"));
  CHECK(!absl::StrContains(ReadFile(lab.StateFile()), "ctr1"));
  lab.Finish({c1});
}

TEST_CASE("dhcp: the daemon not running is code 11 (STATUS 50)", "[netns][dhcp]") {
  NetnsFixture fx;
  TempDir dir;
  std::string c1 = fx.AddNetns("c1");
  MustExec(fx, "", {"ip", "link", "add", "mst0", "type", "veth", "peer", "name", "mst0p"});
  Json ipam = {{"type", "dhcp"}, {"daemonSocketPath", dir.str() + "/dhcp.sock"}};
  std::string conf =
      Json{{"cniVersion", "1.1.0"}, {"name", "dhcpnet"}, {"type", "macvlan"}, {"master", "mst0"}, {"ipam", ipam}}
          .dump();
  RunResult add = Mv("ADD", conf, c1, "ctr1");
  CHECK(ErrorCode(add) == 11);
  CHECK(absl::StrContains(ErrorMessage(add), "the dhcp daemon is not running"));
  CHECK(fx.Links(c1) == std::vector<std::string>{"lo"});
  std::string ipam_conf = Json{{"cniVersion", "1.1.0"}, {"name", "dhcpnet"}, {"type", "dhcp"}, {"ipam", ipam}}.dump();
  CHECK(ErrorCode(CallPlugin("dhcp", "DEL", ipam_conf, c1, "ctr1")) == 11);
  CHECK(ErrorCode(CallPlugin("dhcp", "STATUS", ipam_conf, "", "")) == 50);
  TearDown(fx, {c1}, {"mst0"});
}

TEST_CASE("dhcp: a daemon that accepts and never answers: code 11 within the timeout", "[netns][dhcp]") {
  // A listening socket that nobody serves: connect and the request's write
  // succeed (the backlog takes them), the answer never comes.
  NetnsFixture fx;
  const std::string c1 = fx.AddNetns("c1");
  TempDir dir;
  const std::string path = dir.str() + "/dhcp.sock";
  int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(listener >= 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  REQUIRE(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  REQUIRE(listen(listener, 16) == 0);
  auto conf = [&](const Json& extra) {
    Json ipam = {{"type", "dhcp"}, {"daemonSocketPath", path}};
    for (const auto& [k, v] : extra.items()) ipam[k] = v;
    return Json{{"cniVersion", "1.1.0"}, {"name", "dhcpnet"}, {"type", "dhcp"}, {"ipam", ipam}}.dump();
  };
  auto timed = [&](const std::string& command, const std::string& c, int want_code, int at_least_ms,
                   int at_most_ms) {
    auto start = std::chrono::steady_clock::now();
    RunResult r = CallPlugin("dhcp", command, c, command == "STATUS" || command == "GC" ? "" : c1,
                             command == "STATUS" || command == "GC" ? "" : "ctr1");
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
    INFO(command << " took " << ms << " ms: " << Describe(r));
    CHECK(ErrorCode(r) == want_code);
    CHECK(ms >= at_least_ms);
    CHECK(ms < at_most_ms);
    if (want_code == 11) CHECK(absl::StrContains(ErrorMessage(r), "did not answer within"));
  };
  // "timeout" bounds every command; DEL, CHECK and STATUS wait 10 s at most.
  timed("ADD", conf({{"timeout", 2}}), 11, 2000, 4000);
  timed("DEL", conf({{"timeout", 2}}), 11, 2000, 4000);
  timed("CHECK", conf({{"timeout", 1}}), 11, 1000, 3000);
  timed("GC", conf({{"timeout", 1}}), 11, 1000, 3000);
  timed("STATUS", conf({{"timeout", 1}}), 50, 1000, 3000);
  timed("DEL", conf(Json::object()), 11, 10000, 12500);
  // Wrong types and values of the key.
  CHECK(ErrorCode(CallPlugin("dhcp", "ADD", conf({{"timeout", "2s"}}), c1, "ctr1")) == 6);
  CHECK(ErrorCode(CallPlugin("dhcp", "ADD", conf({{"timeout", 0}}), c1, "ctr1")) == 7);
  close(listener);
  fx.DelNetns(c1);
}

TEST_CASE("dhcp: a daemon killed and restarted renews the live leases and releases them on DEL",
          "[netns][dhcp]") {
  NetnsFixture fx;
  Lab lab(fx);
  lab.StartServer();
  lab.StartDaemon();
  std::string c1 = fx.AddNetns("c1");
  std::string conf = MacvlanConf(lab);
  RunResult add = Mv("ADD", conf, c1, "ctr1");
  std::string ip = Addr(MustResult(add));
  std::string ack = "DHCPACK(srv0) " + ip + " ";
  CHECK(lab.ServerCount(ack) == 1);
  int discovers = lab.ServerCount("DHCPDISCOVER(srv0)");
  CHECK(absl::StrContains(ReadFile(lab.StateFile()), "\"containerID\":\"ctr1\""));
  lab.daemon->Stop(SIGKILL);
  // While no daemon runs, the plugin says so.
  CHECK(ErrorCode(Mv("CHECK", WithPrevResult(conf, add.out), c1, "ctr1")) == 11);
  // A killed daemon leaves its socket file; the next one replaces it.
  REQUIRE(std::filesystem::exists(lab.Socket()));
  lab.daemon.reset();
  lab.StartDaemon();
  // The new daemon renews the persisted lease at once: same address.
  CHECK(WaitFor([&] { return lab.ServerCount(ack) == 2; }, 5000));
  CHECK(lab.ServerCount("DHCPDISCOVER(srv0)") == discovers);  // renewed, not acquired anew
  MustSucceed(Mv("CHECK", WithPrevResult(conf, add.out), c1, "ctr1"));
  CHECK(Addr(MustResult(CallPlugin("dhcp", "ADD", conf, c1, "ctr1"))) == ip);
  CHECK(Ping(c1, A(kServer)));
  // A clean stop (SIGTERM) keeps the lease too; the socket goes away.
  lab.daemon->Stop(SIGTERM);
  CHECK_FALSE(std::filesystem::exists(lab.Socket()));
  lab.StartDaemon();
  CHECK(WaitFor([&] { return lab.ServerCount(ack) == 3; }, 5000));
  MustSucceed(Mv("DEL", conf, c1, "ctr1"));
  CHECK(WaitFor([&] { return !lab.ServerHasLease(ip); }, 3000));
  CHECK(!absl::StrContains(ReadFile(lab.StateFile()), "\"containerID\":\"ctr1\""));
  lab.Finish({c1});
}

TEST_CASE("dhcp: GC releases stale leases and a lease whose namespace is gone is dropped", "[netns][dhcp]") {
  NetnsFixture fx;
  Lab lab(fx);
  lab.StartServer();
  lab.StartDaemon();
  auto [c1, c2, conf, ip1, ip2] = AddTwo(fx, lab);
  // GC with only ctr2 valid: ctr1's lease is released.
  Json gc = {{"cniVersion", "1.1.0"}, {"name", "dhcpnet"}, {"type", "dhcp"}, {"ipam", DhcpIpam(lab)},
             {"cni.dev/valid-attachments", Json::array({{{"containerID", "ctr2"}, {"ifname", "eth0"}}})}};
  MustSucceed(CallPlugin("dhcp", "GC", gc.dump(), "", "", {.ifname = ""}));
  CHECK(WaitFor([&] { return !lab.ServerHasLease(ip1); }, 3000));
  CHECK(lab.ServerHasLease(ip2));
  MustSucceed(Mv("DEL", conf, c1, "ctr1"));
  // The daemon holds nothing in the namespace: deleting it removes eth0 with it
  // (a lease never keeps a container's namespace alive).
  fx.DelNetns(c2);
  lab.daemon->Stop(SIGTERM);
  lab.StartDaemon();  // resumes ctr2, finds its namespace gone, drops it
  CHECK(WaitFor([&] { return absl::StrContains(ReadFile(lab.DaemonLog()), "attachment gone"); }, 5000));
  CHECK(WaitFor([&] { return !absl::StrContains(ReadFile(lab.StateFile()), "\"containerID\":\"ctr2\""); }, 3000));
  lab.Finish({c1});
}

TEST_CASE("dhcp: systemd socket activation", "[netns][dhcp]") {
  NetnsFixture fx;
  Lab lab(fx);
  lab.StartServer();
  // The listening socket, made as systemd's dhcp.socket would.
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::string path = lab.dir.str() + "/activated.sock";
  std::memcpy(addr.sun_path, path.data(), path.size());
  REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  REQUIRE(listen(fd, 16) == 0);
  // -socketpath points elsewhere: the passed socket wins.
  lab.daemon = std::make_unique<Child>(lab.DaemonArgv({}), lab.DaemonLog(), fd);
  close(fd);
  std::string c1 = fx.AddNetns("c1");
  std::string conf = MacvlanConf(lab, {{"daemonSocketPath", path}});
  std::string ip = Addr(MustResult(Mv("ADD", conf, c1, "ctr1")));
  CHECK(lab.ServerHasLease(ip));
  CHECK_FALSE(std::filesystem::exists(lab.Socket()));
  CHECK(absl::StrContains(ReadFile(lab.DaemonLog()), "listening on the socket systemd passed"));
  MustSucceed(Mv("DEL", conf, c1, "ctr1"));
  lab.daemon->Stop(SIGTERM);
  CHECK(std::filesystem::exists(path));  // systemd's socket: not ours to remove
  lab.Finish({c1});
}

TEST_CASE("dhcp: macvlan and bridge with dhcp through the runtime library", "[netns][dhcp][runtime]") {
  NetnsFixture fx;
  Lab lab(fx);
  // A bridge in the host with mst0 (the server's veth) as a port.
  MustExec(fx, "", {"ip", "link", "add", "br0", "type", "bridge"});
  MustExec(fx, "", {"ip", "link", "set", "mst0", "master", "br0"});
  MustExec(fx, "", {"ip", "link", "set", "br0", "up"});
  lab.StartServer();
  lab.StartDaemon();
  TempDir cache;
  cni::runtime::Options o;
  o.plugin_dirs = {PluginDir()};
  o.cache_dir = cache.str();
  cni::runtime::Runtime rt(o);
  auto list_of = [&](const std::string& name, Json plugin) {
    plugin["ipam"] = DhcpIpam(lab);
    Json list = {{"cniVersion", "1.1.0"}, {"name", name}, {"plugins", Json::array({plugin})}};
    auto parsed = cni::runtime::ConfListFromBytes(list.dump());
    REQUIRE(parsed.ok());
    return *parsed;
  };
  // macvlan cannot use a bridge port as master: its containers go on br0 itself.
  auto mv = list_of("mvdhcp", {{"type", "macvlan"}, {"master", "br0"}});
  auto br = list_of("brdhcp", {{"type", "bridge"}, {"bridge", "br0"}});
  std::string c1 = fx.AddNetns("c1"), c2 = fx.AddNetns("c2");
  auto att = [](const std::string& id, const std::string& netns) {
    cni::runtime::RuntimeConf a;
    a.container_id = id;
    a.netns = netns;
    a.ifname = "eth0";
    return a;
  };
  cni::runtime::RuntimeConf a1 = att("ctr1", c1), a2 = att("ctr2", c2);
  absl::StatusOr<Json> r1 = rt.AddNetworkList(mv, a1);
  INFO((r1.ok() ? r1->dump() : r1.status().ToString()));
  REQUIRE(r1.ok());
  absl::StatusOr<Json> r2 = rt.AddNetworkList(br, a2);
  INFO((r2.ok() ? r2->dump() : r2.status().ToString()));
  REQUIRE(r2.ok());
  cni::Result res1 = *cni::ParseResult(*r1), res2 = *cni::ParseResult(*r2);
  std::string ip1 = Addr(res1), ip2 = Addr(res2);
  CHECK(ip1 != ip2);
  CHECK(Ping(c1, A(kServer)));
  CHECK(Ping(c2, A(kServer)));
  CHECK(Ping(c1, A(ip2)));
  CHECK(rt.CheckNetworkList(mv, a1).ok());
  CHECK(rt.CheckNetworkList(br, a2).ok());
  CHECK(rt.StatusNetworkList(br).ok());
  CHECK(rt.DelNetworkList(mv, a1).ok());
  CHECK(rt.DelNetworkList(br, a2).ok());
  CHECK(WaitFor([&] { return !lab.ServerHasLease(ip1) && !lab.ServerHasLease(ip2); }, 3000));
  lab.Finish({c1, c2}, {"br0"});
}

TEST_CASE("dhcp: RELEASE reaches a server on a bridge whose MAC changed with its ports", "[netns][dhcp]") {
  // The server sits on a bridge made without a fixed MAC: Linux gives it the
  // lowest MAC among its ports. Container c1's port has the lowest possible
  // one, so the bridge answers with it until c1's link is deleted, and then
  // takes c2's port's MAC. c2's RELEASE must still reach the server.
  NetnsFixture fx;
  Lab lab(fx);
  const std::string& srv = lab.server_ns;
  MustExec(fx, srv, {"ip", "addr", "flush", "dev", "srv0"});
  MustExec(fx, srv, {"ip", "link", "add", "brs", "type", "bridge"});
  MustExec(fx, srv, {"ip", "addr", "add", std::string(kServer) + "/24", "dev", "brs"});
  MustExec(fx, srv, {"ip", "link", "set", "brs", "up"});
  lab.server_if = "brs";
  lab.StartServer();
  lab.StartDaemon();
  Json ipam = {{"cniVersion", "1.1.0"}, {"name", "dhcpnet"}, {"type", "dhcp"}, {"ipam", DhcpIpam(lab)}};
  const std::string conf = ipam.dump();
  auto bridge_has_lowest_mac = [&] {
    return absl::StrContains(MustExec(fx, srv, {"ip", "-o", "link", "show", "brs"}), "link/ether 02:00:00:00:00:01 ");
  };
  std::vector<std::string> containers;
  for (int cycle = 0; cycle < 3; ++cycle) {
    INFO("cycle " << cycle);
    std::vector<std::string> ns, ips;
    for (int i = 1; i <= 2; ++i) {
      ns.push_back(fx.AddNetns(absl::StrCat("c", i)));
      containers.push_back(ns.back());
      const std::string port = absl::StrCat("v", i);
      std::vector<std::string> add = {"ip", "link", "add", "eth0", "netns", ns.back(), "type", "veth",
                                      "peer", "name", port, "netns", srv};
      if (i == 1) {
        add.insert(add.end() - 2, {"address", "02:00:00:00:00:01"});
      }
      MustExec(fx, "", add);
      MustExec(fx, srv, {"ip", "link", "set", port, "master", "brs", "up"});
    }
    REQUIRE(bridge_has_lowest_mac());
    for (int i = 0; i < 2; ++i) {
      // What an interface plugin does with the lease: the address on eth0.
      ips.push_back(Addr(MustResult(CallPlugin("dhcp", "ADD", conf, ns[i], absl::StrCat("ctr", i)))));
      MustExec(fx, ns[i], {"ip", "addr", "add", ips[i] + "/24", "dev", "eth0"});
      CHECK(Ping(ns[i], A(kServer)));  // the container knows the server's MAC
      CHECK(lab.ServerHasLease(ips[i]));
    }
    // DEL as an interface plugin runs it: IPAM first, then the link goes.
    for (int i = 0; i < 2; ++i) {
      MustSucceed(CallPlugin("dhcp", "DEL", conf, ns[i], absl::StrCat("ctr", i)));
      MustExec(fx, ns[i], {"ip", "link", "del", "eth0"});
      if (i == 0) CHECK_FALSE(bridge_has_lowest_mac());
    }
    for (int i = 0; i < 2; ++i) {
      INFO("container " << i << " " << ips[i]);
      CHECK(WaitFor([&] { return !lab.ServerHasLease(ips[i]); }, 3000));
    }
    for (const std::string& n : ns) fx.DelNetns(n);
    containers.clear();
  }
  lab.Finish(containers);
}

TEST_CASE("dhcp: a DEL while the daemon is down keeps the interface, and the retry releases the lease",
          "[netns][dhcp]") {
  NetnsFixture fx;
  Lab lab(fx);
  lab.StartServer();
  lab.StartDaemon();
  std::string c1 = fx.AddNetns("c1");
  std::string conf = MacvlanConf(lab);
  std::string ip = Addr(MustResult(Mv("ADD", conf, c1, "ctr1")));
  lab.daemon->Stop(SIGKILL);
  RunResult del = Mv("DEL", conf, c1, "ctr1");
  CHECK(ErrorCode(del) == 11);
  // Kept for the retry: the daemon releases through it.
  CHECK(fx.Links(c1) == std::vector<std::string>{"eth0", "lo"});
  lab.StartDaemon();  // takes the persisted lease over
  MustSucceed(Mv("DEL", conf, c1, "ctr1"), "retried DEL");
  CHECK(WaitFor([&] { return !lab.ServerHasLease(ip); }, 3000));
  CHECK(fx.Links(c1) == std::vector<std::string>{"lo"});
  MustSucceed(Mv("DEL", conf, c1, "ctr1"), "DEL again");
  lab.Finish({c1});
}

namespace {

// macvlan + dhcp ADD with a SIGKILL (strace's fault injection) at the `nth`
// call of `syscall`, in macvlan itself (`target` "macvlan") or in the dhcp
// IPAM plugin it runs (`target` "dhcp": CNI_PATH finds a wrapper there that
// runs the real one under strace). One process is killed, as in life.
RunResult MvKilledAt(const TempDir& wrap_dir, const std::string& target, const std::string& conf,
                     const std::string& netns, const std::string& syscall, int nth) {
  std::vector<std::string> strace = {"/usr/bin/strace", "-qq", "-o", "/dev/null",
                                     "-e", absl::StrCat("trace=", syscall),
                                     "-e", absl::StrCat("inject=", syscall, ":signal=SIGKILL:when=", nth)};
  std::vector<std::string> argv = strace;
  std::string cni_path = PluginDir();
  if (target == "macvlan") {
    argv.push_back(PluginDir() + "/macvlan");
  } else {
    std::ofstream(wrap_dir.str() + "/dhcp")
        << "#!/bin/sh\n[ \"$CNI_COMMAND\" = ADD ] && exec " << absl::StrJoin(strace, " ") << " " << PluginDir()
        << "/dhcp\nexec " << PluginDir() << "/dhcp\n";
    std::filesystem::permissions(wrap_dir.str() + "/dhcp", std::filesystem::perms::owner_all);
    argv = {PluginDir() + "/macvlan"};
    cni_path = wrap_dir.str();
  }
  std::vector<std::string> env = {kTestPath, "CNI_COMMAND=ADD", "CNI_CONTAINERID=ctr-kill",
                                  absl::StrCat("CNI_NETNS=", netns), "CNI_IFNAME=eth0",
                                  absl::StrCat("CNI_PATH=", cni_path)};
  return RunProcess(argv, env, conf, 30000);
}

}  // namespace

TEST_CASE("dhcp: macvlan + dhcp killed at every step of ADD, then DEL leaves nothing", "[netns][dhcp][kill]") {
  NetnsFixture fx;
  Lab lab(fx);
  lab.StartServer();
  lab.StartDaemon();
  TempDir wrap_dir;
  std::filesystem::copy_file(PluginDir() + "/macvlan", wrap_dir.str() + "/macvlan");
  const std::string c1 = fx.AddNetns("c1");
  const std::string conf = MacvlanConf(lab);
  const std::string client = ClientIdHex("ctr-kill/dhcpnet/eth0");
  // Every kind of call macvlan and the dhcp plugin make on the way to a
  // result (the daemon is not killed: it is not the runtime's child).
  const std::vector<std::string> calls = {"sendmsg", "sendto",  "recvmsg", "recvfrom", "openat", "read",
                                          "write",   "connect", "clone3",  "setns",    "execve"};
  int kills = 0;
  for (const std::string target : {"macvlan", "dhcp"}) {
    for (const std::string& syscall : calls) {
      bool finished = false;
      for (int nth = 1; nth <= 200 && !finished; ++nth) {
        RunResult run = MvKilledAt(wrap_dir, target, conf, c1, syscall, nth);
        finished = run.exit_code == 0;
        INFO(target << " killed at " << syscall << " #" << nth << ": " << Describe(run));
        if (!finished) {
          ++kills;
          // Killed itself, or failed (and rolled back) because its IPAM child was.
          CHECK((run.exit_code == 128 + 9 || (run.exit_code == 1 && ErrorCode(run) > 0)));
        }
        // What a runtime does next: DEL without prevResult, which must succeed.
        MustSucceed(Mv("DEL", conf, c1, "ctr-kill"), "DEL after the kill");
        std::vector<std::string> left;
        for (const std::string& link : fx.Links(c1)) {
          if (link != "lo") left.push_back("container link " + link);
        }
        for (const std::string& link : fx.Links()) {
          if (link != "lo" && link != "mst0") left.push_back("host link " + link);
        }
        if (absl::StrContains(ReadFile(lab.StateFile()), "ctr-kill")) left.push_back("the daemon's lease record");
        if (!WaitFor([&] { return !absl::StrContains(ReadFile(lab.Leases()), client); }, 3000)) {
          left.push_back("the server's lease");
        }
        INFO(absl::StrJoin(left, ", "));
        CHECK(left.empty());
        if (!left.empty()) break;  // one report is enough
      }
      INFO(target << ": " << syscall);
      CHECK(finished);
    }
  }
  WARN("macvlan + dhcp ADD: " << kills << " kill points");
  CHECK(kills > 20);
  // The node still works: ADD, traffic, DEL, the server frees the lease.
  std::string ip = Addr(MustResult(Mv("ADD", conf, c1, "ctr-after")));
  CHECK(Ping(c1, A(kServer)));
  MustSucceed(Mv("DEL", conf, c1, "ctr-after"));
  CHECK(WaitFor([&] { return !lab.ServerHasLease(ip); }, 3000));
  lab.Finish({c1});
}

TEST_CASE("dhcp: an ADD that a DEL of the same attachment overtook in the daemon takes no lease",
          "[netns][dhcp]") {
  // A plugin killed right after sending its ADD: the runtime's DEL may reach
  // the daemon's attachment lock first. Here the ADD's connection is open
  // (accepted first) but its request is finished only after the DEL.
  NetnsFixture fx;
  Lab lab(fx);
  lab.StartServer();
  lab.StartDaemon();
  const std::string c1 = fx.AddNetns("c1");
  MustExec(fx, "", {"ip", "link", "add", "link", "mst0", "name", "eth0", "netns", c1, "type", "macvlan"});
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, lab.Socket().data(), lab.Socket().size());
  REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  Json spec = {{"containerID", "ctr1"}, {"network", "dhcpnet"}, {"ifname", "eth0"}, {"netns", c1},
               {"parameterList", "0301"}, {"provide", Json::array()}, {"priority", 0}};
  const std::string request = Json{{"op", "ADD"}, {"lease", spec}}.dump();
  REQUIRE(write(fd, request.data(), 10) == 10);  // the daemon reads on, waiting for the rest
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  Json ipam_conf = {{"cniVersion", "1.1.0"}, {"name", "dhcpnet"}, {"type", "dhcp"}, {"ipam", DhcpIpam(lab)}};
  MustSucceed(CallPlugin("dhcp", "DEL", ipam_conf.dump(), c1, "ctr1"), "DEL");
  REQUIRE(write(fd, request.data() + 10, request.size() - 10) == static_cast<ssize_t>(request.size() - 10));
  shutdown(fd, SHUT_WR);
  std::string answer;
  char buf[4096];
  for (ssize_t n; (n = read(fd, buf, sizeof(buf))) > 0;) answer.append(buf, static_cast<size_t>(n));
  close(fd);
  INFO(answer);
  CHECK(absl::StrContains(answer, "was deleted after this ADD was sent"));
  CHECK(lab.ServerCount("DHCPDISCOVER") == 0);
  CHECK(!absl::StrContains(ReadFile(lab.StateFile()), "ctr1"));
  // A later ADD of the attachment (a new connection) works.
  CHECK(absl::StartsWith(Addr(MustResult(CallPlugin("dhcp", "ADD", ipam_conf.dump(), c1, "ctr1"))), "10.77.0."));
  MustSucceed(CallPlugin("dhcp", "DEL", ipam_conf.dump(), c1, "ctr1"), "DEL");
  lab.Finish({c1});
}

TEST_CASE("dhcp: a DEL cancels an ADD of the same attachment still waiting for a server", "[netns][dhcp]") {
  // The runtime gave up on an ADD (no server answers) and sends DEL: it must
  // not wait for the daemon's exchange to run out, nor leave a lease behind.
  NetnsFixture fx;
  Lab lab(fx);
  lab.StartDaemon({"-resendtimeout", "60s"});
  const std::string c1 = fx.AddNetns("c1");
  MustExec(fx, "", {"ip", "link", "add", "link", "mst0", "name", "eth0", "netns", c1, "type", "macvlan"});
  const std::string conf =
      Json{{"cniVersion", "1.1.0"}, {"name", "dhcpnet"}, {"type", "dhcp"}, {"ipam", DhcpIpam(lab)}}.dump();
  RunResult add;
  std::thread adding([&] { add = CallPlugin("dhcp", "ADD", conf, c1, "ctr1"); });
  REQUIRE(WaitFor([&] { return absl::StrContains(ReadFile(lab.DaemonLog()), "acquiring a lease"); }, 5000));
  auto start = std::chrono::steady_clock::now();
  MustSucceed(CallPlugin("dhcp", "DEL", conf, c1, "ctr1"), "DEL");
  auto del_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
  adding.join();
  auto add_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
  CHECK(del_ms.count() < 3000);
  CHECK(add_ms.count() < 3000);
  CHECK(ErrorCode(add) == 11);
  CHECK(absl::StrContains(ErrorMessage(add), "was deleted while its lease was being acquired"));
  CHECK(!absl::StrContains(ReadFile(lab.StateFile()), "ctr1"));
  lab.Finish({c1});
}

TEST_CASE("dhcp: IPv6 only: an address from the range, default route via the router, ping6, RELEASE",
          "[netns][dhcp][dhcp6]") {
  NetnsFixture fx;
  Lab lab(fx);
  lab.StartServer6("2001:db8:77::10");  // one address: the next client gets it only once it is released
  lab.StartDaemon();
  const std::string router = ServerLinkLocal(fx, lab);
  std::string c1 = fx.AddNetns("c1");
  // A namespace whose new interfaces come without IPv6 (as some runtimes
  // make them): the daemon turns it on for the interface it serves.
  MustExec(fx, c1, {"sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1"});
  // The pod's name goes out as the FQDN option (39), which dnsmasq keeps as the lease's name.
  std::string conf = MacvlanConf(
      lab, {{"family", "ipv6"}, {"provide", {{{"option", "dhcp6.fqdn"}, {"fromArg", "K8S_POD_NAME"}}}}});
  RunResult add = CallPlugin("macvlan", "ADD", conf, c1, "ctr1", {.args = "IgnoreUnknown=1;K8S_POD_NAME=web-1"});
  cni::Result r = MustResult(add);
  REQUIRE(r.ips.size() == 1);
  std::string ip = Addr(r);
  CHECK(ip == "2001:db8:77::10");
  CHECK(lab.ServerCount("DHCPSOLICIT(srv0)") == 1);  // Rapid Commit: SOLICIT and REPLY
  CHECK(lab.ServerCount("DHCPREQUEST(srv0)") == 0);
  // The RA's on-link prefix (/64) contains the address: its prefix length.
  CHECK(r.ips[0].address.len() == 64);
  CHECK(r.ips[0].gateway == A(router));
  // dnsmasq sends no RFC 4191 route information: the default route alone.
  REQUIRE(r.routes.size() == 1);
  CHECK(r.routes[0].dst.ToString() == "::/0");
  CHECK(r.routes[0].gw == A(router));
  CHECK(r.dns.nameservers == std::vector<std::string>{kServer6});
  CHECK(r.dns.search == std::vector<std::string>{"dhcp.test"});
  CHECK(absl::StrContains(MustExec(fx, c1, {"ip", "-6", "addr", "show", "eth0"}), ip + "/64"));
  // One default route, the result's: the kernel learnt none from the RA.
  std::string routes = MustExec(fx, c1, {"ip", "-6", "route", "show", "default"});
  CHECK(absl::StrContains(routes, "via " + router + " dev eth0"));
  CHECK(!absl::StrContains(routes, "proto ra"));
  CHECK(MustExec(fx, c1, {"sysctl", "-n", "net.ipv6.conf.eth0.accept_ra"}) == "0\n");
  CHECK(Ping(c1, A(kServer6)));
  CHECK(lab.ServerHasLease(ip));
  CHECK(absl::StrContains(ReadFile(lab.Leases()), " " + ip + " web-1 "));
  // The same lease again; CHECK passes.
  CHECK(Addr(MustResult(CallPlugin("dhcp", "ADD", conf, c1, "ctr1"))) == ip);
  MustSucceed(Mv("CHECK", WithPrevResult(conf, add.out), c1, "ctr1"));
  // DEL sends RELEASE and the server frees the address.
  MustSucceed(Mv("DEL", conf, c1, "ctr1"));
  CHECK(WaitFor([&] { return lab.ServerCount("DHCPRELEASE(srv0)") == 1; }, 3000));
  CHECK(WaitFor([&] { return !lab.ServerHasLease(ip); }, 3000));
  MustSucceed(Mv("DEL", conf, c1, "ctr1"));
  CHECK(fx.Links(c1) == std::vector<std::string>{"lo"});
  // The released address goes to the next client.
  std::string c2 = fx.AddNetns("c2");
  CHECK(Addr(MustResult(Mv("ADD", conf, c2, "ctr2"))) == ip);
  MustSucceed(Mv("DEL", conf, c2, "ctr2"));
  lab.Finish({c1, c2});
}

TEST_CASE("dhcp: dual stack: both leases in one result, both reachable, GC releases both",
          "[netns][dhcp][dhcp6]") {
  NetnsFixture fx;
  Lab lab(fx);
  lab.StartServer6("2001:db8:77::20", /*v4=*/true);
  lab.StartDaemon();
  const std::string router = ServerLinkLocal(fx, lab);
  std::string c1 = fx.AddNetns("c1");
  // Without Rapid Commit: SOLICIT, ADVERTISE, REQUEST, REPLY.
  std::string conf = MacvlanConf(lab, {{"family", "dual"}, {"rapidCommit", false}});
  RunResult add = Mv("ADD", conf, c1, "ctr1");
  cni::Result r = MustResult(add);
  REQUIRE(r.ips.size() == 2);
  const std::string ip4 = r.ips[0].address.addr().ToString(), ip6 = r.ips[1].address.addr().ToString();
  CHECK(absl::StartsWith(ip4, "10.77.0."));
  CHECK(r.ips[0].gateway == A(kServer));
  CHECK(absl::StartsWith(ip6, "2001:db8:77::"));
  CHECK(r.ips[1].gateway == A(router));
  std::vector<std::string> dsts;
  for (const cni::Route& route : r.routes) dsts.push_back(route.dst.ToString());
  CHECK(dsts == std::vector<std::string>{"0.0.0.0/0", "::/0"});
  CHECK(lab.ServerCount("DHCPADVERTISE(srv0) " + ip6) == 1);
  CHECK(lab.ServerCount("DHCPREPLY(srv0) " + ip6) == 1);
  CHECK(Ping(c1, A(kServer)));
  CHECK(Ping(c1, A(kServer6)));
  MustSucceed(Mv("CHECK", WithPrevResult(conf, add.out), c1, "ctr1"));
  // CHECK wants both addresses in prevResult.
  cni::Result only4 = r;
  only4.ips.pop_back();
  absl::StatusOr<Json> only4_json = cni::ResultToJson(only4, "1.1.0");
  REQUIRE(only4_json.ok());
  RunResult check = CallPlugin("dhcp", "CHECK", WithPrevResult(conf, only4_json->dump()), c1, "ctr1");
  CHECK(absl::StrContains(ErrorMessage(check), ip6 + "/64 is not in prevResult"));
  CHECK(absl::StrContains(ReadFile(lab.StateFile()), "\"family\":\"ipv6\""));
  // GC with no valid attachment: both leases are released.
  Json gc = {{"cniVersion", "1.1.0"}, {"name", "dhcpnet"}, {"type", "dhcp"}, {"ipam", DhcpIpam(lab)},
             {"cni.dev/valid-attachments", Json::array()}};
  MustSucceed(CallPlugin("dhcp", "GC", gc.dump(), "", "", {.ifname = ""}));
  CHECK(WaitFor([&] { return !lab.ServerHasLease(ip4) && !lab.ServerHasLease(ip6); }, 3000));
  CHECK(lab.ServerCount("DHCPRELEASE(srv0) " + ip4) == 1);
  CHECK(lab.ServerCount("DHCPRELEASE(srv0)") == 2);
  CHECK(!absl::StrContains(ReadFile(lab.StateFile()), "ctr1"));
  MustSucceed(Mv("DEL", conf, c1, "ctr1"));
  lab.Finish({c1});
}

TEST_CASE("dhcp: dual stack without a DHCPv6 server: code 11 and the IPv4 lease is released",
          "[netns][dhcp][dhcp6]") {
  NetnsFixture fx;
  Lab lab(fx);
  lab.StartServer();  // DHCPv4 only
  lab.StartDaemon({"-timeout", "1s", "-resendtimeout", "4s"});
  std::string c1 = fx.AddNetns("c1");
  std::string conf = MacvlanConf(lab, {{"family", "dual"}});
  auto start = std::chrono::steady_clock::now();
  RunResult add = Mv("ADD", conf, c1, "ctr1");
  auto took = std::chrono::steady_clock::now() - start;
  CHECK(ErrorCode(add) == 11);
  CHECK(absl::StrContains(ErrorMessage(add), "no DHCPv6 reply to SOLICIT on \"eth0\""));
  CHECK(took < std::chrono::seconds(7));
  // The IPv4 lease this ADD took is given back.
  CHECK(lab.ServerCount("DHCPACK(srv0)") == 1);
  CHECK(WaitFor([&] { return lab.ServerCount("DHCPRELEASE(srv0)") == 1; }, 3000));
  CHECK(!absl::StrContains(ReadFile(lab.StateFile()), "ctr1"));
  CHECK(absl::StrContains(ErrorMessage(CallPlugin("dhcp", "CHECK", conf, c1, "ctr1")), "no lease"));
  CHECK(fx.Links(c1) == std::vector<std::string>{"lo"});
  lab.Finish({c1});
}

TEST_CASE("dhcp: IPv6 without any server: code 11 within the timeout, nothing left", "[netns][dhcp][dhcp6]") {
  NetnsFixture fx;
  Lab lab(fx);
  lab.StartDaemon({"-timeout", "1s", "-resendtimeout", "4s"});
  std::string c1 = fx.AddNetns("c1");
  std::string conf = MacvlanConf(lab, {{"family", "ipv6"}});
  auto start = std::chrono::steady_clock::now();
  RunResult add = Mv("ADD", conf, c1, "ctr1");
  auto took = std::chrono::steady_clock::now() - start;
  CHECK(ErrorCode(add) == 11);
  CHECK(absl::StrContains(ErrorMessage(add), "no DHCPv6 reply to SOLICIT on \"eth0\""));
  CHECK(took >= std::chrono::seconds(4));
  CHECK(took < std::chrono::seconds(7));
  CHECK(fx.Links(c1) == std::vector<std::string>{"lo"});
  CHECK(absl::StrContains(ErrorMessage(CallPlugin("dhcp", "CHECK", conf, c1, "ctr1")), "no IPv6 lease"));
  CHECK(!absl::StrContains(ReadFile(lab.StateFile()), "ctr1"));
  lab.Finish({c1});
}

TEST_CASE("dhcp: an IPv6 lease survives a daemon restart: RENEW at once, then RELEASE on DEL",
          "[netns][dhcp][dhcp6]") {
  NetnsFixture fx;
  Lab lab(fx);
  lab.StartServer6();
  lab.StartDaemon();
  std::string c1 = fx.AddNetns("c1");
  // A DUID from the configuration, which the renewal after the restart uses too.
  const std::string duid = "00:03:00:01:02:00:00:00:00:42";
  std::string conf = MacvlanConf(lab, {{"family", "ipv6"}, {"provide", {{{"option", "dhcp6.client-id"}, {"value", duid}}}}});
  RunResult add = Mv("ADD", conf, c1, "ctr1");
  std::string ip = Addr(MustResult(add));
  CHECK(absl::StrContains(ReadFile(lab.Leases()), duid));
  CHECK(lab.ServerCount("DHCPRENEW(srv0)") == 0);
  lab.daemon->Stop(SIGKILL);
  lab.daemon.reset();
  lab.StartDaemon();
  // The persisted lease is renewed on the wire at once, same address.
  CHECK(WaitFor([&] { return lab.ServerCount("DHCPRENEW(srv0) " + duid) == 1; }, 5000));
  CHECK(WaitFor([&] { return lab.ServerCount("DHCPREPLY(srv0) " + ip) == 2; }, 5000));
  CHECK(lab.ServerCount("DHCPSOLICIT(srv0)") == 1);  // renewed, not acquired anew
  MustSucceed(Mv("CHECK", WithPrevResult(conf, add.out), c1, "ctr1"));
  CHECK(Addr(MustResult(CallPlugin("dhcp", "ADD", conf, c1, "ctr1"))) == ip);
  CHECK(Ping(c1, A(kServer6)));
  MustSucceed(Mv("DEL", conf, c1, "ctr1"));
  CHECK(WaitFor([&] { return !lab.ServerHasLease(ip); }, 3000));
  CHECK(lab.ServerCount("DHCPRELEASE(srv0)") == 1);
  lab.Finish({c1});
}

TEST_CASE("dhcp: an IPv6 address in use on the link fails DAD, is DECLINEd, and the next one is used",
          "[netns][dhcp][dhcp6]") {
  NetnsFixture fx;
  Lab lab(fx);
  // Another node on the link (a macvlan of mst0 in its own namespace)
  // already has ::11, the address a sequential dnsmasq hands out first
  // (the range's start plus one).
  std::string squat = fx.AddNetns("squat");
  MustExec(fx, "", {"ip", "link", "add", "sq0", "link", "mst0", "type", "macvlan", "mode", "bridge"});
  MustExec(fx, "", {"ip", "link", "set", "sq0", "netns", squat});
  MustExec(fx, squat, {"ip", "addr", "add", "2001:db8:77::11/64", "dev", "sq0", "nodad"});
  MustExec(fx, squat, {"ip", "link", "set", "sq0", "up"});
  lab.StartServer6("2001:db8:77::12", /*v4=*/false, {"--dhcp-sequential-ip"});
  lab.StartDaemon();
  std::string c1 = fx.AddNetns("c1");
  std::string conf = MacvlanConf(lab, {{"family", "ipv6"}});
  cni::Result r = MustResult(Mv("ADD", conf, c1, "ctr1"));
  const std::string ip = Addr(r);
  CHECK(absl::StartsWith(ip, "2001:db8:77::1"));
  CHECK(ip != "2001:db8:77::11");
  CHECK(lab.ServerCount("DHCPDECLINE(srv0)") == 1);
  CHECK(lab.ServerCount("DHCPSOLICIT(srv0)") == 2);
  // The declined address is not left on the interface.
  std::string addrs = MustExec(fx, c1, {"ip", "-6", "addr", "show", "eth0"});
  CHECK(!absl::StrContains(addrs, "2001:db8:77::11/"));
  CHECK(absl::StrContains(addrs, ip + "/64"));
  CHECK(Ping(c1, A(kServer6)));
  MustSucceed(Mv("DEL", conf, c1, "ctr1"));
  lab.Finish({c1, squat});
}

TEST_CASE("dhcp: IPv6 RENEWs that get no answer REBIND at T2, and any server's REPLY keeps the lease",
          "[netns][dhcp][dhcp6]") {
  NetnsFixture fx;
  Lab lab(fx);
  lab.StartServer6();
  lab.StartDaemon();
  std::string c1 = fx.AddNetns("c1");
  std::string conf = MacvlanConf(lab, {{"family", "ipv6"}});
  RunResult add = Mv("ADD", conf, c1, "ctr1");
  std::string ip = Addr(MustResult(add));
  // dnsmasq's 2-minute lease has T2 at 105 s: the state file's bind time
  // moves back so that T2 comes 4 s after the restart, and the server
  // identifier the lease keeps becomes another server's, whose RENEWs
  // dnsmasq ignores (RFC 8415 16.6).
  lab.daemon->Stop(SIGTERM);
  Json state = Json::parse(ReadFile(lab.StateFile()));
  REQUIRE(state["leases"].size() == 1);
  Json& lease = state["leases"][0];
  lease["boundAt"] = static_cast<int64_t>(time(nullptr)) - 101;
  std::string reply = lease["reply"].get<std::string>();
  size_t at = reply.find("0002000e0001");  // server ID, 14 bytes, DUID-LLT
  REQUIRE(at != std::string::npos);
  char& last = reply[at + 8 + 28 - 1];
  last = last == '0' ? '1' : '0';
  lease["reply"] = reply;
  std::ofstream(lab.StateFile()) << state.dump();
  lab.StartDaemon({"-timeout", "1s", "-resendtimeout", "3s"});
  CHECK(WaitFor([&] { return lab.ServerCount("DHCPREBIND(srv0)") >= 1; }, 10000));
  CHECK(WaitFor([&] { return lab.ServerCount("DHCPREPLY(srv0) " + ip) == 2; }, 3000));
  std::string log = ReadFile(lab.DaemonLog());
  CHECK(absl::StrContains(log, "renewing the lease"));
  CHECK(absl::StrContains(log, "rebinding the lease"));
  // Bound again, with the server's own identifier: CHECK passes.
  CHECK(WaitFor([&] { return Mv("CHECK", WithPrevResult(conf, add.out), c1, "ctr1").exit_code == 0; }, 3000));
  CHECK(Ping(c1, A(kServer6)));
  MustSucceed(Mv("DEL", conf, c1, "ctr1"));
  CHECK(WaitFor([&] { return !lab.ServerHasLease(ip); }, 3000));
  lab.Finish({c1});
}

TEST_CASE("dhcp: an IPv6 lease that nobody renews expires: CHECK says so", "[netns][dhcp][dhcp6]") {
  NetnsFixture fx;
  Lab lab(fx);
  lab.StartServer6();
  lab.StartDaemon();
  std::string c1 = fx.AddNetns("c1");
  std::string conf = MacvlanConf(lab, {{"family", "ipv6"}});
  RunResult add = Mv("ADD", conf, c1, "ctr1");
  std::string ip = Addr(MustResult(add));
  // The daemon stops, the server goes away, and the 2-minute lease has
  // 4 s left when the daemon starts again.
  lab.daemon->Stop(SIGTERM);
  lab.dnsmasq.reset();
  Json state = Json::parse(ReadFile(lab.StateFile()));
  REQUIRE(state["leases"].size() == 1);
  state["leases"][0]["boundAt"] = static_cast<int64_t>(time(nullptr)) - 116;
  std::ofstream(lab.StateFile()) << state.dump();
  lab.StartDaemon({"-timeout", "1s", "-resendtimeout", "3s"});
  CHECK(WaitFor([&] { return absl::StrContains(ReadFile(lab.DaemonLog()), "lease expired"); }, 10000));
  CHECK(absl::StrContains(ReadFile(lab.DaemonLog()), "rebinding the lease"));
  RunResult check = Mv("CHECK", WithPrevResult(conf, add.out), c1, "ctr1");
  CHECK(absl::StrContains(ErrorMessage(check), "the IPv6 lease for ctr1/dhcpnet/eth0 expired unrenewed"));
  // An expired lease is not persisted; the link stays up (its IPv4 lease, if any, is alive).
  CHECK(!absl::StrContains(ReadFile(lab.StateFile()), "\"containerID\":\"ctr1\""));
  CHECK(absl::StrContains(MustExec(fx, c1, {"ip", "link", "show", "eth0"}), ",UP"));
  MustSucceed(Mv("DEL", conf, c1, "ctr1"));
  lab.Finish({c1});
}

TEST_CASE("dhcp: bridge with dual-stack dhcp: both leases, both reachable, CHECK, DEL releases both",
          "[netns][dhcp][dhcp6]") {
  NetnsFixture fx;
  Lab lab(fx);
  // A bridge in the host with mst0 (the server's veth) as a port.
  MustExec(fx, "", {"ip", "link", "add", "br0", "type", "bridge"});
  MustExec(fx, "", {"ip", "link", "set", "mst0", "master", "br0"});
  MustExec(fx, "", {"ip", "link", "set", "br0", "up"});
  lab.StartServer6("2001:db8:77::20", /*v4=*/true);
  lab.StartDaemon();
  const std::string router = ServerLinkLocal(fx, lab);
  std::string c1 = fx.AddNetns("c1");
  std::string conf = Json{{"cniVersion", "1.1.0"}, {"name", "dhcpnet"}, {"type", "bridge"}, {"bridge", "br0"},
                          {"ipam", DhcpIpam(lab, {{"family", "dual"}})}}
                         .dump();
  RunResult add = CallPlugin("bridge", "ADD", conf, c1, "ctr1");
  cni::Result r = MustResult(add);
  REQUIRE(r.ips.size() == 2);
  const std::string ip4 = r.ips[0].address.addr().ToString(), ip6 = r.ips[1].address.addr().ToString();
  CHECK(absl::StartsWith(ip6, "2001:db8:77::"));
  CHECK(absl::StrContains(MustExec(fx, c1, {"ip", "-6", "route", "show", "default"}), "via " + router + " dev eth0"));
  CHECK(Ping(c1, A(kServer)));
  CHECK(Ping(c1, A(kServer6)));
  MustSucceed(CallPlugin("bridge", "CHECK", WithPrevResult(conf, add.out), c1, "ctr1"));
  MustSucceed(CallPlugin("bridge", "DEL", conf, c1, "ctr1"));
  CHECK(WaitFor([&] { return !lab.ServerHasLease(ip4) && !lab.ServerHasLease(ip6); }, 3000));
  CHECK(lab.ServerCount("DHCPRELEASE(srv0)") == 2);
  lab.Finish({c1}, {"br0"});
}

TEST_CASE("dhcp: RFC 4191 route information of the RA becomes a route of the result and the container",
          "[netns][dhcp][dhcp6]") {
  NetnsFixture fx;
  Lab lab(fx);
  lab.StartServer6("2001:db8:77::20", /*v4=*/false, {}, /*ra=*/false);
  RouteInfoAdvertiser advertiser(lab.server_ns);
  lab.StartDaemon();
  const std::string router = ServerLinkLocal(fx, lab);
  std::string c1 = fx.AddNetns("c1");
  std::string conf = MacvlanConf(lab, {{"family", "ipv6"}});
  RunResult add = Mv("ADD", conf, c1, "ctr1");
  cni::Result r = MustResult(add);
  CHECK(r.ips.at(0).address.len() == 64);
  CHECK(r.ips.at(0).gateway == A(router));
  REQUIRE(r.routes.size() == 2);
  CHECK(r.routes[0].dst.ToString() == "::/0");
  CHECK(r.routes[1].dst.ToString() == "2001:db8:99::/48");
  CHECK(r.routes[1].gw == A(router));
  CHECK(absl::StrContains(MustExec(fx, c1, {"ip", "-6", "route", "show", "2001:db8:99::/48"}),
                          "via " + router + " dev eth0"));
  MustSucceed(Mv("CHECK", WithPrevResult(conf, add.out), c1, "ctr1"));
  MustSucceed(Mv("DEL", conf, c1, "ctr1"));
  lab.Finish({c1});
}

TEST_CASE("dhcp: Kea as the DHCPv6 server: four-message exchange, RENEW at T1 keeps the lease, RELEASE frees it",
          "[netns][dhcp][dhcp6]") {
  NetnsFixture fx;
  Lab lab(fx);
  // One address, T1 1 s, T2 2 s, valid 4 s: the lease outlives its first
  // valid lifetime only by renewals, and the next client gets the address
  // only once it is released.
  const std::string pool = "2001:db8:77::100";
  lab.StartKea(pool, pool, 1, 2, 4);
  RouteInfoAdvertiser advertiser(lab.server_ns);  // Kea sends no RAs
  lab.StartDaemon();
  const std::string router = ServerLinkLocal(fx, lab);
  std::string c1 = fx.AddNetns("c1");
  std::string conf = MacvlanConf(lab, {{"family", "ipv6"}});
  RunResult add = Mv("ADD", conf, c1, "ctr1");
  const auto bound = std::chrono::steady_clock::now();
  cni::Result r = MustResult(add);
  REQUIRE(r.ips.size() == 1);
  CHECK(Addr(r) == pool);
  CHECK(r.ips[0].address.len() == 64);
  CHECK(r.ips[0].gateway == A(router));
  CHECK(r.dns.nameservers == std::vector<std::string>{kServer6});
  CHECK(r.dns.search == std::vector<std::string>{"dhcp.test"});
  CHECK(lab.KeaCount("SOLICIT (type 1) received") == 1);
  CHECK(lab.KeaCount("REQUEST (type 3) received") == 1);
  CHECK(Ping(c1, A(kServer6)));
  // RENEWs by the T1 timer, from the client's link-local address.
  CHECK(WaitFor([&] { return lab.KeaCount("RENEW (type 5) received") >= 1; }, 4000));
  // Past the first valid lifetime (4 s): still bound, renewed again, same address.
  std::this_thread::sleep_until(bound + std::chrono::seconds(5));
  CHECK(lab.KeaCount("DHCP6_LEASE_RENEW") >= 2);
  CHECK(lab.KeaCount("REBIND (type 6) received") == 0);
  CHECK(lab.KeaCount("SOLICIT (type 1) received") == 1);
  MustSucceed(Mv("CHECK", WithPrevResult(conf, add.out), c1, "ctr1"));
  CHECK(Addr(MustResult(CallPlugin("dhcp", "ADD", conf, c1, "ctr1"))) == pool);
  CHECK(Ping(c1, A(kServer6)));
  CHECK(absl::StrContains(ReadFile(lab.DaemonLog()), "renewing the lease"));
  // Kea restarts without its leases (same server identifier): the next
  // RENEW binds the address again, where dnsmasq answers NoBinding.
  lab.kea.reset();
  std::filesystem::remove(lab.KeaLeases());
  lab.StartKea(pool, pool, 1, 2, 4);
  const int renewed = lab.KeaCount("DHCP6_LEASE_RENEW");  // by the Kea before the restart
  CHECK(WaitFor([&] { return lab.KeaCount("DHCP6_LEASE_RENEW") > renewed; }, 4000));
  CHECK(WaitFor([&] { return absl::StrContains(ReadFile(lab.KeaLeases()), pool + ","); }, 1000));
  CHECK(!absl::StrContains(ReadFile(lab.DaemonLog()), "no binding"));
  MustSucceed(Mv("CHECK", WithPrevResult(conf, add.out), c1, "ctr1"));
  // DEL sends RELEASE; Kea frees the address and the next client gets it.
  MustSucceed(Mv("DEL", conf, c1, "ctr1"));
  CHECK(WaitFor([&] { return lab.KeaCount("RELEASE (type 8) received") == 1; }, 3000));
  std::string c2 = fx.AddNetns("c2");
  CHECK(Addr(MustResult(Mv("ADD", conf, c2, "ctr2"))) == pool);
  MustSucceed(Mv("DEL", conf, c2, "ctr2"));
  lab.Finish({c1, c2});
}


TEST_CASE("dhcp: a DHCPv6 server that lost the binding answers RENEW with NoBinding: REQUEST gets it back",
          "[netns][dhcp][dhcp6]") {
  NetnsFixture fx;
  Lab lab(fx);
  lab.StartServer6();
  lab.StartDaemon();
  std::string c1 = fx.AddNetns("c1");
  std::string conf = MacvlanConf(lab, {{"family", "ipv6"}});
  RunResult add = Mv("ADD", conf, c1, "ctr1");
  const std::string ip = Addr(MustResult(add));
  // dnsmasq restarts without its lease file (a lease database on tmpfs
  // after a reboot), and the daemon's restart renews the lease at once.
  // Its server DUID (the lease file's "duid" line) stays: a RENEW to
  // another server's DUID is ignored (RFC 8415 16.6), not answered.
  lab.daemon->Stop(SIGTERM);
  lab.dnsmasq.reset();
  std::string duid_line;
  for (absl::string_view line : absl::StrSplit(ReadFile(lab.Leases()), '\n')) {
    if (absl::StartsWith(line, "duid ")) duid_line = std::string(line) + "\n";
  }
  REQUIRE(!duid_line.empty());
  std::ofstream(lab.Leases(), std::ios::trunc) << duid_line;
  const int started = lab.ServerCount("DHCPv6, IP range");  // the log goes on from the first start
  lab.StartServer6();
  REQUIRE(WaitFor([&] { return lab.ServerCount("DHCPv6, IP range") > started; }, 5000));
  REQUIRE(!lab.ServerHasLease(ip));
  lab.StartDaemon();
  CHECK(WaitFor([&] { return lab.ServerCount("DHCPRENEW(srv0)") == 1; }, 5000));
  // RFC 8415 18.2.10.1: a NoBinding status in the REPLY to a RENEW makes
  // the client REQUEST the address; the server binds it again.
  CHECK(WaitFor([&] { return lab.ServerHasLease(ip); }, 5000));
  CHECK(lab.ServerCount("DHCPREQUEST(srv0)") == 1);
  CHECK(lab.ServerCount("DHCPREBIND(srv0)") == 0);
  MustSucceed(Mv("CHECK", WithPrevResult(conf, add.out), c1, "ctr1"));
  CHECK(Ping(c1, A(kServer6)));
  MustSucceed(Mv("DEL", conf, c1, "ctr1"));
  CHECK(WaitFor([&] { return !lab.ServerHasLease(ip); }, 3000));
  lab.Finish({c1});
}


TEST_CASE("dhcp: two DHCPv6 servers: the ADVERTISE with the higher preference wins, not the first",
          "[netns][dhcp][dhcp6]") {
  NetnsFixture fx;
  Lab lab(fx);
  // One link, two servers: dnsmasq (and its RAs) behind mst0 with
  // preference 100, Kea without a preference (0) behind mst1 in a
  // namespace of its own, both ports of the host's bridge br0, the
  // macvlan master. Kea usually ADVERTISEs first.
  lab.kea_ns = fx.AddNetns("kea");
  lab.kea_if = "srv1";
  MustExec(fx, "", {"ip", "link", "add", "mst1", "type", "veth", "peer", "name", "srv1", "netns", lab.kea_ns});
  MustExec(fx, "", {"ip", "link", "add", "br0", "type", "bridge"});
  for (const char* port : {"mst0", "mst1"}) MustExec(fx, "", {"ip", "link", "set", port, "master", "br0", "up"});
  MustExec(fx, "", {"ip", "link", "set", "br0", "up"});
  // Kea binds to srv1's link-local address: usable at once, without DAD.
  MustExec(fx, lab.kea_ns, {"sysctl", "-qw", "net.ipv6.conf.srv1.accept_dad=0"});
  MustExec(fx, lab.kea_ns, {"ip", "link", "set", "srv1", "up"});
  lab.StartServer6("2001:db8:77::20", /*v4=*/false, {"--dhcp-option=option6:7,100"});
  lab.StartKea("2001:db8:77::100", "2001:db8:77::100", 60, 90, 120);
  lab.StartDaemon();
  std::string c1 = fx.AddNetns("c1");
  // Without Rapid Commit: dnsmasq would otherwise REPLY at once, which ends the wait.
  std::string conf = Json{{"cniVersion", "1.1.0"}, {"name", "dhcpnet"}, {"type", "macvlan"}, {"master", "br0"},
                          {"ipam", DhcpIpam(lab, {{"family", "ipv6"}, {"rapidCommit", false}})}}
                         .dump();
  cni::Result r = MustResult(Mv("ADD", conf, c1, "ctr1"));
  // Both servers advertised; the client REQUESTed dnsmasq's address.
  CHECK(lab.ServerCount("DHCPADVERTISE(srv0)") == 1);
  CHECK(lab.KeaCount("DHCP6_LEASE_ADVERT") == 1);
  const std::string ip = Addr(r);
  CHECK(ip != "2001:db8:77::100");
  CHECK(lab.ServerCount("DHCPREQUEST(srv0)") == 1);
  CHECK(lab.ServerHasLease(ip));  // from dnsmasq's range, ::10 to ::20
  CHECK(lab.KeaCount("REQUEST (type 3) received") == 0);
  CHECK(Ping(c1, A(kServer6)));
  MustSucceed(Mv("DEL", conf, c1, "ctr1"));
  CHECK(WaitFor([&] { return !lab.ServerHasLease(ip); }, 3000));
  lab.Finish({c1, lab.kea_ns}, {"br0", "mst1"});
}

// ipMasq of ptp and bridge, both backends: a container reaches a server in a
// namespace playing "outside" that has no route back to the container subnet,
// and the server sees the host's address. All firewall work happens in the
// fixture's private namespace.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cni/json.h"
#include "support/netns_fixture.h"
#include "support/run.h"

extern char** environ;

namespace {

using cni::Json;
using cni::test::NetnsFixture;
using cni::test::PluginCall;
using cni::test::RunPlugin;
using cni::test::RunResult;
using cni::test::TempDir;

constexpr const char* kEnvPath = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";

// socat server in a namespace, bounded by `timeout`, killed on scope exit.
class Server {
 public:
  Server(const std::string& netns, const std::vector<std::string>& argv) {
    std::vector<std::string> full = {"/usr/bin/timeout", "120", "/usr/bin/nsenter", "--net=" + netns, "--"};
    full.insert(full.end(), argv.begin(), argv.end());
    std::vector<char*> cargv;
    for (std::string& s : full) cargv.push_back(s.data());
    cargv.push_back(nullptr);
    if (posix_spawn(&pid_, cargv[0], nullptr, nullptr, cargv.data(), environ) != 0) pid_ = -1;
  }
  ~Server() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
  }
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

 private:
  pid_t pid_ = -1;
};

// What the server answered (it prints its environment: SOCAT_PEERADDR is
// the client address it saw), retried while it starts.
std::string Ask(const std::string& netns, const std::string& addr) {
  std::string out;
  for (int i = 0; i < 12 && out.empty(); ++i) {
    out = cni::test::RunProcess({"/usr/bin/nsenter", "--net=" + netns, "--", "/usr/bin/socat", "-T", "2", "-t", "2",
                                 "-", addr},
                                {kEnvPath}, "", 8000)
              .out;
    if (out.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  return out;
}

void Must(const RunResult& r, const char* what) {
  INFO(what << ": exit " << r.exit_code << "\nout: " << r.out << "\nerr: " << r.err);
  REQUIRE(r.exit_code == 0);
}

RunResult Plugin(const std::string& type, const std::string& command, const std::string& conf,
                 const std::string& netns, const std::string& id, const std::string& dir = "") {
  PluginCall call;
  call.command = command;
  call.container_id = id;
  call.netns = netns;
  call.ifname = "eth0";
  call.config = conf;
  if (!dir.empty()) call.path = dir;
  return RunPlugin(type, call, dir);
}

std::string Conf(const std::string& type, const std::string& backend, const TempDir& dir,
                 const std::string& version = "1.0.0") {
  Json c = {{"cniVersion", version}, {"name", "masqnet"}, {"type", type}, {"ipMasq", true},
            {"ipam", {{"type", "host-local"}, {"dataDir", dir.str()},
                      {"ranges", Json::array({Json::array({{{"subnet", "10.77.0.0/24"}}})})},
                      {"routes", Json::array({{{"dst", "0.0.0.0/0"}}})}}}};
  if (type == "bridge") {
    c["bridge"] = "cni0";
    c["isGateway"] = true;
  }
  if (!backend.empty()) c["ipMasqBackend"] = backend;
  return c.dump();
}

std::string Firewall(const NetnsFixture& fx) {
  return fx.Exec("", {"iptables-save", "-t", "nat"}).out + fx.Exec("", {"nft", "list", "ruleset"}).out;
}

// The "outside": 203.0.113.2 behind the host's 203.0.113.1, no route back.
std::string MakeOutside(NetnsFixture& fx) {
  std::string out = fx.AddNetns("outside");
  Must(fx.Exec("", {"ip", "link", "add", "uplink", "type", "veth", "peer", "name", "eth0", "netns", "outside"}), "veth");
  Must(fx.Exec("", {"ip", "addr", "add", "203.0.113.1/24", "dev", "uplink"}), "addr");
  Must(fx.Exec("", {"ip", "link", "set", "uplink", "up"}), "up");
  Must(fx.Exec(out, {"ip", "addr", "add", "203.0.113.2/24", "dev", "eth0"}), "addr");
  Must(fx.Exec(out, {"ip", "link", "set", "eth0", "up"}), "up");
  return out;
}

}  // namespace

TEST_CASE("ipmasq: the outside sees the host's address and DEL removes the rules", "[netns][ipmasq]") {
  NetnsFixture fx;
  std::string type = GENERATE(as<std::string>{}, "ptp", "bridge");
  std::string backend = GENERATE(as<std::string>{}, "iptables", "nftables");
  INFO(type << " with " << backend);
  TempDir dir;
  std::string outside = MakeOutside(fx);
  Server server(outside, {"/usr/bin/socat", "TCP-LISTEN:7000,reuseaddr,fork", "EXEC:/usr/bin/env"});
  std::string ctr = fx.AddNetns("ctr");
  std::string conf = Conf(type, backend, dir);
  Must(Plugin(type, "ADD", conf, ctr, "ctr-m"), "ADD");

  std::string seen = Ask(ctr, "TCP:203.0.113.2:7000,connect-timeout=2");
  CHECK(absl::StrContains(seen, "SOCAT_PEERADDR=203.0.113.1"));
  CHECK_FALSE(absl::StrContains(seen, "10.77.0."));
  std::string fw = Firewall(fx);
  if (backend == "iptables") {
    CHECK(absl::StrContains(fw, "id: \\\"ctr-m\\\""));
  } else {
    CHECK(absl::StrContains(fw, "table inet cni_plugins_masquerade"));
    CHECK(absl::StrContains(fw, "id: ctr-m"));
  }

  Must(Plugin(type, "DEL", conf, ctr, "ctr-m"), "DEL");
  CHECK_FALSE(absl::StrContains(Firewall(fx), "ctr-m"));
  Must(Plugin(type, "DEL", conf, ctr, "ctr-m"), "DEL again");
}

TEST_CASE("ipmasq: nftables GC removes only unlisted attachments", "[netns][ipmasq]") {
  NetnsFixture fx;
  TempDir dir;
  std::string a = fx.AddNetns("a");
  std::string b = fx.AddNetns("b");
  std::string conf = Conf("ptp", "nftables", dir, "1.1.0");
  Must(Plugin("ptp", "ADD", conf, a, "ctr-a"), "ADD a");
  Must(Plugin("ptp", "ADD", conf, b, "ctr-b"), "ADD b");
  Json gc = Json::parse(conf);
  gc["cni.dev/valid-attachments"] = Json::array({{{"containerID", "ctr-b"}, {"ifname", "eth0"}}});
  Must(Plugin("ptp", "GC", gc.dump(), "", ""), "GC");
  std::string fw = Firewall(fx);
  CHECK_FALSE(absl::StrContains(fw, "id: ctr-a"));
  CHECK(absl::StrContains(fw, "id: ctr-b"));
  Must(Plugin("ptp", "DEL", conf, b, "ctr-b"), "DEL b");
  Must(Plugin("ptp", "DEL", conf, a, "ctr-a"), "DEL a");
}

TEST_CASE("ipmasq: upstream ptp adds and ours deletes and the reverse", "[netns][ipmasq][differential]") {
  NetnsFixture fx;
  bool upstream_adds = GENERATE(true, false);
  TempDir dir;
  std::string ctr = fx.AddNetns("ctr");
  // Upstream 1.1.1 knows only iptables (no ipMasqBackend key).
  std::string conf = Conf("ptp", "", dir);
  Must(Plugin("ptp", "ADD", conf, ctr, "ctr-u", upstream_adds ? "/usr/lib/cni" : ""), "ADD");
  CHECK(absl::StrContains(Firewall(fx), "id: \\\"ctr-u\\\""));
  Must(Plugin("ptp", "DEL", conf, ctr, "ctr-u", upstream_adds ? "" : "/usr/lib/cni"), "DEL");
  std::string fw = Firewall(fx);
  CHECK_FALSE(absl::StrContains(fw, "ctr-u"));
  CHECK_FALSE(absl::StrContains(fw, ":CNI-"));
}

// route-example, run the way a container runtime runs it: CNI_* environment,
// the configuration on stdin, the result or a CNI error document on stdout.
//
// The protocol tests need no privileges. The namespace test needs root: it
// moves this test process into a private network and mount namespace first
// (so nothing it does can reach the machine's own interfaces and routes),
// creates a container namespace with a veth "eth0" in it, and checks the
// kernel's routing table after ADD, CHECK and DEL. (The SDK's own suite does
// the same with tests/support/netns_fixture.h.)
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cni/base/exec.h"
#include "cni/base/json.h"

namespace {

using cni::Json;

struct Out {
  int exit_code = -1;
  std::string out;
  std::string err;
  Json json() const {
    INFO("stdout: " << out << "\nstderr: " << err);
    absl::StatusOr<Json> j = cni::ParseJson(out);
    REQUIRE(j.ok());
    return *j;
  }
};

// One plugin invocation. An empty `command` leaves CNI_COMMAND unset.
Out Plugin(const std::string& command, const Json& conf, const std::string& netns = "/run/netns/none") {
  std::vector<std::string> env = {"CNI_CONTAINERID=ctr-route-1", "CNI_NETNS=" + netns, "CNI_IFNAME=eth0",
                                  "CNI_PATH=/opt/cni/bin", "PATH=/usr/sbin:/usr/bin:/sbin:/bin"};
  if (!command.empty()) env.push_back("CNI_COMMAND=" + command);
  absl::StatusOr<cni::CommandResult> r = cni::RunCommand({ROUTE_EXAMPLE_BIN}, env, cni::Dump(conf));
  REQUIRE(r.ok());
  return Out{r->exit_code, r->out, r->err};
}

Json Conf(Json routes, Json prev_result = nullptr, const std::string& version = "1.0.0") {
  Json conf = {{"cniVersion", version}, {"name", "route-net"}, {"type", "route-example"}, {"routes", routes}};
  if (!prev_result.is_null()) conf["prevResult"] = prev_result;
  return conf;
}

Json PrevResult(const std::string& netns, const std::string& version = "1.0.0") {
  return {{"cniVersion", version},
          {"interfaces", {{{"name", "eth0"}, {"mac", "0a:58:0a:01:00:05"}, {"sandbox", netns}}}},
          {"ips", {{{"address", "10.1.0.5/24"}, {"gateway", "10.1.0.1"}, {"interface", 0}}}}};
}

const Json kRoutes = {{{"dst", "192.0.2.0/24"}, {"gw", "10.1.0.1"}}, {{"dst", "198.51.100.0/24"}}};

void RequireError(const Out& r, int code) {
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.exit_code == 1);
  Json j = r.json();
  CHECK(j["code"] == code);
  CHECK_FALSE(j["msg"].get<std::string>().empty());
}

// Runs a program (absolute path, no shell) and requires success.
std::string Exec(const std::vector<std::string>& argv) {
  absl::StatusOr<cni::CommandResult> r = cni::RunCommand(argv, {"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}, "");
  REQUIRE(r.ok());
  INFO(argv[0] << " " << argv[1] << ": " << r->err);
  REQUIRE(r->exit_code == 0);
  return r->out;
}

std::string IpTool() {
  for (const char* p : {"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"}) {
    if (access(p, X_OK) == 0) return p;
  }
  return "";
}

// Root only: a private network + mount namespace for this process (children
// inherit it) with a private /run/netns and /var/lib (the plugin's records
// go to /var/lib/cni), entered once, before any thread exists.
bool EnterPrivateNamespaces() {
  static const bool ok = [] {
    if (unshare(CLONE_NEWNET | CLONE_NEWNS) != 0) return false;
    if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return false;
    for (const char* dir : {"/run/netns", "/var/lib"}) {
      mkdir(dir, 0755);
      if (mount("tmpfs", dir, "tmpfs", 0, "mode=0755") != 0) return false;
    }
    return true;
  }();
  return ok;
}

// A container namespace /run/netns/<name>, deleted when the test case ends
// (also when it failed).
class ContainerNetns {
 public:
  ContainerNetns(std::string ip, std::string name) : ip_(std::move(ip)), name_(std::move(name)) {
    Exec({ip_, "netns", "add", name_});
  }
  ~ContainerNetns() { (void)cni::RunCommand({ip_, "netns", "del", name_}, {}, ""); }
  std::string path() const { return "/run/netns/" + name_; }

 private:
  std::string ip_, name_;
};

}  // namespace

TEST_CASE("the about line names the plugin, the version and the SDK") {
  Out r = Plugin("", Json::object());
  CHECK(r.exit_code == 0);
  CHECK(r.out.empty());
  CHECK(r.err.find("CNI route-example plugin ") == 0);
  CHECK(r.err.find("(cni-cpp)") != std::string::npos);
}

TEST_CASE("VERSION lists 0.3.0 and later") {
  Json j = Plugin("VERSION", Conf(kRoutes)).json();
  std::vector<std::string> versions = j["supportedVersions"];
  CHECK(std::find(versions.begin(), versions.end(), "0.3.0") != versions.end());
  CHECK(std::find(versions.begin(), versions.end(), "1.1.0") != versions.end());
  CHECK(std::find(versions.begin(), versions.end(), "0.2.0") == versions.end());
}

TEST_CASE("configuration errors are CNI errors, before any kernel work") {
  RequireError(Plugin("ADD", Conf(kRoutes)), 7);  // no prevResult: not chained
  RequireError(Plugin("ADD", Conf({{{"dst", "192.0.2.0"}}}, PrevResult("/run/netns/none"))), 7);
  RequireError(Plugin("ADD", Conf({{{"dst", "192.0.2.0/24"}, {"gw", "fd00::1"}}}, PrevResult("/x"))), 7);
  RequireError(Plugin("ADD", Conf({{{"gw", "10.1.0.1"}}}, PrevResult("/x"))), 7);
  RequireError(Plugin("ADD", Conf("not-a-list", PrevResult("/x"))), 6);
  RequireError(Plugin("STATUS", Conf({{{"dst", "nonsense"}}}, nullptr, "1.1.0")), 7);
  RequireError(Plugin("ADD", Conf(kRoutes, PrevResult("/x"), "0.2.0")), 1);  // version not supported
}

TEST_CASE("STATUS GC DEL without a namespace succeed") {
  CHECK(Plugin("STATUS", Conf(kRoutes, nullptr, "1.1.0")).exit_code == 0);  // STATUS: 1.1.0
  Json gc = Conf(kRoutes, nullptr, "1.1.0");
  gc["cni.dev/valid-attachments"] = Json::array();
  CHECK(Plugin("GC", gc).exit_code == 0);
  Out del = Plugin("DEL", Conf(kRoutes), "/run/netns/does-not-exist");
  INFO(del.out << del.err);
  CHECK(del.exit_code == 0);
}

TEST_CASE("ADD with no routes passes prevResult through") {
  Json prev = PrevResult("/run/netns/none");
  Out r = Plugin("ADD", Conf(Json::array(), prev));
  REQUIRE(r.exit_code == 0);
  CHECK(r.json() == prev);
}

TEST_CASE("ADD CHECK DEL in a container namespace (root)") {
  if (geteuid() != 0 || IpTool().empty()) {
    WARN("skipped: needs root and iproute2");
    return;
  }
  REQUIRE(EnterPrivateNamespaces());
  const std::string ip = IpTool();
  ContainerNetns container(ip, "route-example");
  const std::string netns = container.path();
  // A veth pair inside the container stands in for an interface plugin's work.
  Exec({ip, "-n", "route-example", "link", "add", "eth0", "type", "veth", "peer", "name", "peer0"});
  Exec({ip, "-n", "route-example", "link", "set", "peer0", "up"});
  Exec({ip, "-n", "route-example", "addr", "add", "10.1.0.5/24", "dev", "eth0"});
  Exec({ip, "-n", "route-example", "link", "set", "eth0", "up"});
  auto routes = [&] { return Exec({ip, "-n", "route-example", "-4", "route", "show"}); };

  for (const std::string version : {"0.4.0", "1.0.0", "1.1.0"}) {
    SECTION("cniVersion " + version) {
      Json conf = Conf(kRoutes, PrevResult(netns, version), version);
      Out add = Plugin("ADD", conf, netns);
      INFO("ADD: " << add.out << add.err);
      REQUIRE(add.exit_code == 0);
      Json result = add.json();
      CHECK(result["cniVersion"] == version);
      CHECK(result["ips"][0]["address"] == "10.1.0.5/24");  // prevResult passed through
      REQUIRE(result["routes"].size() == 2);
      CHECK(result["routes"][0] == Json({{"dst", "192.0.2.0/24"}, {"gw", "10.1.0.1"}}));
      CHECK(result["routes"][1] == Json({{"dst", "198.51.100.0/24"}}));
      std::string table = routes();
      CHECK(table.find("192.0.2.0/24 via 10.1.0.1 dev eth0") != std::string::npos);
      CHECK(table.find("198.51.100.0/24 dev eth0") != std::string::npos);

      // CHECK sees them; with prevResult = ADD's result, as a runtime sends it.
      Json check_conf = conf;
      check_conf["prevResult"] = result;
      Out check = Plugin("CHECK", check_conf, netns);
      INFO("CHECK: " << check.out << check.err);
      CHECK(check.exit_code == 0);

      Exec({ip, "-n", "route-example", "route", "del", "192.0.2.0/24"});
      RequireError(Plugin("CHECK", check_conf, netns), 999);  // a mismatch, not a bad config

      // DEL removes what is left and is idempotent.
      CHECK(Plugin("DEL", conf, netns).exit_code == 0);
      CHECK(routes().find("198.51.100.0/24") == std::string::npos);
      CHECK(Plugin("DEL", conf, netns).exit_code == 0);
    }
  }

  SECTION("a failed ADD rolls back the routes it added") {
    // The second gateway is not on any connected network: the kernel refuses it.
    Json bad = {{{"dst", "192.0.2.0/24"}, {"gw", "10.1.0.1"}}, {{"dst", "203.0.113.0/24"}, {"gw", "10.9.9.9"}}};
    Out add = Plugin("ADD", Conf(bad, PrevResult(netns)), netns);
    INFO("ADD: " << add.out << add.err);
    CHECK(add.exit_code == 1);
    CHECK(add.json()["msg"].get<std::string>().find("203.0.113.0/24") != std::string::npos);
    CHECK(routes().find("192.0.2.0/24") == std::string::npos);
  }

  SECTION("ADD on an interface that is not there fails and changes nothing") {
    Json prev = PrevResult(netns);
    Out add = Plugin("ADD", Conf(kRoutes, prev), "/run/netns/does-not-exist");
    CHECK(add.exit_code == 1);
    CHECK(add.json()["code"] == 3);  // unknown container
  }
}

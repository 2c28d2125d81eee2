// route-example's tests, written with the SDK's test kit (cni::testing) only.
//
// The plugin is run the way a container runtime runs it: the built binary
// (found through CNI_PLUGIN_DIR, which CMakeLists.txt sets for ctest), with
// CNI_* in the environment and the configuration on stdin. The protocol
// checks also run in process on the same command table (Funcs()).
//
// The protocol tests need no privileges. The namespace test needs root: the
// kit's NetnsFixture moves the test into a private host namespace (with
// private /run and /var/lib/cni), so nothing it does reaches the machine; it
// makes a container namespace with a veth "eth0", and checks the kernel's
// routes after ADD, CHECK and DEL, the result against golden files for every
// version, and that nothing is left behind.
#define CATCH_CONFIG_MAIN
#include <unistd.h>

#include <string>
#include <vector>

#include "cni/protocol/version.h"
#include "cni/testing/call.h"
#include "cni/testing/catch.h"
#include "cni/testing/netns.h"
#include "route_example.h"

namespace {

using cni::Json;
using cni::testing::HasInterface;
using cni::testing::HasIp;
using cni::testing::HasRoute;
using cni::testing::IsCniError;
using cni::testing::MatchesGolden;
using cni::testing::MustResult;
using cni::testing::MustSucceed;
using cni::testing::Plugin;
using cni::testing::RunResult;
using cni::testing::Succeeded;

// The built binary, and the same command table in this process; called with
// CNI_NETNS naming a namespace that is not there (enough until the plugin
// needs the kernel).
Plugin WithNetns(Plugin plugin, const std::string& netns = "/run/netns/none") {
  plugin.defaults.netns = netns;
  return plugin;
}
Plugin Binary() { return WithNetns(Plugin::FromEnv("route-example")); }
Plugin InProcess() {
  // The name, which the binary takes from its file name: skel's own messages
  // begin with it.
  return WithNetns(Plugin::InProcess(
      route_example::Funcs(),
      {route_example::SupportedVersions(), cni::AboutLine("route-example"), "route-example"}));
}

Json Conf(Json routes, Json prev_result = nullptr, const std::string& version = "1.0.0") {
  Json conf = {{"cniVersion", version}, {"name", "route-net"}, {"type", "route-example"}, {"routes", routes}};
  if (!prev_result.is_null()) conf["prevResult"] = prev_result;
  return conf;
}

// What the interface plugin before us in the chain returned.
Json PrevResult(const std::string& netns, const std::string& version = "1.0.0") {
  return {{"cniVersion", version},
          {"interfaces", {{{"name", "eth0"}, {"mac", "0a:58:0a:01:00:05"}, {"sandbox", netns}}}},
          {"ips", {{{"address", "10.1.0.5/24"}, {"gateway", "10.1.0.1"}, {"interface", 0}}}}};
}

const Json kRoutes = {{{"dst", "192.0.2.0/24"}, {"gw", "10.1.0.1"}}, {{"dst", "198.51.100.0/24"}}};

}  // namespace

TEST_CASE("the about line names the plugin, the version and the SDK") {
  RunResult r = Binary().About();
  CHECK_THAT(r, Succeeded());
  CHECK(r.out.empty());
  CHECK(r.err.find("CNI route-example plugin ") == 0);
  CHECK(r.err.find("(cni-cpp)") != std::string::npos);
}

TEST_CASE("VERSION lists 0.3.0 and later") {
  RunResult r = Binary().Version(Conf(kRoutes));
  MustSucceed(r, "VERSION");
  std::vector<std::string> versions = Json::parse(r.out)["supportedVersions"];
  CHECK(versions == cni::VersionsFrom("0.3.0"));
}

TEST_CASE("configuration errors are CNI errors, before any kernel work") {
  for (const Plugin& plugin : {Binary(), InProcess()}) {
    INFO((plugin.path().empty() ? "in process" : plugin.path()));
    CHECK_THAT(plugin.Add(Conf(kRoutes)), IsCniError(7, "prevResult missing"));  // not chained
    CHECK_THAT(plugin.Add(Conf({{{"dst", "192.0.2.0"}}}, PrevResult("/x"))), IsCniError(7, "192.0.2.0"));
    CHECK_THAT(plugin.Add(Conf({{{"dst", "192.0.2.0/24"}, {"gw", "fd00::1"}}}, PrevResult("/x"))),
               IsCniError(7, "fd00::1"));
    CHECK_THAT(plugin.Add(Conf({{{"gw", "10.1.0.1"}}}, PrevResult("/x"))), IsCniError(7, "\"dst\""));
    CHECK_THAT(plugin.Add(Conf("not-a-list", PrevResult("/x"))), IsCniError(6, "routes"));
    CHECK_THAT(plugin.Status(Conf({{{"dst", "nonsense"}}}, nullptr, "1.1.0")), IsCniError(7));
    CHECK_THAT(plugin.Add(Conf(kRoutes, PrevResult("/x"), "0.2.0")), IsCniError(1));  // version not supported
    // Not JSON at all: skel's own error, named by the plugin as the others are.
    cni::testing::Invocation garbled = plugin.defaults;
    garbled.command = "ADD";
    garbled.config = "{\"cniVersion\": ";
    RunResult r = plugin.Run(garbled);
    CHECK_THAT(r, IsCniError(6));
    CHECK(cni::testing::ErrorMessage(r).rfind("route-example: decoding network configuration: ", 0) == 0);
  }
}

TEST_CASE("STATUS GC DEL without a namespace succeed") {
  Plugin plugin = Binary();
  CHECK_THAT(plugin.Status(Conf(kRoutes, nullptr, "1.1.0")), Succeeded());  // STATUS: 1.1.0
  CHECK_THAT(plugin.Gc(cni::testing::WithValidAttachments(Conf(kRoutes, nullptr, "1.1.0"), {})), Succeeded());
  plugin.defaults.netns = "/run/netns/does-not-exist";
  CHECK_THAT(plugin.Del(Conf(kRoutes)), Succeeded());
  // A "routes" key ADD would refuse does not stop the teardown (Teardown).
  CHECK_THAT(plugin.Del(Conf("not-a-list")), Succeeded());
  CHECK_THAT(plugin.Gc(cni::testing::WithValidAttachments(Conf({{{"dst", "x"}}}, nullptr, "1.1.0"), {})),
             Succeeded());
}

TEST_CASE("ADD with no routes passes prevResult through") {
  Plugin plugin = Binary();
  Json prev = PrevResult("/run/netns/none");
  RunResult r = plugin.Add(Conf(Json::array(), prev));
  MustSucceed(r);
  CHECK(Json::parse(r.out) == prev);
}

TEST_CASE("ADD CHECK DEL in a container namespace (root)") {
  if (geteuid() != 0) {
    WARN("skipped: needs root");
    return;
  }
  cni::testing::NetnsFixture fx;  // first: everything below stays in private namespaces
  const std::string netns = fx.AddNetns("route-example");
  auto ip = [&](const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"ip"};
    argv.insert(argv.end(), args.begin(), args.end());
    RunResult r = fx.Exec(netns, argv);
    MustSucceed(r, "ip");
    return r.out;
  };
  // A veth pair inside the container stands in for an interface plugin's work.
  ip({"link", "add", "eth0", "type", "veth", "peer", "name", "peer0"});
  ip({"link", "set", "peer0", "up"});
  ip({"addr", "add", "10.1.0.5/24", "dev", "eth0"});
  ip({"link", "set", "eth0", "up"});
  auto routes = [&] { return ip({"-4", "route", "show"}); };
  Plugin plugin = Binary();
  plugin.defaults.netns = netns;

  for (const std::string version : {"0.4.0", "1.0.0", "1.1.0"}) {
    SECTION("cniVersion " + version) {
      Json conf = Conf(kRoutes, PrevResult(netns, version), version);
      RunResult add = plugin.Add(conf);
      cni::Result result = MustResult(add);
      CHECK(result.cni_version == version);
      CHECK_THAT(result, HasInterface("eth0", netns) && HasIp("10.1.0.5/24", "10.1.0.1", "eth0"));
      CHECK_THAT(result, HasRoute("192.0.2.0/24", "10.1.0.1") && HasRoute("198.51.100.0/24", "-"));
      // The result as every version this plugin speaks prints it (test/golden/).
      CHECK_THAT(result, MatchesGolden(ROUTE_EXAMPLE_GOLDEN_DIR, "add",
                                       {.versions = route_example::SupportedVersions()}));
      std::string table = routes();
      CHECK(table.find("192.0.2.0/24 via 10.1.0.1 dev eth0") != std::string::npos);
      CHECK(table.find("198.51.100.0/24 dev eth0") != std::string::npos);

      // CHECK sees them, with prevResult = ADD's result, as a runtime sends it.
      Json check_conf = cni::testing::WithPrevResult(conf, add);
      CHECK_THAT(plugin.Check(check_conf), Succeeded());
      ip({"route", "del", "192.0.2.0/24"});
      CHECK_THAT(plugin.Check(check_conf), IsCniError(999, "192.0.2.0/24"));  // a mismatch, not a bad config

      // DEL removes what is left and is idempotent.
      CHECK_THAT(plugin.Del(conf), Succeeded());
      CHECK(routes().find("198.51.100.0/24") == std::string::npos);
      CHECK_THAT(plugin.Del(conf), Succeeded());
    }
  }

  SECTION("DEL removes the recorded routes when the configuration's no longer parse") {
    RunResult add = plugin.Add(Conf(kRoutes, PrevResult(netns)));
    MustSucceed(add, "ADD");
    CHECK(routes().find("192.0.2.0/24 via 10.1.0.1 dev eth0") != std::string::npos);
    CHECK_THAT(plugin.Del(Conf({{{"dst", "192.0.2.0/33"}}})), Succeeded());  // ADD would say code 7
    std::string table = routes();
    CHECK(table.find("192.0.2.0/24") == std::string::npos);
    CHECK(table.find("198.51.100.0/24") == std::string::npos);
  }

  SECTION("a failed ADD rolls back the routes it added") {
    // The second gateway is not on any connected network: the kernel refuses it.
    Json bad = {{{"dst", "192.0.2.0/24"}, {"gw", "10.1.0.1"}}, {{"dst", "203.0.113.0/24"}, {"gw", "10.9.9.9"}}};
    CHECK_THAT(plugin.Add(Conf(bad, PrevResult(netns))), IsCniError(999, "203.0.113.0/24"));
    CHECK(routes().find("192.0.2.0/24") == std::string::npos);
  }

  SECTION("ADD into a namespace that is not there fails and changes nothing") {
    Plugin elsewhere = plugin;
    elsewhere.defaults.netns = "/run/netns/does-not-exist";
    CHECK_THAT(elsewhere.Add(Conf(kRoutes, PrevResult(netns))), IsCniError(3));  // unknown container
  }

  fx.DelNetns(netns);
  CHECK(fx.Leftovers().empty());
}

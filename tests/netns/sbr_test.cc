// The sbr plugin through the CNI protocol, chained after bridge: real traffic
// on a container with two interfaces (replies leave through the interface
// their request came in on), every version, gateways, addSourceHints, a fixed
// table, rollback, bad input, concurrent ADDs and upstream's plugin side by
// side.
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "cni/base/ip.h"
#include "cni/base/json.h"
#include "support/cni_call.h"
#include "support/netns_fixture.h"
#include "support/netns_tools.h"
#include "support/run.h"

namespace {

using cni::Json;
using namespace cni::test;  // NOLINT: test brevity

cni::net::IpAddress Ip(const char* text) { return *cni::net::IpAddress::Parse(text); }

// What sbr changes in a namespace: rules and the routes of the main table
// and of the tables it may use, per family.
std::string RoutingState(const NetnsFixture& fx, const std::string& ns) {
  std::string out;
  for (const char* family : {"-4", "-6"}) {
    out += MustExec(fx, ns, {"ip", family, "rule"});
    for (const char* table : {"main", "100", "101", "102", "5001"}) {
      RunResult r = fx.Exec(ns, {"ip", family, "route", "show", "table", table});
      out += std::string("table ") + table + ":\n" + r.out;
    }
  }
  return out;
}

// The sbr configuration for `ifname`'s ADD result `prev` (the bridge's output).
std::string SbrConf(const std::string& version, const std::string& prev, const Json& keys = Json::object()) {
  return NetConf(version, "sbrnet", "sbr", keys, Json::parse(prev)).dump();
}

// The routers' side of the two-network scene (see the first case).
void Routers(NetnsFixture& fx, std::vector<std::string>& spaces) {
  for (int n : {1, 2}) {
    std::string i = std::to_string(n);
    std::string router = fx.AddNetns("r" + i), client = fx.AddNetns("cli" + i);
    spaces.push_back(router);
    spaces.push_back(client);
    MustExecLines(fx, "",
           "ip link add br" + i + " type bridge\n"
           "ip link set br" + i + " up\n"
           "ip link add lan" + i + " type veth peer name up" + i + "\n"
           "ip link set up" + i + " master br" + i + " up\n"
           "ip link set lan" + i + " netns r" + i + "\n"
           "ip link add wan" + i + " netns r" + i + " type veth peer name eth0 netns cli" + i);
    MustExecLines(fx, router,
           "ip link set lo up\nip link set lan" + i + " up\nip link set wan" + i + " up\n"
           "ip addr add 10.10." + i + ".1/24 dev lan" + i + "\n"
           "ip addr add 192.168." + i + ".1/24 dev wan" + i + "\n"
           "sysctl -qw net.ipv4.ip_forward=1");
    MustExecLines(fx, client,
           "ip link set lo up\nip link set eth0 up\n"
           "ip addr add 192.168." + i + ".2/24 dev eth0\n"
           "ip route add default via 192.168." + i + ".1");
  }
}

std::string BridgeConf(const std::string& version, int n, bool default_route) {
  std::string i = std::to_string(n);
  Json conf = NetConf(version, "net" + i, "bridge", {{"bridge", "br" + i}});
  conf["ipam"] = StaticIpam("10.10." + i + ".2/24", "10.10." + i + ".1",
                            default_route ? Json::array({{{"dst", "0.0.0.0/0"}}}) : Json::array());
  return conf.dump();
}

}  // namespace

// Two routers, each the gateway of one network with a client behind it; the
// container is on both networks, its main table's default route through
// eth0. A client behind the second router reaches the container's eth1
// address only with sbr: without it the reply leaves through eth0, towards a
// router with no route back.
TEST_CASE("sbr: replies leave through the interface the request came in on, two networks", "[netns][sbr]") {
  NetnsFixture fx;
  std::vector<std::string> spaces;
  Routers(fx, spaces);
  std::string ctr = fx.AddNetns("ctr");
  MustExec(fx, ctr, {"ip", "link", "set", "lo", "up"});
  RunResult eth0 = CallPlugin("bridge", "ADD", BridgeConf("1.0.0", 1, true), ctr, "c1", OnInterface("eth0"));
  MustSucceed(eth0, "bridge ADD eth0");
  RunResult eth1 = CallPlugin("bridge", "ADD", BridgeConf("1.0.0", 2, false), ctr, "c1", OnInterface("eth1"));
  MustSucceed(eth1, "bridge ADD eth1");
  std::string cli1 = spaces[1], cli2 = spaces[3];

  // The control: the first network answers, the second does not.
  CHECK(Ping(cli1, Ip("10.10.1.2")));
  CHECK_FALSE(Ping(cli2, Ip("10.10.2.2"), 1500));

  std::string sbr = SbrConf("1.0.0", eth1.out);
  RunResult add = CallPlugin("sbr", "ADD", sbr, ctr, "c1", OnInterface("eth1"));
  MustSucceed(add, "sbr ADD");
  CHECK(Json::parse(add.out) == Json::parse(eth1.out));
  std::string rules = MustExec(fx, ctr, {"ip", "rule"});
  INFO(rules);
  CHECK(absl::StrContains(rules, "from 10.10.2.2 lookup 100"));
  std::string t100 = MustExec(fx, ctr, {"ip", "route", "show", "table", "100"});
  CHECK(absl::StrContains(t100, "default via 10.10.2.1 dev eth1"));
  CHECK(absl::StrContains(t100, "10.10.2.0/24 dev eth1 proto kernel scope link src 10.10.2.2"));
  std::string main = MustExec(fx, ctr, {"ip", "route", "show", "table", "main"});
  CHECK_FALSE(absl::StrContains(main, "eth1"));
  CHECK(absl::StrContains(main, "default via 10.10.1.1 dev eth0"));

  // Both networks answer, pings and TCP.
  CHECK(Ping(cli2, Ip("10.10.2.2")));
  CHECK(Ping(cli1, Ip("10.10.1.2")));
  {
    BackgroundProcess server(ctr, {"/usr/bin/socat", "TCP-LISTEN:7000,reuseaddr,fork", "EXEC:/bin/echo ctr"});
    std::string got;
    for (int i = 0; i < 50 && got.empty(); ++i) got = SocatExchange(cli2, "TCP:10.10.2.2:7000,connect-timeout=1");
    CHECK(got == "ctr\n");
    CHECK(SocatExchange(cli1, "TCP:10.10.1.2:7000,connect-timeout=1") == "ctr\n");
  }
  MustSucceed(CallPlugin("sbr", "CHECK", WithPrevResult(sbr, add.out), ctr, "c1", OnInterface("eth1")), "sbr CHECK");

  // DEL: the rule and table 100 go, the second network is unreachable again.
  MustSucceed(CallPlugin("sbr", "DEL", sbr, ctr, "c1", OnInterface("eth1")), "sbr DEL");
  CHECK_FALSE(absl::StrContains(MustExec(fx, ctr, {"ip", "rule"}), "lookup 100"));
  CHECK(fx.Exec(ctr, {"ip", "route", "show", "table", "100"}).out.empty());
  CHECK_FALSE(Ping(cli2, Ip("10.10.2.2"), 1500));
  RunResult check = CallPlugin("sbr", "CHECK", WithPrevResult(sbr, add.out), ctr, "c1", OnInterface("eth1"));
  CHECK(check.exit_code != 0);
  MustSucceed(CallPlugin("sbr", "DEL", sbr, ctr, "c1", OnInterface("eth1")), "second sbr DEL");

  MustSucceed(CallPlugin("bridge", "DEL", BridgeConf("1.0.0", 2, false), ctr, "c1", OnInterface("eth1")));
  MustSucceed(CallPlugin("bridge", "DEL", BridgeConf("1.0.0", 1, true), ctr, "c1", OnInterface("eth0")));
  // DEL after the interface and after the namespace are gone.
  MustSucceed(CallPlugin("sbr", "DEL", sbr, ctr, "c1", OnInterface("eth1")), "sbr DEL without the interface");
  spaces.push_back(ctr);
  TearDown(fx, spaces, {"br1", "br2"});
  MustSucceed(CallPlugin("sbr", "DEL", sbr, ctr, "c1", OnInterface("eth1")), "sbr DEL without the namespace");
}

TEST_CASE("sbr: ADD, CHECK, DEL at every version after bridge", "[netns][sbr]") {
  const std::string version =
      GENERATE(as<std::string>{}, "0.1.0", "0.2.0", "0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0");
  INFO("cniVersion " << version);
  NetnsFixture fx;
  std::string ctr = fx.AddNetns("ctr");
  std::string bridge = BridgeConf(version, 1, true);
  RunResult eth0 = CallPlugin("bridge", "ADD", bridge, ctr, "c1");
  MustSucceed(eth0, "bridge ADD");
  std::string sbr = SbrConf(version, eth0.out);
  RunResult add = CallPlugin("sbr", "ADD", sbr, ctr, "c1");
  MustSucceed(add, "sbr ADD");
  CHECK(Json::parse(add.out).value("cniVersion", "") == version);
  CHECK(Json::parse(add.out) == Json::parse(eth0.out));
  CHECK(absl::StrContains(MustExec(fx, ctr, {"ip", "rule"}), "from 10.10.1.2 lookup 100"));
  CHECK(absl::StrContains(MustExec(fx, ctr, {"ip", "route", "show", "table", "100"}), "default via 10.10.1.1 dev eth0"));
  CHECK(MustExec(fx, ctr, {"ip", "-4", "route", "show", "table", "main"}).empty());
  if (version >= "0.4.0") {
    MustSucceed(CallPlugin("sbr", "CHECK", WithPrevResult(sbr, add.out), ctr, "c1"), "sbr CHECK");
  }
  MustSucceed(CallPlugin("sbr", "DEL", sbr, ctr, "c1"), "sbr DEL");
  CHECK(fx.Exec(ctr, {"ip", "route", "show", "table", "100"}).out.empty());
  CHECK_FALSE(absl::StrContains(MustExec(fx, ctr, {"ip", "rule"}), "lookup 100"));
  MustSucceed(CallPlugin("bridge", "DEL", bridge, ctr, "c1"), "bridge DEL");
  TearDown(fx, {ctr}, {"br1"});
}

namespace {

// A container with eth0 (a veth whose peer stays inside), dual stack, a
// default route per family and one more IPv4 route: the routes sbr moves.
std::string DualStackContainer(NetnsFixture& fx, const std::string& name) {
  std::string ctr = fx.AddNetns(name);
  MustExecLines(fx, ctr,
         "ip link set lo up\n"
         "ip link add eth0 type veth peer name peer0\n"
         "ip link set peer0 up\nip link set eth0 up\n"
         "ip addr add 10.1.0.2/24 dev eth0\n"
         "ip -6 addr add fd00:1::2/64 dev eth0 nodad\n"
         "ip route add default via 10.1.0.1 dev eth0\n"
         "ip route add 10.9.0.0/16 via 10.1.0.1 dev eth0\n"
         "ip -6 route add default via fd00:1::1 dev eth0");
  return ctr;
}

// The prevResult of DualStackContainer's eth0, addresses in `order`.
Json DualStackPrev(const std::string& version, bool v6_first = false) {
  Json v4 = {{"address", "10.1.0.2/24"}, {"gateway", "10.1.0.1"}, {"interface", 0}};
  Json v6 = {{"address", "fd00:1::2/64"}, {"gateway", "fd00:1::1"}, {"interface", 0}};
  return {{"cniVersion", version},
          {"interfaces", Json::array({{{"name", "eth0"}, {"sandbox", "/var/run/netns/x"}}})},
          {"ips", v6_first ? Json::array({v6, v4}) : Json::array({v4, v6})},
          {"routes", Json::array({{{"dst", "0.0.0.0/0"}}, {{"dst", "::/0"}}})}};
}

}  // namespace

// Upstream 1.1.1's sbr and ours on the same container: the same result, the
// same rules and tables after ADD (a table per address, 100 and 101, the
// IPv6 subnet and link-local routes in both). DEL across implementations
// removes the rules; ours also empties the tables (upstream leaves them).
TEST_CASE("sbr: same kernel state as upstream, ADD and DEL across implementations", "[netns][sbr]") {
  NetnsFixture fx;
  std::string conf = NetConf("1.0.0", "sbrnet", "sbr", Json::object(), DualStackPrev("1.0.0")).dump();
  std::string theirs = DualStackContainer(fx, "theirs");
  if (!std::filesystem::exists(std::string(kUpstreamDir) + "/sbr")) {
    WARN("upstream sbr not installed: differential skipped");
    TearDown(fx, {theirs});
    return;
  }
  CallOptions up;
  up.dir = kUpstreamDir;
  RunResult a = CallPlugin("sbr", "ADD", conf, theirs, "c1", up);
  MustSucceed(a, "upstream ADD");
  std::string ours = DualStackContainer(fx, "ours");
  RunResult b = CallPlugin("sbr", "ADD", conf, ours, "c1");
  MustSucceed(b, "our ADD");
  CHECK(MustResult(a) == MustResult(b));
  std::string state = RoutingState(fx, ours);
  CHECK(RoutingState(fx, theirs) == state);
  INFO(state);
  CHECK(absl::StrContains(state, "from 10.1.0.2 lookup 100"));
  CHECK(absl::StrContains(state, "from fd00:1::2 lookup 101"));

  // Upstream's DEL removes our rules; ours removes upstream's rules and routes.
  MustSucceed(CallPlugin("sbr", "DEL", conf, ours, "c1", up), "upstream DEL of our ADD");
  CHECK_FALSE(absl::StrContains(MustExec(fx, ours, {"ip", "rule"}), "lookup 100"));
  CHECK_FALSE(absl::StrContains(MustExec(fx, ours, {"ip", "-6", "rule"}), "lookup 101"));
  MustSucceed(CallPlugin("sbr", "DEL", conf, theirs, "c1"), "our DEL of upstream's ADD");
  CHECK_FALSE(absl::StrContains(MustExec(fx, theirs, {"ip", "rule"}), "lookup 100"));
  CHECK(fx.Exec(theirs, {"ip", "route", "show", "table", "100"}).out.empty());
  CHECK(fx.Exec(theirs, {"ip", "-6", "route", "show", "table", "101"}).out.empty());
  TearDown(fx, {theirs, ours});
}

// A failure after some steps (the second address's default route: the
// static gateway is not reachable) leaves the namespace exactly as before;
// upstream leaves the rules it made.
TEST_CASE("sbr: a failed ADD is rolled back", "[netns][sbr]") {
  NetnsFixture fx;
  std::string ctr = DualStackContainer(fx, "ctr");
  std::string before = RoutingState(fx, ctr);
  // IPv6 first (its rule, default route and copies in table 100), then IPv4
  // fails in table 101.
  std::string conf =
      NetConf("1.0.0", "sbrnet", "sbr", {{"gateways", {"10.99.0.1"}}}, DualStackPrev("1.0.0", true)).dump();
  RunResult r = CallPlugin("sbr", "ADD", conf, ctr, "c1");
  CHECK(r.exit_code != 0);
  CHECK(ErrorCode(r) == 999);
  INFO(ErrorMessage(r));
  CHECK(absl::StrContains(ErrorMessage(r), "default route of table 101"));
  CHECK(RoutingState(fx, ctr) == before);
  TearDown(fx, {ctr});
}

TEST_CASE("sbr: gateways replace prevResult's, addSourceHints keeps subnet routes in main", "[netns][sbr]") {
  NetnsFixture fx;
  std::string ctr = DualStackContainer(fx, "ctr");
  MustExec(fx, ctr, {"ip", "addr", "add", "10.1.0.254/32", "dev", "peer0"});
  std::string conf = NetConf("1.1.0", "sbrnet", "sbr",
                             {{"gateways", {"fd00:1::fe", "10.1.0.254"}}, {"addSourceHints", true}},
                             DualStackPrev("1.1.0"))
                         .dump();
  RunResult add = CallPlugin("sbr", "ADD", conf, ctr, "c1");
  MustSucceed(add, "sbr ADD");
  std::string t100 = MustExec(fx, ctr, {"ip", "route", "show", "table", "100"});
  std::string t101 = MustExec(fx, ctr, {"ip", "-6", "route", "show", "table", "101"});
  INFO(t100 << t101);
  CHECK(absl::StrContains(t100, "default via 10.1.0.254 dev eth0"));
  CHECK(absl::StrContains(t101, "default via fd00:1::fe dev eth0"));
  std::string main4 = MustExec(fx, ctr, {"ip", "-4", "route", "show", "table", "main"});
  INFO(main4);
  CHECK(absl::StrContains(main4, "10.1.0.0/24 dev eth0 scope link src 10.1.0.2"));
  CHECK_FALSE(absl::StrContains(main4, "default"));
  CHECK_FALSE(absl::StrContains(main4, "10.9.0.0/16"));
  std::string main6 = MustExec(fx, ctr, {"ip", "-6", "route", "show", "table", "main"});
  INFO(main6);
  CHECK(absl::StrContains(main6, "fd00:1::/64 dev eth0 src fd00:1::2"));
  CHECK_FALSE(absl::StrContains(main6, "default"));
  MustSucceed(CallPlugin("sbr", "CHECK", WithPrevResult(conf, add.out), ctr, "c1"), "sbr CHECK");
  MustSucceed(CallPlugin("sbr", "DEL", conf, ctr, "c1"), "sbr DEL");
  CHECK(fx.Exec(ctr, {"ip", "route", "show", "table", "100"}).out.empty());
  CHECK(fx.Exec(ctr, {"ip", "-6", "route", "show", "table", "101"}).out.empty());
  TearDown(fx, {ctr});
}

// `table`: rules only, pointing at that table; the routes (the IPAM's, CNI
// 1.1 route "table") are not moved, and DEL leaves them.
TEST_CASE("sbr: a fixed table gets the rules and keeps its routes", "[netns][sbr]") {
  NetnsFixture fx;
  std::string ctr = DualStackContainer(fx, "ctr");
  MustExec(fx, ctr, {"ip", "route", "add", "10.50.0.0/16", "via", "10.1.0.1", "table", "5001"});
  std::string conf = NetConf("1.1.0", "sbrnet", "sbr", {{"table", 5001}}, DualStackPrev("1.1.0")).dump();
  std::string main_before = MustExec(fx, ctr, {"ip", "route", "show", "table", "main"});
  MustSucceed(CallPlugin("sbr", "ADD", conf, ctr, "c1"), "sbr ADD");
  CHECK(absl::StrContains(MustExec(fx, ctr, {"ip", "rule"}), "from 10.1.0.2 lookup 5001"));
  CHECK(absl::StrContains(MustExec(fx, ctr, {"ip", "-6", "rule"}), "from fd00:1::2 lookup 5001"));
  CHECK(MustExec(fx, ctr, {"ip", "route", "show", "table", "main"}) == main_before);
  MustSucceed(CallPlugin("sbr", "CHECK", WithPrevResult(conf, DualStackPrev("1.1.0").dump()), ctr, "c1"));
  MustSucceed(CallPlugin("sbr", "DEL", conf, ctr, "c1"), "sbr DEL");
  CHECK_FALSE(absl::StrContains(MustExec(fx, ctr, {"ip", "rule"}), "5001"));
  CHECK_FALSE(absl::StrContains(MustExec(fx, ctr, {"ip", "-6", "rule"}), "5001"));
  CHECK(absl::StrContains(MustExec(fx, ctr, {"ip", "route", "show", "table", "5001"}), "10.50.0.0/16"));
  TearDown(fx, {ctr});
}

// Two interfaces' ADDs at once (the namespace lock): distinct tables.
TEST_CASE("sbr: concurrent ADDs for two interfaces pick distinct tables", "[netns][sbr]") {
  NetnsFixture fx;
  std::string ctr = fx.AddNetns("ctr");
  MustExecLines(fx, ctr,
         "ip link add eth0 type veth peer name eth1\nip link set eth0 up\nip link set eth1 up\n"
         "ip addr add 10.1.0.2/24 dev eth0\nip addr add 10.2.0.2/24 dev eth1");
  auto conf = [](const std::string& ifname, const std::string& addr, const std::string& gw) {
    Json prev = {{"cniVersion", "1.0.0"},
                 {"interfaces", Json::array({{{"name", ifname}}})},
                 {"ips", Json::array({{{"address", addr}, {"gateway", gw}, {"interface", 0}}})}};
    return NetConf("1.0.0", "sbrnet", "sbr", Json::object(), prev).dump();
  };
  std::string c0 = conf("eth0", "10.1.0.2/24", "10.1.0.1"), c1 = conf("eth1", "10.2.0.2/24", "10.2.0.1");
  RunResult r0, r1;
  std::thread t0([&] { r0 = CallPlugin("sbr", "ADD", c0, ctr, "c1", OnInterface("eth0")); });
  std::thread t1([&] { r1 = CallPlugin("sbr", "ADD", c1, ctr, "c1", OnInterface("eth1")); });
  t0.join();
  t1.join();
  MustSucceed(r0, "ADD eth0");
  MustSucceed(r1, "ADD eth1");
  std::string rules = MustExec(fx, ctr, {"ip", "rule"});
  INFO(rules);
  bool split = (absl::StrContains(rules, "from 10.1.0.2 lookup 100") &&
                absl::StrContains(rules, "from 10.2.0.2 lookup 101")) ||
               (absl::StrContains(rules, "from 10.1.0.2 lookup 101") &&
                absl::StrContains(rules, "from 10.2.0.2 lookup 100"));
  CHECK(split);
  MustSucceed(CallPlugin("sbr", "DEL", c0, ctr, "c1", OnInterface("eth0")));
  MustSucceed(CallPlugin("sbr", "DEL", c1, ctr, "c1", OnInterface("eth1")));
  CHECK(MustExec(fx, ctr, {"ip", "rule"}).find("lookup 10") == std::string::npos);
  TearDown(fx, {ctr});
}

TEST_CASE("sbr: bad input is refused with its code before any change", "[netns][sbr]") {
  NetnsFixture fx;
  std::string ctr = DualStackContainer(fx, "ctr");
  std::string before = RoutingState(fx, ctr);
  Json prev = DualStackPrev("1.0.0");
  struct Bad {
    Json keys;
    int code;
  };
  const std::vector<Bad> cases = {
      {{{"table", "100"}}, 6},
      {{{"table", 0}}, 7},
      {{{"table", -1}}, 7},
      {{{"gateways", "10.1.0.1"}}, 6},
      {{{"gateways", {"not-an-ip"}}}, 7},
      {{{"gateways", {"10.1.0.1", "10.1.0.254"}}}, 7},
      {{{"gateways", {"10.1.0.1", "fd00::1", "10.1.0.3"}}}, 7},
      {{{"addSourceHints", "yes"}}, 6},
  };
  for (const Bad& b : cases) {
    INFO(b.keys.dump());
    RunResult r = CallPlugin("sbr", "ADD", NetConf("1.0.0", "sbrnet", "sbr", b.keys, prev).dump(), ctr, "c1");
    CHECK(ErrorCode(r) == b.code);
  }
  // Not chained; no address of the interface.
  CHECK(ErrorCode(CallPlugin("sbr", "ADD", NetConf("1.0.0", "sbrnet", "sbr").dump(), ctr, "c1")) == 7);
  CHECK(ErrorCode(CallPlugin("sbr", "ADD", NetConf("1.0.0", "sbrnet", "sbr", Json::object(), prev).dump(), ctr,
                             "c1", OnInterface("eth9"))) == 7);
  CHECK(RoutingState(fx, ctr) == before);
  TearDown(fx, {ctr});
}

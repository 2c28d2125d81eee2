// The firewall plugin's firewalld backend (meta/firewall/firewalld.h) against a
// real firewalld on a private system bus (support/firewalld_fixture.h): both run
// inside the test's private namespaces, so firewalld's rules land in the private
// host namespace and the machine's D-Bus and ruleset are never touched. What the
// client did is checked with firewalld's own client (firewall-cmd), with the
// nftables rules firewalld wrote, and with traffic the zone lets through or not.
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "bus_probe.h"
#include "cni/base/error.h"
#include "cni/base/json.h"
#include "firewalld.h"
#include "support/cni_call.h"
#include "support/firewalld_fixture.h"
#include "support/netns_fixture.h"
#include "support/netns_tools.h"
#include "support/run.h"

namespace {

using cni::Json;
using namespace cni::test;  // NOLINT: test brevity
namespace fwd = cni::firewall::firewalld;

fwd::Client Connect() {
  absl::StatusOr<fwd::Client> client = fwd::Client::Connect();
  INFO(client.status());
  REQUIRE(client.ok());
  return *std::move(client);
}

// firewall-cmd's answer to `--get-zone-of-source=<source>`: the zone, or
// "no zone" (which it prints on stderr, exiting with 2).
std::string ZoneOfSource(const FirewalldFixture& fw, const std::string& source) {
  RunResult r = fw.FirewallCmd({"--get-zone-of-source=" + source});
  INFO("firewall-cmd: " << r.exit_code << " " << r.out << r.err);
  std::string out = r.exit_code == 0 ? r.out : r.err;
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  REQUIRE((r.exit_code == 0 || out == "no zone"));
  return out;
}

// The rules of firewalld's chain `chain` in the private host namespace.
std::string FirewalldChain(const NetnsFixture& fx, const std::string& chain) {
  return MustExec(fx, "", {"nft", "list", "chain", "inet", "firewalld", chain});
}

}  // namespace

TEST_CASE("firewalld: AddSource puts an address in the zone, as firewalld and its rules show",
          "[netns][firewall][firewalld]") {
  NetnsFixture fx;
  FirewalldFixture fw(fx);
  fwd::Client client = Connect();
  REQUIRE(client.FirewalldRunning());

  REQUIRE(client.AddSource("trusted", "10.88.0.2/32").ok());
  REQUIRE(client.AddSource("trusted", "fd00:88::2/128").ok());

  CHECK(*client.QuerySource("trusted", "10.88.0.2/32"));
  CHECK(*client.QuerySource("trusted", "fd00:88::2/128"));
  CHECK_FALSE(*client.QuerySource("public", "10.88.0.2/32"));
  CHECK_FALSE(*client.QuerySource("trusted", "10.88.0.3/32"));
  CHECK(ZoneOfSource(fw, "10.88.0.2/32") == "trusted");
  CHECK(ZoneOfSource(fw, "fd00:88::2/128") == "trusted");
  // firewalld sends packets from a source to the zone's chains by address.
  const std::string zones = FirewalldChain(fx, "filter_INPUT_ZONES");
  CHECK(absl::StrContains(zones, "ip saddr 10.88.0.2 goto filter_IN_trusted"));
  CHECK(absl::StrContains(zones, "ip6 saddr fd00:88::2 goto filter_IN_trusted"));

  // Again: ZONE_ALREADY_SET is success, and nothing changes.
  absl::Status again = client.AddSource("trusted", "10.88.0.2/32");
  INFO(again);
  CHECK(again.ok());
  CHECK(*client.QuerySource("trusted", "10.88.0.2/32"));
  CHECK(FirewalldChain(fx, "filter_INPUT_ZONES") == zones);
  CHECK(fx.Leftovers().empty());
}

TEST_CASE("firewalld: RemoveSource takes the address out, and removing an absent one is fine",
          "[netns][firewall][firewalld]") {
  NetnsFixture fx;
  FirewalldFixture fw(fx);
  fwd::Client client = Connect();
  REQUIRE(client.AddSource("trusted", "10.88.0.2/32").ok());
  REQUIRE(client.AddSource("public", "10.88.0.9/32").ok());

  absl::Status removed = client.RemoveSource("trusted", "10.88.0.2/32");
  INFO(removed);
  REQUIRE(removed.ok());
  CHECK_FALSE(*client.QuerySource("trusted", "10.88.0.2/32"));
  CHECK(ZoneOfSource(fw, "10.88.0.2/32") == "no zone");
  CHECK_FALSE(absl::StrContains(FirewalldChain(fx, "filter_INPUT_ZONES"), "10.88.0.2"));

  // In no zone any more (UNKNOWN_SOURCE), never added, in another zone
  // (ZONE_CONFLICT), or the zone does not exist: nothing to remove, success.
  CHECK(client.RemoveSource("trusted", "10.88.0.2/32").ok());
  CHECK(client.RemoveSource("trusted", "fd00:88::7/128").ok());
  CHECK(client.RemoveSource("trusted", "10.88.0.9/32").ok());
  CHECK(client.RemoveSource("no-such-zone", "10.88.0.9/32").ok());
  // ... and the address in the other zone stays there.
  CHECK(*client.QuerySource("public", "10.88.0.9/32"));
  CHECK(ZoneOfSource(fw, "10.88.0.9/32") == "public");
}

TEST_CASE("firewalld: a zone firewalld does not know is a configuration error (code 7)",
          "[netns][firewall][firewalld]") {
  NetnsFixture fx;
  FirewalldFixture fw(fx);
  fwd::Client client = Connect();

  absl::Status add = client.AddSource("no-such-zone", "10.88.0.2/32");
  INFO(add);
  CHECK(cni::CodeOf(add) == 7);
  CHECK(absl::StrContains(add.message(), "firewalld: adding 10.88.0.2/32 to zone \"no-such-zone\": "));
  CHECK(absl::StrContains(add.message(), "org.fedoraproject.FirewallD1.Exception: INVALID_ZONE"));
  CHECK(ZoneOfSource(fw, "10.88.0.2/32") == "no zone");

  absl::StatusOr<bool> query = client.QuerySource("no-such-zone", "10.88.0.2/32");
  INFO(query.status());
  CHECK(cni::CodeOf(query.status()) == 7);
  CHECK(absl::StrContains(query.status().message(), "querying 10.88.0.2/32 in zone \"no-such-zone\""));

  // An address firewalld cannot parse is no configuration error of the user:
  // the plugin formats it (internal, 999).
  absl::Status bad = client.AddSource("trusted", "10.88.0.300/32");
  INFO(bad);
  CHECK(cni::CodeOf(bad) == 999);
  CHECK(absl::StrContains(bad.message(), "INVALID_ADDR"));
}

TEST_CASE("firewalld: FirewalldRunning follows firewalld, and calls fail with code 11 while it is away",
          "[netns][firewall][firewalld]") {
  NetnsFixture fx;
  SECTION("firewalld up, then stopped") {
    FirewalldFixture fw(fx);
    fwd::Client client = Connect();
    CHECK(client.FirewalldRunning());
    fw.StopFirewalld();
    CHECK_FALSE(client.FirewalldRunning());
    absl::Status add = client.AddSource("trusted", "10.88.0.2/32");
    INFO(add);
    CHECK(cni::CodeOf(add) == 11);
    CHECK(absl::StrContains(add.message(), "firewalld: adding 10.88.0.2/32 to zone \"trusted\": "));
    CHECK(cni::CodeOf(client.RemoveSource("trusted", "10.88.0.2/32")) == 11);
    CHECK(cni::CodeOf(client.QuerySource("trusted", "10.88.0.2/32").status()) == 11);
  }
  SECTION("only dbus-daemon") {
    FirewalldFixture fw(fx, FirewalldFixture::Start::kBusOnly);
    CHECK(fwd::SystemBusPresent());
    fwd::Client client = Connect();
    CHECK_FALSE(client.FirewalldRunning());
    absl::Status add = client.AddSource("trusted", "10.88.0.2/32");
    INFO(add);
    CHECK(cni::CodeOf(add) == 11);
    CHECK(absl::StrContains(add.message(), "org.freedesktop.DBus.Error.ServiceUnknown"));
    // A moved-from client has no connection: it fails, it does not crash.
    fwd::Client other = std::move(client);
    CHECK_FALSE(client.FirewalldRunning());  // NOLINT(bugprone-use-after-move): on purpose
    CHECK(cni::CodeOf(client.AddSource("trusted", "10.88.0.2/32")) == 11);  // NOLINT
    CHECK_FALSE(other.FirewalldRunning());
  }
}

TEST_CASE("firewalld: SystemBusPresent looks for the bus socket, DBUS_SYSTEM_BUS_ADDRESS first",
          "[netns][firewall][firewalld]") {
  NetnsFixture fx;
  SECTION("no bus") {
    FirewalldFixture fw(fx, FirewalldFixture::Start::kNothing);
    CHECK_FALSE(fwd::SystemBusPresent());
    absl::StatusOr<fwd::Client> client = fwd::Client::Connect();
    INFO(client.status());
    CHECK(cni::CodeOf(client.status()) == 11);
    CHECK(absl::StrContains(client.status().message(), "firewalld: connecting to the system D-Bus"));
  }
  SECTION("a bus, named in several ways") {
    FirewalldFixture fw(fx, FirewalldFixture::Start::kBusOnly);
    auto present_with = [](const char* address) {
      setenv("DBUS_SYSTEM_BUS_ADDRESS", address, 1);
      return fwd::SystemBusPresent();
    };
    CHECK(present_with("unix:path=/run/dbus/system_bus_socket"));
    CHECK(present_with("unix:path=/run/dbus/system_bus_socket,guid=0123"));
    CHECK(present_with("unix:path=%2frun%2fdbus%2Fsystem_bus_socket"));
    CHECK(present_with("unix:path=/run/nothing;unix:path=/run/dbus/system_bus_socket"));
    CHECK_FALSE(present_with("unix:path=/run/nothing"));
    CHECK_FALSE(present_with("unix:path=/run/dbus"));  // exists, but no socket
    CHECK(present_with("unix:abstract=/some/bus"));  // cannot stat: connecting will tell
    CHECK(present_with("tcp:host=127.0.0.1,port=1"));
    unsetenv("DBUS_SYSTEM_BUS_ADDRESS");
    CHECK(fwd::SystemBusPresent());  // the default path, in the private /run
  }
}

TEST_CASE("firewalld: the plugin's own probe tells whether firewalld owns its name, as sd-bus does",
          "[netns][firewall][firewalld]") {
  NetnsFixture fx;
  using fwd::Probe;
  SECTION("firewalld up, then stopped") {
    FirewalldFixture fw(fx);
    CHECK(fwd::ProbeFirewalld() == Probe::kRunning);
    fw.StopFirewalld();
    CHECK(fwd::ProbeFirewalld() == Probe::kNotRunning);
  }
  SECTION("only dbus-daemon") {
    FirewalldFixture fw(fx, FirewalldFixture::Start::kBusOnly);
    CHECK(fwd::ProbeFirewalld() == Probe::kNotRunning);
    // The same bus named with escapes; an address it does not speak.
    setenv("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=%2frun%2fdbus%2Fsystem_bus_socket,guid=0123", 1);
    CHECK(fwd::ProbeFirewalld() == Probe::kNotRunning);
    setenv("DBUS_SYSTEM_BUS_ADDRESS", "tcp:host=127.0.0.1,port=1", 1);
    CHECK(fwd::ProbeFirewalld() == Probe::kCannotTell);
    unsetenv("DBUS_SYSTEM_BUS_ADDRESS");
  }
  SECTION("no bus") {
    FirewalldFixture fw(fx, FirewalldFixture::Start::kNothing);
    CHECK(fwd::ProbeFirewalld() == Probe::kNotRunning);
  }
}

TEST_CASE("firewalld: the zone of the source decides whether a container's connection is accepted",
          "[netns][firewall][firewalld]") {
  NetnsFixture fx;
  const std::string ctr = fx.AddNetns("ctr");
  MustExec(fx, "", {"ip", "link", "add", "fwh0", "type", "veth", "peer", "name", "eth0", "netns", "ctr"});
  MustExec(fx, "", {"ip", "addr", "add", "10.99.0.1/24", "dev", "fwh0"});
  MustExec(fx, "", {"ip", "link", "set", "fwh0", "up"});
  MustExec(fx, ctr, {"ip", "addr", "add", "10.99.0.2/24", "dev", "eth0"});
  MustExec(fx, ctr, {"ip", "link", "set", "eth0", "up"});
  MustExec(fx, ctr, {"ip", "link", "set", "lo", "up"});
  {
    FirewalldFixture fw(fx);
    fwd::Client client = Connect();
    BackgroundProcess server(fx.host_netns(),
                             {"/usr/bin/socat", "TCP-LISTEN:8080,bind=10.99.0.1,reuseaddr,fork", "EXEC:/bin/echo host"});
    // The server is up: the host itself (lo, always accepted) gets an answer.
    std::string local;
    for (int i = 0; i < 50 && local.empty(); ++i) local = SocatExchange("", "TCP:10.99.0.1:8080");
    REQUIRE(local == "host\n");

    // fwh0 is in no zone, the container's address neither: the default zone
    // (public: ssh and dhcpv6-client only) rejects the connection.
    CHECK(SocatExchange(ctr, "TCP:10.99.0.1:8080,connect-timeout=2").empty());

    REQUIRE(client.AddSource("trusted", "10.99.0.2/32").ok());
    CHECK(SocatExchange(ctr, "TCP:10.99.0.1:8080,connect-timeout=2") == "host\n");

    REQUIRE(client.RemoveSource("trusted", "10.99.0.2/32").ok());
    CHECK(SocatExchange(ctr, "TCP:10.99.0.1:8080,connect-timeout=2").empty());
  }
  TearDown(fx, {ctr}, {"fwh0"});
}

// The firewall plugin with the firewalld backend, through the CNI protocol.
namespace {

// A chained firewall configuration with a prevResult holding one IPv4 and one
// IPv6 address of the container in `netns`.
std::string PluginConf(const std::string& netns, const Json& keys) {
  Json prev = {{"cniVersion", "1.0.0"},
               {"interfaces", Json::array({{{"name", "cni0"}}, {{"name", "eth0"}, {"sandbox", netns}}})},
               {"ips", Json::array({{{"address", "10.88.0.2/16"}, {"gateway", "10.88.0.1"}, {"interface", 1}},
                                    {{"address", "fd00:88::2/64"}, {"interface", 1}}})}};
  return NetConf("1.0.0", "fwnet", "firewall", keys, prev).dump();
}

RunResult Plugin(const std::string& command, const std::string& conf, const std::string& netns) {
  return CallPlugin("firewall", command, conf, netns, "ctr-fw-1");
}

}  // namespace

TEST_CASE("firewall plugin, backend firewalld: ADD puts the addresses in the zone, CHECK sees them, DEL removes them",
          "[netns][firewall][firewalld]") {
  NetnsFixture fx;
  FirewalldFixture fw(fx);
  const std::string ctr = fx.AddNetns("ctr");
  fwd::Client client = Connect();
  const auto [keys, zone] = GENERATE(table<Json, std::string>({
      {Json{{"backend", "firewalld"}}, "trusted"},
      {Json{{"backend", "firewalld"}, {"firewalldZone", "internal"}}, "internal"},
  }));
  INFO("keys " << keys.dump());
  const std::string conf = PluginConf(ctr, keys);

  RunResult add = Plugin("ADD", conf, ctr);
  MustSucceed(add, "ADD");
  CHECK(*client.QuerySource(zone, "10.88.0.2/32"));
  CHECK(*client.QuerySource(zone, "fd00:88::2/128"));
  CHECK(ZoneOfSource(fw, "10.88.0.2/32") == zone);
  CHECK(ZoneOfSource(fw, "fd00:88::2/128") == zone);
  // The zone holds the container; no packet-filter rules of the plugin's own.
  CHECK_FALSE(absl::StrContains(MustExec(fx, "", {"nft", "list", "ruleset"}), "CNI-FORWARD"));

  const std::string check_conf = WithPrevResult(conf, add.out);
  MustSucceed(Plugin("CHECK", check_conf, ctr), "CHECK");
  // Taken out behind the plugin's back: CHECK fails and names the address.
  REQUIRE(client.RemoveSource(zone, "fd00:88::2/128").ok());
  RunResult check = Plugin("CHECK", check_conf, ctr);
  INFO(Describe(check));
  CHECK(check.exit_code != 0);
  CHECK(absl::StrContains(ErrorMessage(check), "fd00:88::2/128"));
  CHECK(absl::StrContains(ErrorMessage(check), zone));

  MustSucceed(Plugin("DEL", conf, ctr), "DEL");
  CHECK_FALSE(*client.QuerySource(zone, "10.88.0.2/32"));
  CHECK(ZoneOfSource(fw, "10.88.0.2/32") == "no zone");
  CHECK(ZoneOfSource(fw, "fd00:88::2/128") == "no zone");
  MustSucceed(Plugin("DEL", conf, ctr), "DEL again");
  // firewalld gone: its runtime sources went with it, DEL is still fine.
  fw.StopFirewalld();
  MustSucceed(Plugin("DEL", conf, ctr), "DEL without firewalld");
  TearDown(fx, {ctr});
}

TEST_CASE("firewall plugin, backend firewalld: a zone firewalld does not know fails ADD with code 7, nothing added",
          "[netns][firewall][firewalld]") {
  NetnsFixture fx;
  FirewalldFixture fw(fx);
  const std::string ctr = fx.AddNetns("ctr");
  RunResult add = Plugin("ADD", PluginConf(ctr, {{"backend", "firewalld"}, {"firewalldZone", "nosuchzone"}}), ctr);
  INFO(Describe(add));
  CHECK(ErrorCode(add) == 7);
  CHECK(absl::StrContains(ErrorMessage(add), "INVALID_ZONE"));
  CHECK(ZoneOfSource(fw, "10.88.0.2/32") == "no zone");
  CHECK(ZoneOfSource(fw, "fd00:88::2/128") == "no zone");
  TearDown(fx, {ctr});
}

TEST_CASE("firewall plugin, auto backend: firewalld when it runs, else iptables",
          "[netns][firewall][firewalld]") {
  NetnsFixture fx;
  const std::string ctr = fx.AddNetns("ctr");
  const std::string conf = PluginConf(ctr, {{"backend", ""}});
  SECTION("firewalld runs") {
    FirewalldFixture fw(fx);
    MustSucceed(Plugin("ADD", conf, ctr), "ADD");
    CHECK(ZoneOfSource(fw, "10.88.0.2/32") == "trusted");
    CHECK_FALSE(absl::StrContains(MustExec(fx, "", {"nft", "list", "ruleset"}), "CNI-FORWARD"));
    MustSucceed(Plugin("DEL", conf, ctr), "DEL");
    CHECK(ZoneOfSource(fw, "10.88.0.2/32") == "no zone");
  }
  SECTION("only dbus-daemon, or no bus at all") {
    const auto start = GENERATE(FirewalldFixture::Start::kBusOnly, FirewalldFixture::Start::kNothing);
    FirewalldFixture fw(fx, start);
    MustSucceed(Plugin("ADD", conf, ctr), "ADD");
    // upstream's iptables rules: CNI-FORWARD accepts from the container.
    const std::string rules = MustExec(fx, "", {"iptables", "-S", "CNI-FORWARD"});
    CHECK(absl::StrContains(rules, "-s 10.88.0.2/32 -j ACCEPT"));
    MustSucceed(Plugin("DEL", conf, ctr), "DEL");
    CHECK_FALSE(absl::StrContains(MustExec(fx, "", {"iptables", "-S", "CNI-FORWARD"}), "10.88.0.2"));
  }
  TearDown(fx, {ctr});
}

TEST_CASE("firewall plugin without its firewalld helper: code 50 wherever firewalld may be asked",
          "[netns][firewall][firewalld]") {
  NetnsFixture fx;
  const std::string ctr = fx.AddNetns("ctr");
  // The plugin alone, as a user who copied only it: CNI_PATH is its directory.
  TempDir alone;
  std::filesystem::copy_file(PluginDir() + "/firewall", alone.str() + "/firewall");
  auto call = [&](const std::string& command, const Json& keys) {
    return CallPlugin("firewall", command, PluginConf(ctr, keys), ctr, "ctr-fw-1", {.dir = alone.str()});
  };
  const Json firewalld = {{"backend", "firewalld"}};
  const Json automatic = {{"backend", ""}};
  SECTION("a system bus: firewalld may run") {
    FirewalldFixture fw(fx);
    for (const Json& keys : {firewalld, automatic}) {
      for (const char* command : {"ADD", "DEL"}) {
        RunResult r = call(command, keys);
        INFO(keys.dump() << " " << command << ": " << Describe(r));
        CHECK(ErrorCode(r) == 50);
        CHECK(absl::StrContains(ErrorMessage(r), "firewall-firewalld"));
      }
    }
    RunResult status = CallPlugin("firewall", "STATUS", NetConf("1.1.0", "fwnet", "firewall", firewalld).dump(), "", "",
                                  {.ifname = "", .dir = alone.str()});
    CHECK(ErrorCode(status) == 50);
    CHECK(ZoneOfSource(fw, "10.88.0.2/32") == "no zone");
    CHECK(MustExec(fx, "", {"iptables-save"}).find("10.88.0.2") == std::string::npos);
  }
  SECTION("a system bus without firewalld: the plugin asks the bus itself") {
    FirewalldFixture fw(fx, FirewalldFixture::Start::kBusOnly);
    MustSucceed(call("ADD", automatic), "ADD, auto backend: iptables");
    CHECK(absl::StrContains(MustExec(fx, "", {"iptables", "-S", "CNI-FORWARD"}), "-s 10.88.0.2/32 -j ACCEPT"));
    MustSucceed(call("DEL", automatic), "DEL, auto backend");
    CHECK_FALSE(absl::StrContains(MustExec(fx, "", {"iptables", "-S", "CNI-FORWARD"}), "10.88.0.2"));
    // The backend named: the helper is needed to remove sources.
    CHECK(ErrorCode(call("DEL", firewalld)) == 50);
  }
  SECTION("no system bus: nothing of firewalld's can be there") {
    FirewalldFixture fw(fx, FirewalldFixture::Start::kNothing);
    MustSucceed(call("DEL", firewalld), "DEL, backend firewalld");
    MustSucceed(call("ADD", automatic), "ADD, auto backend: iptables");
    CHECK(absl::StrContains(MustExec(fx, "", {"iptables", "-S", "CNI-FORWARD"}), "-s 10.88.0.2/32 -j ACCEPT"));
    MustSucceed(call("DEL", automatic), "DEL, auto backend");
    CHECK_FALSE(absl::StrContains(MustExec(fx, "", {"iptables", "-S", "CNI-FORWARD"}), "10.88.0.2"));
  }
  TearDown(fx, {ctr});
}

TEST_CASE("firewall plugin, backend firewalld: GC of one network leaves every zone source alone",
          "[netns][firewall][firewalld]") {
  NetnsFixture fx;
  FirewalldFixture fw(fx);
  const std::string ctr = fx.AddNetns("ctr");
  auto conf = [&](const std::string& net, const std::string& address) {
    Json prev = {{"cniVersion", "1.0.0"},
                 {"interfaces", Json::array({{{"name", "cni0"}}, {{"name", "eth0"}, {"sandbox", ctr}}})},
                 {"ips", Json::array({{{"address", address}, {"interface", 1}}})}};
    return NetConf("1.0.0", net, "firewall", {{"backend", "firewalld"}}, prev).dump();
  };
  auto gc = [&](const std::string& net, const Json& valid) {
    Json c = NetConf("1.1.0", net, "firewall", {{"backend", "firewalld"}});
    c["cni.dev/valid-attachments"] = valid;
    MustSucceed(CallPlugin("firewall", "GC", c.dump(), "", "", {.ifname = ""}), "GC of " + net);
  };
  // Network A: a1 and a2; network B: b1, and a2's second interface.
  MustSucceed(CallPlugin("firewall", "ADD", conf("neta", "10.88.0.2/16"), ctr, "a1"), "ADD a1");
  MustSucceed(CallPlugin("firewall", "ADD", conf("neta", "10.88.0.3/16"), ctr, "a2"), "ADD a2");
  MustSucceed(CallPlugin("firewall", "ADD", conf("netb", "10.89.0.2/16"), ctr, "b1"), "ADD b1");
  MustSucceed(CallPlugin("firewall", "ADD", conf("netb", "10.89.0.3/16"), ctr, "a2", OnInterface("eth1")),
              "ADD a2 eth1");
  const std::string zones = FirewalldChain(fx, "filter_INPUT_ZONES");
  const std::string ruleset = MustExec(fx, "", {"nft", "list", "ruleset"});
  gc("neta", Json::array({{{"containerID", "a2"}, {"ifname", "eth0"}}}));
  gc("neta", Json::array());
  // Zone sources carry no owner: none can be told stale, B's least of all.
  for (const char* source : {"10.88.0.2/32", "10.88.0.3/32", "10.89.0.2/32", "10.89.0.3/32"}) {
    INFO(source);
    CHECK(ZoneOfSource(fw, source) == "trusted");
  }
  CHECK(FirewalldChain(fx, "filter_INPUT_ZONES") == zones);
  CHECK(MustExec(fx, "", {"nft", "list", "ruleset"}) == ruleset);
  // DEL removes them.
  MustSucceed(CallPlugin("firewall", "DEL", conf("neta", "10.88.0.2/16"), ctr, "a1"), "DEL a1");
  MustSucceed(CallPlugin("firewall", "DEL", conf("neta", "10.88.0.3/16"), ctr, "a2"), "DEL a2");
  MustSucceed(CallPlugin("firewall", "DEL", conf("netb", "10.89.0.2/16"), ctr, "b1"), "DEL b1");
  MustSucceed(CallPlugin("firewall", "DEL", conf("netb", "10.89.0.3/16"), ctr, "a2", OnInterface("eth1")),
              "DEL a2 eth1");
  CHECK(ZoneOfSource(fw, "10.89.0.2/32") == "no zone");
  TearDown(fx, {ctr});
}

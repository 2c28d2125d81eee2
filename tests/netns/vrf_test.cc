// The vrf plugin through the CNI protocol. Cases tagged [vm] need the vrf
// link type, which this machine's kernel lacks: they run in the VM tier's
// guest. The untagged case fails before any VRF is made and runs everywhere.
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
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

// A prevResult naming `ifname` with `addr`.
Json Prev(const std::string& version, const std::string& ifname, const std::string& addr) {
  return {{"cniVersion", version},
          {"interfaces", Json::array({{{"name", ifname}}})},
          {"ips", Json::array({{{"address", addr}, {"interface", 0}}})}};
}

std::string VrfConf(const std::string& version, const std::string& vrf, const Json& prev, int table = 0) {
  Json keys = {{"vrfname", vrf}};
  if (table != 0) keys["table"] = table;
  return NetConf(version, "vrfnet", "vrf", keys, prev).dump();
}

// The table of VRF `name` in `ns` as `ip -d` shows it, -1 when it is missing
// or not a VRF.
int VrfTable(const NetnsFixture& fx, const std::string& ns, const std::string& name) {
  RunResult r = fx.Exec(ns, {"ip", "-d", "-j", "link", "show", "dev", name});
  if (r.exit_code != 0) return -1;
  Json l = Json::parse(r.out)[0];
  if (l["linkinfo"].value("info_kind", "") != "vrf") return -1;
  return l["linkinfo"]["info_data"].value("table", -1);
}

// The name of `ifname`'s master in `ns`, "" for none.
std::string MasterOf(const NetnsFixture& fx, const std::string& ns, const std::string& ifname) {
  return LinkJson(fx, ns, ifname).value("master", "");
}

// A container with eth0 and eth1, veths whose peers are in `peer`:
// eth0 10.20.0.2/24 + fd20::2/64 with routes to 10.60.0.0/16 and fd60::/64
// via the peer, eth1 10.21.0.2/24. The peer answers on 10.60.0.1 and fd60::1
// too. IPv6 addresses are not kept when the link goes down (the kernel's
// default), so enslaving drops them and the plugin must restore them.
// Returns the peer's path (`peer_name` under /run/netns).
std::string Scene(NetnsFixture& fx, const std::string& ctr, const std::string& peer_name = "peer") {
  std::string peer = fx.AddNetns(peer_name);
  MustExecLines(fx, ctr,
         "ip link set lo up\n"
         "ip link add eth0 type veth peer name p0 netns " + peer_name + "\n"
         "ip link add eth1 type veth peer name p1 netns " + peer_name + "\n"
         "sysctl -qw net.ipv6.conf.all.keep_addr_on_down=0\n"
         "ip link set eth0 up\nip link set eth1 up\n"
         "ip addr add 10.20.0.2/24 dev eth0\n"
         "ip -6 addr add fd20::2/64 dev eth0 nodad\n"
         "ip addr add 10.21.0.2/24 dev eth1\n"
         "ip route add 10.60.0.0/16 via 10.20.0.1 dev eth0\n"
         "ip -6 route add fd60::/64 via fd20::1 dev eth0");
  MustExecLines(fx, peer,
         "ip link set lo up\nip link set p0 up\nip link set p1 up\n"
         "ip addr add 10.20.0.1/24 dev p0\n"
         "ip -6 addr add fd20::1/64 dev p0 nodad\n"
         "ip addr add 10.21.0.1/24 dev p1\n"
         "ip addr add 10.60.0.1/32 dev lo\n"
         "ip -6 addr add fd60::1/128 dev lo");
  return peer;
}

}  // namespace

// Two interfaces of one VRF, at every version: the VRF is made on the first
// ADD (the first free table, 1) and reused on the second; enslaving drops the
// IPv6 address and the routes through the interface, which come back (routes
// in the VRF's table); the peer reaches both addresses and, through the
// restored route, the container answers a peer address beyond its gateway.
// The VRF goes with its last member.
TEST_CASE("vrf: two interfaces share a VRF, addresses and routes restored, at every version", "[vm][vrf]") {
  const std::string version = GENERATE(as<std::string>{}, "0.3.1", "0.4.0", "1.0.0", "1.1.0");
  INFO("cniVersion " << version);
  NetnsFixture fx;
  std::string ctr = fx.AddNetns("ctr");
  std::string peer = Scene(fx, ctr);
  std::string c0 = VrfConf(version, "vrf0", Prev(version, "eth0", "10.20.0.2/24"));
  std::string c1 = VrfConf(version, "vrf0", Prev(version, "eth1", "10.21.0.2/24"));

  RunResult a0 = CallPlugin("vrf", "ADD", c0, ctr, "c1", OnInterface("eth0"));
  MustSucceed(a0, "ADD eth0");
  CHECK(MustResult(a0).ips.size() == 1);
  CHECK(Json::parse(a0.out).value("cniVersion", "") == version);
  MustSucceed(CallPlugin("vrf", "ADD", c1, ctr, "c1", OnInterface("eth1")), "ADD eth1");
  CHECK(VrfTable(fx, ctr, "vrf0") == 1);
  CHECK(MasterOf(fx, ctr, "eth0") == "vrf0");
  CHECK(MasterOf(fx, ctr, "eth1") == "vrf0");
  std::string v4 = MustExec(fx, ctr, {"ip", "-4", "route", "show", "vrf", "vrf0"});
  std::string v6 = MustExec(fx, ctr, {"ip", "-6", "route", "show", "vrf", "vrf0"});
  INFO(v4 << v6);
  CHECK(absl::StrContains(v4, "10.60.0.0/16 via 10.20.0.1 dev eth0"));
  CHECK(absl::StrContains(v4, "10.21.0.0/24 dev eth1"));
  CHECK(absl::StrContains(v6, "fd60::/64 via fd20::1 dev eth0"));
  CHECK(absl::StrContains(MustExec(fx, ctr, {"ip", "-6", "addr", "show", "dev", "eth0"}), "fd20::2/64"));
  CHECK_FALSE(absl::StrContains(MustExec(fx, ctr, {"ip", "route", "show", "table", "main"}), "eth0"));

  CHECK(Ping(peer, Ip("10.20.0.2")));
  CHECK(Ping(peer, Ip("10.21.0.2")));
  CHECK(Ping(peer, Ip("fd20::2"), 5000));
  {
    // A server bound to the VRF answers the peer's far address (10.60.0.1)
    // only through the restored route.
    BackgroundProcess server(ctr, {"/usr/bin/socat", "TCP-LISTEN:7000,reuseaddr,fork,so-bindtodevice=vrf0",
                                   "EXEC:/bin/echo vrf"});
    std::string got;
    for (int i = 0; i < 50 && got.empty(); ++i) {
      got = SocatExchange(peer, "TCP:10.20.0.2:7000,bind=10.60.0.1,connect-timeout=1");
    }
    CHECK(got == "vrf\n");
  }
  if (version != "0.3.1") {
    MustSucceed(CallPlugin("vrf", "CHECK", WithPrevResult(c0, a0.out), ctr, "c1", OnInterface("eth0")), "CHECK eth0");
  }

  MustSucceed(CallPlugin("vrf", "DEL", c0, ctr, "c1", OnInterface("eth0")), "DEL eth0");
  CHECK(MasterOf(fx, ctr, "eth0").empty());
  CHECK(VrfTable(fx, ctr, "vrf0") == 1);
  if (version != "0.3.1") {
    CHECK(CallPlugin("vrf", "CHECK", WithPrevResult(c0, a0.out), ctr, "c1", OnInterface("eth0")).exit_code != 0);
  }
  MustSucceed(CallPlugin("vrf", "DEL", c1, ctr, "c1", OnInterface("eth1")), "DEL eth1");
  CHECK(VrfTable(fx, ctr, "vrf0") == -1);
  MustSucceed(CallPlugin("vrf", "DEL", c1, ctr, "c1", OnInterface("eth1")), "DEL again");
  TearDown(fx, {ctr, peer});
}

// One container on two networks that use the same subnet (10.30.0.0/24, the
// container 10.30.0.2 on both): without VRFs one reply goes out the wrong
// interface, so the two clients (10.30.0.1 each) are not both answered; with
// each interface in its own VRF (one with a chosen table) both are.
TEST_CASE("vrf: overlapping addresses on two networks are both reachable in two VRFs", "[vm][vrf]") {
  NetnsFixture fx;
  std::string ctr = fx.AddNetns("ctr");
  MustExec(fx, ctr, {"ip", "link", "set", "lo", "up"});
  std::vector<std::string> clients;
  std::vector<std::string> bridge_confs;
  for (int n : {1, 2}) {
    std::string i = std::to_string(n);
    std::string cli = fx.AddNetns("cli" + i);
    clients.push_back(cli);
    MustExecLines(fx, "",
           "ip link add br" + i + " type bridge\nip link set br" + i + " up\n"
           "ip link add up" + i + " type veth peer name eth0 netns cli" + i + "\n"
           "ip link set up" + i + " master br" + i + " up");
    MustExecLines(fx, cli, "ip link set lo up\nip link set eth0 up\nip addr add 10.30.0.1/24 dev eth0");
    Json conf = NetConf("1.0.0", "net" + i, "bridge", {{"bridge", "br" + i}});
    conf["ipam"] = StaticIpam("10.30.0.2/24", "", Json::array());
    bridge_confs.push_back(conf.dump());
    MustSucceed(CallPlugin("bridge", "ADD", bridge_confs.back(), ctr, "c1", OnInterface("eth" + i)), "bridge ADD");
  }
  CHECK_FALSE((Ping(clients[0], Ip("10.30.0.2"), 1500) && Ping(clients[1], Ip("10.30.0.2"), 1500)));

  Json prev1 = Prev("1.0.0", "eth1", "10.30.0.2/24"), prev2 = Prev("1.0.0", "eth2", "10.30.0.2/24");
  std::string red = VrfConf("1.0.0", "red", prev1), blue = VrfConf("1.0.0", "blue", prev2, 200);
  MustSucceed(CallPlugin("vrf", "ADD", red, ctr, "c1", OnInterface("eth1")), "ADD red");
  MustSucceed(CallPlugin("vrf", "ADD", blue, ctr, "c1", OnInterface("eth2")), "ADD blue");
  CHECK(VrfTable(fx, ctr, "red") == 1);
  CHECK(VrfTable(fx, ctr, "blue") == 200);
  CHECK(Ping(clients[0], Ip("10.30.0.2")));
  CHECK(Ping(clients[1], Ip("10.30.0.2")));

  MustSucceed(CallPlugin("vrf", "DEL", red, ctr, "c1", OnInterface("eth1")), "DEL red");
  MustSucceed(CallPlugin("vrf", "DEL", blue, ctr, "c1", OnInterface("eth2")), "DEL blue");
  CHECK(VrfTable(fx, ctr, "red") == -1);
  CHECK(VrfTable(fx, ctr, "blue") == -1);
  MustSucceed(CallPlugin("bridge", "DEL", bridge_confs[0], ctr, "c1", OnInterface("eth1")));
  MustSucceed(CallPlugin("bridge", "DEL", bridge_confs[1], ctr, "c1", OnInterface("eth2")));
  clients.push_back(ctr);
  TearDown(fx, clients, {"br1", "br2"});
}

// Two interfaces' ADDs at once into one VRF that does not exist yet: one VRF,
// both interfaces in it.
TEST_CASE("vrf: concurrent ADDs of two interfaces make one VRF", "[vm][vrf]") {
  NetnsFixture fx;
  std::string ctr = fx.AddNetns("ctr");
  std::string peer = Scene(fx, ctr);
  std::string c0 = VrfConf("1.0.0", "vrf0", Prev("1.0.0", "eth0", "10.20.0.2/24"));
  std::string c1 = VrfConf("1.0.0", "vrf0", Prev("1.0.0", "eth1", "10.21.0.2/24"));
  RunResult r0, r1;
  std::thread t0([&] { r0 = CallPlugin("vrf", "ADD", c0, ctr, "c1", OnInterface("eth0")); });
  std::thread t1([&] { r1 = CallPlugin("vrf", "ADD", c1, ctr, "c1", OnInterface("eth1")); });
  t0.join();
  t1.join();
  MustSucceed(r0, "ADD eth0");
  MustSucceed(r1, "ADD eth1");
  CHECK(VrfTable(fx, ctr, "vrf0") == 1);
  CHECK(MasterOf(fx, ctr, "eth0") == "vrf0");
  CHECK(MasterOf(fx, ctr, "eth1") == "vrf0");
  CHECK(Ping(peer, Ip("10.21.0.2")));
  MustSucceed(CallPlugin("vrf", "DEL", c0, ctr, "c1", OnInterface("eth0")));
  MustSucceed(CallPlugin("vrf", "DEL", c1, ctr, "c1", OnInterface("eth1")));
  CHECK(VrfTable(fx, ctr, "vrf0") == -1);
  TearDown(fx, {ctr, peer});
}

// Refusals leave nothing: a VRF that exists with another table, an interface
// that already has a master, a link of the VRF's name that is not a VRF, a
// missing interface (the VRF this ADD made is deleted again).
TEST_CASE("vrf: refused ADDs leave the namespace as it was", "[vm][vrf]") {
  NetnsFixture fx;
  std::string ctr = fx.AddNetns("ctr");
  std::string peer = Scene(fx, ctr);
  Json prev = Prev("1.0.0", "eth0", "10.20.0.2/24");
  MustExec(fx, ctr, {"ip", "link", "add", "vrf5", "type", "vrf", "table", "5"});
  RunResult r = CallPlugin("vrf", "ADD", VrfConf("1.0.0", "vrf5", prev, 6), ctr, "c1");
  CHECK(ErrorCode(r) == 7);
  CHECK(absl::StrContains(ErrorMessage(r), "already exists with routing table 5"));
  CHECK(VrfTable(fx, ctr, "vrf5") == 5);
  CHECK(MasterOf(fx, ctr, "eth0").empty());
  // The same VRF with its own table, or none given, is reused.
  MustSucceed(CallPlugin("vrf", "ADD", VrfConf("1.0.0", "vrf5", prev, 5), ctr, "c1"), "reuse with table 5");
  MustSucceed(CallPlugin("vrf", "DEL", VrfConf("1.0.0", "vrf5", prev, 5), ctr, "c1"), "DEL");
  CHECK(VrfTable(fx, ctr, "vrf5") == -1);

  MustExecLines(fx, ctr, "ip link add br0 type bridge\nip link set eth1 master br0");
  r = CallPlugin("vrf", "ADD", VrfConf("1.0.0", "vrfx", Prev("1.0.0", "eth1", "10.21.0.2/24")), ctr, "c1",
                 OnInterface("eth1"));
  CHECK(r.exit_code != 0);
  CHECK(absl::StrContains(ErrorMessage(r), "has already a master set: br0"));
  CHECK(VrfTable(fx, ctr, "vrfx") == -1);
  r = CallPlugin("vrf", "ADD", VrfConf("1.0.0", "br0", prev), ctr, "c1");
  CHECK(absl::StrContains(ErrorMessage(r), "is not a VRF"));
  r = CallPlugin("vrf", "ADD", VrfConf("1.0.0", "vrfy", Prev("1.0.0", "eth7", "10.22.0.2/24")), ctr, "c1",
                 OnInterface("eth7"));
  CHECK(r.exit_code != 0);
  CHECK(VrfTable(fx, ctr, "vrfy") == -1);
  CHECK(MustExec(fx, ctr, {"ip", "link", "show", "type", "vrf"}).empty());
  TearDown(fx, {ctr, peer});
}

// A failure after the interface was enslaved (the restored IPv6 address's
// duplicate address detection outlasts the plugin's wait): the interface is
// released, its routes are back in the main table, the VRF is gone.
TEST_CASE("vrf: a failure after enslaving is rolled back", "[vm][vrf]") {
  NetnsFixture fx;
  std::string ctr = fx.AddNetns("ctr");
  std::string peer = Scene(fx, ctr);
  // A second global address that went through DAD, re-added with DAD: 10
  // probes take ~10 s, past the ~2.5 s the plugin waits.
  MustExecLines(fx, ctr, "ip -6 addr add fd21::2/64 dev eth0\nsysctl -qw net.ipv6.conf.eth0.dad_transmits=10");
  for (int i = 0; i < 50; ++i) {
    if (!absl::StrContains(MustExec(fx, ctr, {"ip", "-6", "addr", "show", "dev", "eth0"}), "tentative")) break;
    MustExec(fx, "", {"sleep", "0.2"});
  }
  std::string routes = MustExec(fx, ctr, {"ip", "route", "show", "table", "main", "proto", "boot"}) +
                       MustExec(fx, ctr, {"ip", "-6", "route", "show", "table", "main", "proto", "boot"});
  RunResult r = CallPlugin("vrf", "ADD", VrfConf("1.0.0", "vrf0", Prev("1.0.0", "eth0", "10.20.0.2/24")), ctr, "c1");
  INFO(ErrorMessage(r));
  CHECK(r.exit_code != 0);
  CHECK(absl::StrContains(ErrorMessage(r), "no local route for fd21::2"));
  CHECK(MasterOf(fx, ctr, "eth0").empty());
  CHECK(VrfTable(fx, ctr, "vrf0") == -1);
  std::string addrs = MustExec(fx, ctr, {"ip", "-6", "addr", "show", "dev", "eth0"});
  CHECK(absl::StrContains(addrs, "fd20::2/64"));
  CHECK(absl::StrContains(addrs, "fd21::2/64"));
  CHECK(MustExec(fx, ctr, {"ip", "route", "show", "table", "main", "proto", "boot"}) +
            MustExec(fx, ctr, {"ip", "-6", "route", "show", "table", "main", "proto", "boot"}) ==
        routes);
  CHECK(Ping(peer, Ip("10.20.0.2")));
  TearDown(fx, {ctr, peer});
}

// Upstream 1.1.1's vrf and ours on the same scene: the same result, VRF,
// table, master and addresses; upstream's VRF table lacks the routes through
// the interface (1.1.1 does not re-add them; 1.4 and later do), ours has
// them. DEL across implementations releases the interface and deletes the VRF.
TEST_CASE("vrf: same kernel state as upstream, plus the re-added routes", "[vm][vrf]") {
  if (!std::filesystem::exists(std::string(kUpstreamDir) + "/vrf")) {
    WARN("upstream vrf not installed: differential skipped");
    return;
  }
  NetnsFixture fx;
  std::string theirs = fx.AddNetns("theirs"), ours = fx.AddNetns("ours");
  std::string peer1 = Scene(fx, theirs, "peer1"), peer2 = Scene(fx, ours, "peer2");
  std::string conf = VrfConf("1.0.0", "vrf0", Prev("1.0.0", "eth0", "10.20.0.2/24"), 10);
  CallOptions up;
  up.dir = kUpstreamDir;
  RunResult a = CallPlugin("vrf", "ADD", conf, theirs, "c1", up);
  MustSucceed(a, "upstream ADD");
  RunResult b = CallPlugin("vrf", "ADD", conf, ours, "c1");
  MustSucceed(b, "our ADD");
  CHECK(MustResult(a) == MustResult(b));
  for (const std::string& ns : {theirs, ours}) {
    CHECK(VrfTable(fx, ns, "vrf0") == 10);
    CHECK(MasterOf(fx, ns, "eth0") == "vrf0");
    CHECK(LinkJson(fx, ns, "vrf0").value("operstate", "") == "UP");
  }
  CHECK(MustExec(fx, theirs, {"ip", "-4", "-o", "addr"}) == MustExec(fx, ours, {"ip", "-4", "-o", "addr"}));
  auto global6 = [&](const std::string& ns) {
    return MustExec(fx, ns, {"ip", "-6", "-o", "addr", "show", "dev", "eth0", "scope", "global"});
  };
  CHECK(global6(theirs) == global6(ours));
  // Every route upstream has in the VRF table, ours has; ours adds the two
  // routes via the peer.
  for (const char* family : {"-4", "-6"}) {
    std::string t = MustExec(fx, theirs, {"ip", family, "route", "show", "table", "10"});
    std::string o = MustExec(fx, ours, {"ip", family, "route", "show", "table", "10"});
    INFO(family << "\nupstream:\n" << t << "ours:\n" << o);
    for (absl::string_view line : absl::StrSplit(t, '\n', absl::SkipEmpty())) {
      if (absl::StrContains(line, "fe80::")) continue;
      CHECK(absl::StrContains(o, line));
    }
  }
  CHECK(absl::StrContains(MustExec(fx, ours, {"ip", "route", "show", "table", "10"}), "10.60.0.0/16 via 10.20.0.1"));
  CHECK(absl::StrContains(MustExec(fx, ours, {"ip", "-6", "route", "show", "table", "10"}), "fd60::/64 via fd20::1"));

  MustSucceed(CallPlugin("vrf", "DEL", conf, theirs, "c1"), "our DEL of upstream's ADD");
  MustSucceed(CallPlugin("vrf", "DEL", conf, ours, "c1", up), "upstream DEL of our ADD");
  for (const std::string& ns : {theirs, ours}) {
    CHECK(VrfTable(fx, ns, "vrf0") == -1);
    CHECK(MasterOf(fx, ns, "eth0").empty());
  }
  TearDown(fx, {theirs, ours, peer1, peer2});
}

// Refused before any change, so no vrf link type is needed: this case runs
// on every kernel.
TEST_CASE("vrf: bad input codes, versions before 0.3.1, DEL without a namespace", "[netns][vrf]") {
  NetnsFixture fx;
  std::string ctr = fx.AddNetns("ctr");
  Json prev = Prev("1.0.0", "eth0", "10.20.0.2/24");
  struct Bad {
    Json keys;
    int code;
  };
  const std::vector<Bad> cases = {
      {Json::object(), 7},
      {{{"vrfname", ""}}, 7},
      {{{"vrfname", 5}}, 6},
      {{{"vrfname", "a/b"}}, 7},
      {{{"vrfname", "averyveryverylongname"}}, 7},
      {{{"vrfname", "vrf0"}, {"table", -1}}, 7},
      {{{"vrfname", "vrf0"}, {"table", "10"}}, 6},
  };
  for (const Bad& b : cases) {
    INFO(b.keys.dump());
    CHECK(ErrorCode(CallPlugin("vrf", "ADD", NetConf("1.0.0", "vrfnet", "vrf", b.keys, prev).dump(), ctr,
                               "c1")) == b.code);
  }
  // Not chained.
  CHECK(ErrorCode(CallPlugin("vrf", "ADD", NetConf("1.0.0", "vrfnet", "vrf", {{"vrfname", "vrf0"}}).dump(), ctr,
                             "c1")) == 7);
  // Upstream's range starts at 0.3.1.
  RunResult old = CallPlugin("vrf", "ADD", VrfConf("0.3.0", "vrf0", Prev("0.3.0", "eth0", "10.20.0.2/24")), ctr,
                             "c1");
  CHECK(ErrorCode(old) == 1);
  RunResult version = CallPlugin("vrf", "VERSION", "{\"cniVersion\":\"1.0.0\"}", "", "");
  CHECK(Json::parse(version.out)["supportedVersions"] == Json::array({"0.3.1", "0.4.0", "1.0.0", "1.1.0"}));
  MustSucceed(CallPlugin("vrf", "DEL", VrfConf("1.0.0", "vrf0", prev), "/run/netns/gone", "c1"),
              "DEL without the namespace");
  MustSucceed(CallPlugin("vrf", "DEL", VrfConf("1.0.0", "vrf0", prev), ctr, "c1"), "DEL without the VRF");
  MustSucceed(CallPlugin("vrf", "STATUS", NetConf("1.1.0", "vrfnet", "vrf", {{"vrfname", "vrf0"}}).dump(), "", ""),
              "STATUS");
  TearDown(fx, {ctr});
}

// portmap's nftables layout as upstream 1.9 lays it out, with real traffic:
//
//   outside ns (192.168.78.2) --veth-- host "hostnic" (192.168.78.1)
//   host "farnic" (203.0.113.1) --veth-- far ns (203.0.113.2): not the node
//   host cni1 (bridge plugin, 10.87.0.0/24) -- containers A and B
//
// Traffic routed through the node to a mapped port of another address is
// forwarded untouched (before, prerouting jumped to the DNAT chains with no
// local-destination test, and it reached the container); local, localhost
// and hairpin traffic still reach the container.
//
// And the differential test with upstream 1.9's layout. The upstream binary
// installed here (/usr/lib/cni) is 1.1.x, without that layout, so upstream
// 1.9.1's ADD is written as the transaction its knftables code sends
// (portmap_nftables.go forwardPorts: the shared chains flushed and written
// again, the container's rules with the bare container ID as comment) and
// its DEL as what unforwardPorts does (list hostports, hostip_hostports and
// masquerading; delete the rules whose comment is the ID). Our ADD and
// upstream's, then each side's DEL, in both orders: each side's mapping
// survives the other's ADD and DEL, and neither ADD rewrites the other's
// shared chains when they are already as it would write them.
#include <chrono>
#include <fstream>
#include <list>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cni/base/json.h"
#include "support/cni_call.h"
#include "support/netns_fixture.h"
#include "support/netns_tools.h"
#include "support/run.h"

namespace {

using cni::Json;
using namespace cni::test;  // NOLINT: test brevity

bool Reaches(const std::string& netns, const std::string& addr, const std::string& want) {
  for (int i = 0; i < 12; ++i) {
    if (absl::StrContains(SocatExchange(netns, addr), want)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  return false;
}

Json BridgeConf(const TempDir& dir) {
  return {{"cniVersion", "1.0.0"}, {"name", "laynet"}, {"type", "bridge"}, {"bridge", "cni1"},
          {"isGateway", true}, {"hairpinMode", true},
          {"ipam", HostLocalIpam(dir, {"10.87.0.0/24"}, Json::array({{{"dst", "0.0.0.0/0"}}}))}};
}

std::string PortmapConf(const std::string& backend, const std::string& prev, int host_port) {
  Json maps = Json::array({{{"hostPort", host_port}, {"containerPort", 80}, {"protocol", "tcp"}}});
  return Json{{"cniVersion", "1.0.0"}, {"name", "laynet"}, {"type", "portmap"}, {"backend", backend},
              {"runtimeConfig", {{"portMappings", maps}}}, {"prevResult", Json::parse(prev)}}
      .dump();
}

// The node, two containers (each a TCP server on port 80 answering its
// name), a client outside, and a server on a routed address beyond the node.
struct Node {
  explicit Node(NetnsFixture& f) : fx(f) {
    outside = fx.AddNetns("outside");
    far = fx.AddNetns("far");
    MustExecLines(fx, "", "ip link add hostnic type veth peer name eth0 netns " + outside +
                              "\nip addr add 192.168.78.1/24 dev hostnic\nip link set hostnic up"
                              "\nip link add farnic type veth peer name eth0 netns " + far +
                              "\nip addr add 203.0.113.1/24 dev farnic\nip link set farnic up");
    MustExecLines(fx, outside,
                  "ip addr add 192.168.78.2/24 dev eth0\nip link set eth0 up\nip link set lo up"
                  "\nip route add default via 192.168.78.1");
    MustExecLines(fx, far,
                  "ip addr add 203.0.113.2/24 dev eth0\nip link set eth0 up\nip link set lo up"
                  "\nip route add default via 203.0.113.1");
    MustExec(fx, "", {"sysctl", "-qw", "net.ipv4.ip_forward=1"});
    ctr_a = Attach("ctr-a", prev_a);
    ctr_b = Attach("ctr-b", prev_b);
  }
  // A container on the bridge, answering "from-<id>" on TCP port 80: its
  // namespace, and its bridge result in `prev`.
  std::string Attach(const std::string& id, std::string& prev) {
    std::string ns = fx.AddNetns(id);
    RunResult add = CallPlugin("bridge", "ADD", BridgeConf(dir).dump(), ns, id);
    MustSucceed(add, "bridge ADD " + id);
    prev = add.out;
    servers.emplace_back(ns, std::vector<std::string>{"/usr/bin/socat", "TCP-LISTEN:80,reuseaddr,fork",
                                                      "EXEC:/bin/echo from-" + id});
    return ns;
  }
  ~Node() {
    (void)CallPlugin("bridge", "DEL", BridgeConf(dir).dump(), ctr_a, "ctr-a");
    (void)CallPlugin("bridge", "DEL", BridgeConf(dir).dump(), ctr_b, "ctr-b");
  }
  // The address host-local gave a container (its prevResult's first IP).
  static std::string Address(const std::string& prev) {
    std::string cidr = Json::parse(prev)["ips"][0]["address"].get<std::string>();
    return cidr.substr(0, cidr.find('/'));
  }
  NetnsFixture& fx;
  TempDir dir;
  std::string outside, far, ctr_a, ctr_b, prev_a, prev_b;
  std::list<BackgroundProcess> servers;
};

}  // namespace

TEST_CASE("portmap: traffic routed through the node to a mapped port is not DNAT'd", "[netns][portmap]") {
  NetnsFixture fx;
  const std::string backend = GENERATE(as<std::string>{}, "nftables", "iptables");
  INFO("backend " << backend);
  Node n(fx);
  BackgroundProcess far_server(n.far, {"/usr/bin/socat", "TCP-LISTEN:8080,reuseaddr,fork", "EXEC:/bin/echo from-far"});
  const std::string conf = PortmapConf(backend, n.prev_a, 8080);
  MustSucceed(CallPlugin("portmap", "ADD", conf, n.ctr_a, "ctr-a"), "portmap ADD");

  // Routed through the node (prerouting) and sent by the node (output) to
  // an address that is not the node's: the far server answers.
  CHECK(Reaches(n.outside, "TCP:203.0.113.2:8080,connect-timeout=2", "from-far"));
  CHECK(Reaches("", "TCP:203.0.113.2:8080,connect-timeout=2", "from-far"));
  // To the node: the container. From outside, from the node itself, from
  // localhost, and hairpin from the other container.
  CHECK(Reaches(n.outside, "TCP:192.168.78.1:8080,connect-timeout=2", "from-ctr-a"));
  CHECK(Reaches("", "TCP:192.168.78.1:8080,connect-timeout=2", "from-ctr-a"));
  CHECK(Reaches("", "TCP:127.0.0.1:8080,connect-timeout=2", "from-ctr-a"));
  CHECK(Reaches(n.ctr_b, "TCP:192.168.78.1:8080,connect-timeout=2", "from-ctr-a"));
  CHECK(Reaches(n.ctr_a, "TCP:192.168.78.1:8080,connect-timeout=2", "from-ctr-a"));  // itself
  MustSucceed(CallPlugin("portmap", "DEL", conf, n.ctr_a, "ctr-a"), "portmap DEL");
}

namespace {

// Upstream 1.9.1's ADD for one container in table ip cni_hostport, as nft
// commands: knftables' transaction (tables, chains and flushes in its
// order; comments the bare container ID). Priorities are given as numbers
// (dstnat -100, srcnat 100: the same kernel value), since the nft here
// takes no "dstnat" for the output hook.
std::string UpstreamAdd(const std::string& id, const std::string& addr, int host_port) {
  const std::string t = "ip cni_hostport";
  return absl::StrCat(
      "add table ", t, " { comment \"CNI portmap plugin\" ; }\n",        //
      "add chain ", t, " hostports\n",                                   //
      "add chain ", t, " hostip_hostports\n",                            //
      "add chain ", t, " hostports_all\n",                               //
      "flush chain ", t, " hostports_all\n",                             //
      "add rule ", t, " hostports_all jump hostip_hostports\n",          //
      "add rule ", t, " hostports_all jump hostports\n",                 //
      "add chain ", t, " prerouting { type nat hook prerouting priority -100 ; }\n",
      "flush chain ", t, " prerouting\n",                                //
      "add rule ", t, " prerouting fib daddr type local jump hostports_all\n",
      "add chain ", t, " output { type nat hook output priority -100 ; }\n",
      "flush chain ", t, " output\n",                                    //
      "add rule ", t, " output fib daddr type local jump hostports_all\n",
      "add chain ", t, " masquerading { type nat hook postrouting priority 100 ; }\n",
      "add rule ", t, " hostports tcp dport ", host_port, " dnat to ", addr, ":80 comment \"", id, "\"\n",
      "add rule ", t, " masquerading ip saddr ", addr, " ip daddr ", addr, " masquerade comment \"", id, "\"\n",
      "add rule ", t, " masquerading ip saddr 127.0.0.1 ip daddr ", addr, " masquerade comment \"", id, "\"\n");
}

void NftFile(const NetnsFixture& fx, const std::string& commands) {
  TempDir dir;
  const std::string path = dir.str() + "/rules.nft";
  std::ofstream(path) << commands;
  MustExec(fx, "", {"nft", "-f", path});
}

// Upstream 1.9.1's DEL: in each lookup and masquerading chain, the rules
// whose comment is exactly the container ID, deleted by handle.
void UpstreamDel(const NetnsFixture& fx, const std::string& id) {
  std::string commands;
  for (const char* chain : {"hostports", "hostip_hostports", "masquerading"}) {
    std::string listing = fx.Exec("", {"nft", "-a", "list", "chain", "ip", "cni_hostport", chain}).out;
    for (absl::string_view line : absl::StrSplit(listing, '\n')) {
      size_t at = line.rfind("# handle ");
      if (!absl::StrContains(line, absl::StrCat("comment \"", id, "\" ")) || at == absl::string_view::npos) continue;
      absl::StrAppend(&commands, "delete rule ip cni_hostport ", chain, " handle ", line.substr(at + 9), "\n");
    }
  }
  if (!commands.empty()) NftFile(fx, commands);
}

// The shared chains, handles included: what must not flap.
std::string SharedChains(const NetnsFixture& fx) {
  std::string out;
  for (const char* chain : {"prerouting", "output", "hostports_all"}) {
    out += MustExec(fx, "", {"nft", "-a", "list", "chain", "ip", "cni_hostport", chain});
  }
  return out;
}

}  // namespace

TEST_CASE("portmap: nftables ADD and DEL take turns with upstream 1.9's layout", "[netns][portmap][differential]") {
  NetnsFixture fx;
  const bool ours_first = GENERATE(true, false);
  INFO((ours_first ? "ours first" : "upstream first"));
  Node n(fx);
  const std::string ours = PortmapConf("nftables", n.prev_a, 8080);  // ctr-a, ours
  auto upstream_add = [&] { NftFile(fx, UpstreamAdd("ctr-b", Node::Address(n.prev_b), 8090)); };
  auto a_works = [&] {
    CHECK(Reaches(n.outside, "TCP:192.168.78.1:8080,connect-timeout=2", "from-ctr-a"));
    MustSucceed(CallPlugin("portmap", "CHECK", ours, n.ctr_a, "ctr-a"), "CHECK");
  };
  auto b_works = [&] { CHECK(Reaches(n.outside, "TCP:192.168.78.1:8090,connect-timeout=2", "from-ctr-b")); };
  auto answers = [&](int port) {
    return SocatExchange(n.outside, absl::StrCat("TCP:192.168.78.1:", port, ",connect-timeout=1"));
  };

  if (ours_first) {
    MustSucceed(CallPlugin("portmap", "ADD", ours, n.ctr_a, "ctr-a"), "our ADD");
    upstream_add();
    const std::string after_upstream = SharedChains(fx);
    a_works();
    b_works();
    // Our next ADD finds upstream's shared chains as it would write them.
    MustSucceed(CallPlugin("portmap", "ADD", PortmapConf("nftables", n.prev_b, 9999), n.ctr_b, "ctr-x"), "ADD x");
    CHECK(SharedChains(fx) == after_upstream);
    MustSucceed(CallPlugin("portmap", "DEL", PortmapConf("nftables", n.prev_b, 9999), n.ctr_b, "ctr-x"), "DEL x");
    UpstreamDel(fx, "ctr-b");
    CHECK_FALSE(absl::StrContains(answers(8090), "from-ctr-b"));
    a_works();
    MustSucceed(CallPlugin("portmap", "DEL", ours, n.ctr_a, "ctr-a"), "our DEL");
    CHECK_FALSE(absl::StrContains(answers(8080), "from-ctr-a"));
  } else {
    upstream_add();
    const std::string before = SharedChains(fx);
    MustSucceed(CallPlugin("portmap", "ADD", ours, n.ctr_a, "ctr-a"), "our ADD");
    CHECK(SharedChains(fx) == before);  // no rewrite of upstream's layout
    a_works();
    b_works();
    MustSucceed(CallPlugin("portmap", "DEL", ours, n.ctr_a, "ctr-a"), "our DEL");
    CHECK_FALSE(absl::StrContains(answers(8080), "from-ctr-a"));
    b_works();
    upstream_add();  // upstream's next ADD (the same container again) keeps working
    b_works();
    UpstreamDel(fx, "ctr-b");
    CHECK_FALSE(absl::StrContains(answers(8090), "from-ctr-b"));
  }
  const std::string table = MustExec(fx, "", {"nft", "list", "table", "ip", "cni_hostport"});
  CHECK_FALSE(absl::StrContains(table, "ctr-"));
}

TEST_CASE("portmap: rules whose comment is the bare container ID: GC leaves them, DEL removes them",
          "[netns][portmap]") {
  // Upstream's rules, and ours before comments named the network: they
  // cannot say their network, so GC (of any network) must not guess; DEL of
  // that container removes them, as it always did (upgrades).
  NetnsFixture fx;
  Node n(fx);
  NftFile(fx, UpstreamAdd("ctr-b", Node::Address(n.prev_b), 8090));
  Json gc = {{"cniVersion", "1.1.0"}, {"name", "laynet"}, {"type", "portmap"}, {"backend", "nftables"},
             {"cni.dev/valid-attachments", Json::array()}};
  MustSucceed(CallPlugin("portmap", "GC", gc.dump(), "", ""), "GC");
  CHECK(Reaches(n.outside, "TCP:192.168.78.1:8090,connect-timeout=2", "from-ctr-b"));
  CHECK(LinesWith(MustExec(fx, "", {"nft", "list", "table", "ip", "cni_hostport"}), "comment \"ctr-b\"").size() == 3);
  MustSucceed(CallPlugin("portmap", "CHECK", PortmapConf("nftables", n.prev_b, 8090), n.ctr_b, "ctr-b"), "CHECK");
  MustSucceed(CallPlugin("portmap", "DEL", PortmapConf("nftables", n.prev_b, 8090), n.ctr_b, "ctr-b"), "DEL");
  CHECK_FALSE(absl::StrContains(MustExec(fx, "", {"nft", "list", "table", "ip", "cni_hostport"}), "ctr-b"));
}

TEST_CASE("portmap: masqAll masquerades every source reaching a mapped port", "[netns][portmap]") {
  // The container sees the connection from outside come from its gateway
  // with masqAll, and from the client itself without.
  NetnsFixture fx;
  const std::string backend = GENERATE(as<std::string>{}, "nftables", "iptables");
  const bool masq_all = GENERATE(true, false);
  INFO("backend " << backend << (masq_all ? ", masqAll" : ""));
  Node n(fx);
  BackgroundProcess peer(n.ctr_a, {"/usr/bin/socat", "TCP-LISTEN:81,reuseaddr,fork", "SYSTEM:echo peer=$SOCAT_PEERADDR"});
  Json conf = Json::parse(PortmapConf(backend, n.prev_a, 8081));
  conf["runtimeConfig"]["portMappings"][0]["containerPort"] = 81;
  conf["masqAll"] = masq_all;
  MustSucceed(CallPlugin("portmap", "ADD", conf.dump(), n.ctr_a, "ctr-a"), "ADD");
  MustSucceed(CallPlugin("portmap", "CHECK", conf.dump(), n.ctr_a, "ctr-a"), "CHECK");
  CHECK(Reaches(n.outside, "TCP:192.168.78.1:8081,connect-timeout=2",
                masq_all ? "peer=10.87.0.1\n" : "peer=192.168.78.2\n"));
  // Localhost still works either way (the any-source rule covers it).
  CHECK(Reaches("", "TCP:127.0.0.1:8081,connect-timeout=2", "peer=10.87.0.1\n"));
  MustSucceed(CallPlugin("portmap", "DEL", conf.dump(), n.ctr_a, "ctr-a"), "DEL");
  CHECK_FALSE(absl::StrContains(
      fx.Exec("", {"nft", "list", "ruleset"}).out + fx.Exec("", {"iptables-save", "-t", "nat"}).out, "ctr-a"));
}

TEST_CASE("portmap: an upgrade from the layout before 1.9 keeps the old mappings working and DEL removes them",
          "[netns][portmap]") {
  // The table as our earlier versions (and upstream 1.5-1.8) left it: the
  // hooks jump straight to hostip_hostports and hostports, a hostIP-pinned
  // DNAT in hostip_hostports, comments the bare container ID.
  NetnsFixture fx;
  Node n(fx);
  const std::string b = Node::Address(n.prev_b), t = "ip cni_hostport";
  NftFile(fx, absl::StrCat(
                  "add table ", t, "\nadd chain ", t, " hostports\nadd chain ", t, " hostip_hostports\n",
                  "add chain ", t, " prerouting { type nat hook prerouting priority -100 ; }\n",
                  "add rule ", t, " prerouting jump hostip_hostports\nadd rule ", t, " prerouting jump hostports\n",
                  "add chain ", t, " output { type nat hook output priority -100 ; }\n",
                  "add rule ", t, " output jump hostip_hostports\n",
                  "add rule ", t, " output fib daddr type local jump hostports\n",
                  "add chain ", t, " masquerading { type nat hook postrouting priority 100 ; }\n",
                  "add rule ", t, " hostports tcp dport 8090 dnat to ", b, ":80 comment \"ctr-b\"\n",
                  "add rule ", t, " hostip_hostports ip daddr 192.168.78.1 tcp dport 8091 dnat to ", b,
                  ":80 comment \"ctr-b\"\n",
                  "add rule ", t, " masquerading ip saddr ", b, " ip daddr ", b, " masquerade comment \"ctr-b\"\n",
                  "add rule ", t, " masquerading ip saddr 127.0.0.1 ip daddr ", b,
                  " masquerade comment \"ctr-b\"\n"));
  const std::string ours = PortmapConf("nftables", n.prev_a, 8080);
  MustSucceed(CallPlugin("portmap", "ADD", ours, n.ctr_a, "ctr-a"), "our ADD");
  // The hooks now as 1.9 lays them out; the old rules still reached.
  CHECK(absl::StrContains(MustExec(fx, "", {"nft", "list", "chain", "ip", "cni_hostport", "prerouting"}),
                          "fib daddr type local jump hostports_all"));
  CHECK(Reaches(n.outside, "TCP:192.168.78.1:8080,connect-timeout=2", "from-ctr-a"));
  CHECK(Reaches(n.outside, "TCP:192.168.78.1:8090,connect-timeout=2", "from-ctr-b"));
  CHECK(Reaches(n.outside, "TCP:192.168.78.1:8091,connect-timeout=2", "from-ctr-b"));
  // DEL of the old container (with today's comments it would be
  // "<hashes>, net: laynet, id: ctr-b") removes its old rules, in both
  // chains, and leaves ours.
  Json old_conf = Json::parse(PortmapConf("nftables", n.prev_b, 8090));
  MustSucceed(CallPlugin("portmap", "DEL", old_conf.dump(), n.ctr_b, "ctr-b"), "DEL of the old container");
  const std::string table = MustExec(fx, "", {"nft", "list", "table", "ip", "cni_hostport"});
  CHECK_FALSE(absl::StrContains(table, "ctr-b"));
  CHECK(absl::StrContains(table, "id: ctr-a"));
  CHECK(Reaches(n.outside, "TCP:192.168.78.1:8080,connect-timeout=2", "from-ctr-a"));
  MustSucceed(CallPlugin("portmap", "DEL", ours, n.ctr_a, "ctr-a"), "our DEL");
}

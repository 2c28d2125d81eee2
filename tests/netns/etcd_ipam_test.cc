// etcd-ipam against a real 3-member etcd cluster (tests/support/etcd_cluster.h)
// started on loopback inside the test's private network namespace: concurrent
// allocators, a member killed and restarted, a lost quorum, GC and CHECK, and
// two "nodes" whose macvlan containers share one range.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cni/base/ip.h"
#include "cni/base/json.h"
#include "cni/protocol/types.h"
#include "support/cni_call.h"
#include "support/etcd_cluster.h"
#include "support/netns_fixture.h"
#include "support/netns_tools.h"
#include "support/run.h"

namespace {

using cni::Json;
using namespace cni::test;  // NOLINT: test brevity

constexpr const char* kPrefix = "/cni/ipam/etcdnet";

// etcd-ipam's configuration on `subnet` (optionally a sub-range), with a
// timeout in seconds.
Json EtcdIpam(const EtcdCluster& etcd, const std::string& subnet, const std::string& start = "",
              const std::string& end = "", int timeout = 5) {
  Json range = {{"subnet", subnet}};
  if (!start.empty()) range["rangeStart"] = start;
  if (!end.empty()) range["rangeEnd"] = end;
  return {{"type", "etcd-ipam"},
          {"ranges", Json::array({Json::array({range})})},
          {"routes", Json::array({{{"dst", "0.0.0.0/0"}}})},
          {"etcd", {{"endpoints", etcd.Endpoints()}, {"timeout", timeout}}}};
}

std::string Conf(const Json& ipam) {
  Json conf = {{"cniVersion", "1.1.0"}, {"name", "etcdnet"}, {"type", "etcd-ipam"}};
  conf["ipam"] = ipam;
  return conf.dump();
}

RunResult Ipam(const std::string& command, const std::string& conf, const std::string& id,
               const std::string& ifname = "eth0") {
  return CallPlugin("etcd-ipam", command, conf, "/run/netns/none", id, {.ifname = ifname});
}

// The addresses reserved in etcd: ips/<address> -> owner JSON.
std::map<std::string, std::string> Reserved(const EtcdCluster& etcd) {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : etcd.Get(absl::StrCat(kPrefix, "/ips/"))) {
    out[k.substr(std::string(kPrefix).size() + 5)] = v;
  }
  return out;
}

std::string OwnerOf(const std::map<std::string, std::string>& reserved, const std::string& ip) {
  auto it = reserved.find(ip);
  if (it == reserved.end()) return "";
  return Json::parse(it->second).value("containerID", "");
}

std::string Address(const cni::Result& r) {
  REQUIRE(r.ips.size() == 1);
  return r.ips[0].address.addr().ToString();
}

}  // namespace

TEST_CASE("etcd-ipam: concurrent allocators hand out every address of a small range once",
          "[netns][etcd-ipam]") {
  NetnsFixture fx;
  EtcdCluster etcd(3);
  // 10.20.0.2 .. 10.20.0.14: 13 addresses, 20 concurrent ADDs.
  std::string conf = Conf(EtcdIpam(etcd, "10.20.0.0/28", "10.20.0.2", "10.20.0.14"));
  constexpr int kCallers = 20;
  std::vector<RunResult> results(kCallers);
  std::vector<std::thread> threads;
  for (int i = 0; i < kCallers; ++i) {
    threads.emplace_back([&, i] { results[i] = Ipam("ADD", conf, absl::StrCat("ctr", i)); });
  }
  for (std::thread& t : threads) t.join();

  std::map<std::string, std::string> given;  // address -> container
  int exhausted = 0;
  for (int i = 0; i < kCallers; ++i) {
    INFO("ctr" << i << ": " << Describe(results[i]));
    if (results[i].exit_code == 0) {
      std::string ip = Address(MustResult(results[i]));
      CHECK(given.count(ip) == 0);  // never twice
      given[ip] = absl::StrCat("ctr", i);
    } else {
      // host-local's code and wording.
      CHECK(ErrorCode(results[i]) == 999);
      CHECK_THAT(ErrorMessage(results[i]),
                 Catch::Contains("no IP addresses available in range set: 10.20.0.2-10.20.0.14"));
      ++exhausted;
    }
  }
  CHECK(given.size() == 13);
  CHECK(exhausted == kCallers - 13);
  // etcd holds exactly those reservations, each for the container that got it.
  std::map<std::string, std::string> reserved = Reserved(etcd);
  CHECK(reserved.size() == 13);
  for (const auto& [ip, ctr] : given) CHECK(OwnerOf(reserved, ip) == ctr);
  CHECK(given.count("10.20.0.1") == 0);  // the gateway

  // CHECK: owned; a stranger: a failed check (999), not "unknown container" (3).
  std::string first = given.begin()->second;
  MustSucceed(Ipam("CHECK", conf, first));
  CHECK(ErrorCode(Ipam("CHECK", conf, "stranger")) == 999);
  // A second ADD of the same attachment: refused, nothing more reserved.
  CHECK(Ipam("ADD", conf, first).exit_code != 0);
  CHECK(Reserved(etcd).size() == 13);

  // DEL frees: the address goes to the next ADD; DEL again is fine.
  std::string freed = given.begin()->first;
  MustSucceed(Ipam("DEL", conf, first));
  MustSucceed(Ipam("DEL", conf, first));
  CHECK(OwnerOf(Reserved(etcd), freed).empty());
  CHECK(Address(MustResult(Ipam("ADD", conf, "late"))) == freed);
  CHECK(Ipam("ADD", conf, "later").exit_code != 0);

  // DEL of everyone leaves no reservation and no attachment record.
  for (int i = 0; i < kCallers; ++i) MustSucceed(Ipam("DEL", conf, absl::StrCat("ctr", i)));
  MustSucceed(Ipam("DEL", conf, "late"));
  CHECK(Reserved(etcd).empty());
  CHECK(etcd.Get(absl::StrCat(kPrefix, "/attachments/")).empty());
  CHECK(fx.Leftovers().empty());
}

TEST_CASE("etcd-ipam: requested IPs, exclude and several interfaces of one container",
          "[netns][etcd-ipam]") {
  NetnsFixture fx;
  EtcdCluster etcd(3);
  Json ipam = EtcdIpam(etcd, "10.21.0.0/29");  // .2 .. .6 (.1 gateway, .7 broadcast)
  ipam["exclude"] = Json::array({"10.21.0.2/31", "10.21.0.4/32"});  // .2 .3 .4
  std::string conf = Conf(ipam);
  std::map<std::string, std::string> by_if;  // ifname -> address
  by_if["eth0"] = Address(MustResult(Ipam("ADD", conf, "a", "eth0")));
  by_if["eth1"] = Address(MustResult(Ipam("ADD", conf, "a", "eth1")));
  CHECK(std::set<std::string>{by_if["eth0"], by_if["eth1"]} ==
        std::set<std::string>{"10.21.0.5", "10.21.0.6"});
  const std::string six = by_if["eth0"] == "10.21.0.6" ? "eth0" : "eth1";
  const std::string five = six == "eth0" ? "eth1" : "eth0";
  RunResult full = Ipam("ADD", conf, "b");
  CHECK(ErrorCode(full) == 999);
  // A requested address (CNI_ARGS IP) that is taken, excluded, or free.
  RunResult taken = CallPlugin("etcd-ipam", "ADD", conf, "/run/netns/none", "c", {.args = "IP=10.21.0.5"});
  CHECK_THAT(ErrorMessage(taken), Catch::Contains("10.21.0.5 is not available"));
  RunResult excluded = CallPlugin("etcd-ipam", "ADD", conf, "/run/netns/none", "c", {.args = "IP=10.21.0.3"});
  CHECK(ErrorCode(excluded) == 7);
  MustSucceed(Ipam("DEL", conf, "a", six));
  cni::Result r = MustResult(CallPlugin("etcd-ipam", "ADD", conf, "/run/netns/none", "c", {.args = "IP=10.21.0.6"}));
  CHECK(Address(r) == "10.21.0.6");
  CHECK(r.ips[0].gateway->ToString() == "10.21.0.1");
  REQUIRE(r.routes.size() == 1);
  CHECK(Reserved(etcd).size() == 2);
  MustSucceed(Ipam("DEL", conf, "a", five));
  MustSucceed(Ipam("DEL", conf, "c"));
  CHECK(Reserved(etcd).empty());

  // Dual stack: one address per range set, both in one record, both released.
  Json dual = EtcdIpam(etcd, "10.21.1.0/24");
  dual["ranges"].push_back(Json::array({{{"subnet", "fd00:21::/64"}}}));
  cni::Result r2 = MustResult(Ipam("ADD", Conf(dual), "d"));
  REQUIRE(r2.ips.size() == 2);
  CHECK(r2.ips[0].address.addr().ToString() == "10.21.1.2");
  CHECK(r2.ips[1].address.addr().ToString() == "fd00:21::2");
  std::map<std::string, std::string> reserved = Reserved(etcd);
  CHECK(OwnerOf(reserved, "10.21.1.2") == "d");
  CHECK(OwnerOf(reserved, "fd00:21::2") == "d");
  MustSucceed(Ipam("CHECK", Conf(dual), "d"));
  MustSucceed(Ipam("DEL", Conf(dual), "d"));
  CHECK(Reserved(etcd).empty());
}

TEST_CASE("etcd-ipam: GC releases this node's attachments missing from the valid list only",
          "[netns][etcd-ipam]") {
  NetnsFixture fx;
  EtcdCluster etcd(3);
  Json ipam = EtcdIpam(etcd, "10.22.0.0/24");
  std::string conf = Conf(ipam);
  std::string keep = Address(MustResult(Ipam("ADD", conf, "keep")));
  std::string gone = Address(MustResult(Ipam("ADD", conf, "gone")));
  // Another node's attachment (written as that node's plugin writes it).
  etcd.Put(absl::StrCat(kPrefix, "/ips/10.22.0.200"),
           Json({{"containerID", "remote"}, {"ifname", "eth0"}, {"network", "etcdnet"}}).dump());
  etcd.Put(absl::StrCat(kPrefix, "/attachments/remote/eth0"),
           Json({{"containerID", "remote"}, {"ifname", "eth0"}, {"network", "etcdnet"},
                 {"node", "some-other-node"}, {"ips", {"10.22.0.200"}}, {"token", "x"}})
               .dump());

  Json gc = Json::parse(conf);
  gc["cni.dev/valid-attachments"] = Json::array({{{"containerID", "keep"}, {"ifname", "eth0"}}});
  MustSucceed(CallPlugin("etcd-ipam", "GC", gc.dump(), "", "", {.ifname = ""}));
  std::map<std::string, std::string> reserved = Reserved(etcd);
  CHECK(OwnerOf(reserved, keep) == "keep");
  CHECK(OwnerOf(reserved, gone).empty());
  CHECK(OwnerOf(reserved, "10.22.0.200") == "remote");  // not this node's to judge
  CHECK(reserved.size() == 2);
  MustSucceed(Ipam("CHECK", conf, "keep"));
  CHECK(ErrorCode(Ipam("CHECK", conf, "gone")) == 999);
  // CHECK notices an address taken away from its owner.
  etcd.Put(absl::StrCat(kPrefix, "/ips/", keep),
           Json({{"containerID", "thief"}, {"ifname", "eth0"}, {"network", "etcdnet"}}).dump());
  CHECK(Ipam("CHECK", conf, "keep").exit_code != 0);
  MustSucceed(Ipam("STATUS", conf, ""));
}

namespace {

// The attachment record's "node", as stored.
std::string NodeOf(const EtcdCluster& etcd, const std::string& id) {
  for (const auto& [k, v] : etcd.Get(absl::StrCat(kPrefix, "/attachments/", id, "/"))) {
    return Json::parse(v).value("node", "");
  }
  return "";
}

}  // namespace

// Two nodes whose host names are the same (cloned images, "localhost"): with
// "nodeName" each GC judges its own attachments only.
TEST_CASE("etcd-ipam: nodeName keeps GC to the attachments of its own node", "[netns][etcd-ipam]") {
  NetnsFixture fx;
  EtcdCluster etcd(3);
  Json node_a = EtcdIpam(etcd, "10.25.0.0/24");
  node_a["nodeName"] = "worker-a";
  Json node_b = node_a;
  node_b["nodeName"] = "worker-b";
  std::string a1 = Address(MustResult(Ipam("ADD", Conf(node_a), "a1")));
  std::string a2 = Address(MustResult(Ipam("ADD", Conf(node_a), "a2")));
  std::string b1 = Address(MustResult(Ipam("ADD", Conf(node_b), "b1")));
  CHECK(NodeOf(etcd, "a1") == "worker-a");
  CHECK(NodeOf(etcd, "b1") == "worker-b");

  // worker-a's runtime knows only a1: a2 goes, worker-b's b1 stays.
  Json gc = Json::parse(Conf(node_a));
  gc["cni.dev/valid-attachments"] = Json::array({{{"containerID", "a1"}, {"ifname", "eth0"}}});
  MustSucceed(CallPlugin("etcd-ipam", "GC", gc.dump(), "", "", {.ifname = ""}));
  std::map<std::string, std::string> reserved = Reserved(etcd);
  CHECK(OwnerOf(reserved, a1) == "a1");
  CHECK(OwnerOf(reserved, a2).empty());
  CHECK(OwnerOf(reserved, b1) == "b1");
  CHECK(reserved.size() == 2);

  // With neither "nodeName" nor a host name (a private UTS namespace whose
  // name is empty), GC cannot tell whose records are whose: code 7, nothing
  // deleted.
  Json nameless = Json::parse(Conf(EtcdIpam(etcd, "10.25.0.0/24")));
  nameless["cni.dev/valid-attachments"] = Json::array();
  RunResult refused = RunProcess(
      {"/usr/bin/unshare", "--uts", "--", "/bin/sh", "-c",
       "printf '\\n' > /proc/sys/kernel/hostname && exec \"$0\"", PluginDir() + "/etcd-ipam"},
      {kTestPath, "CNI_COMMAND=GC", "CNI_PATH=" + PluginDir()}, nameless.dump());
  INFO(Describe(refused));
  CHECK(ErrorCode(refused) == 7);
  CHECK(Reserved(etcd).size() == 2);

  MustSucceed(Ipam("DEL", Conf(node_a), "a1"));
  MustSucceed(Ipam("DEL", Conf(node_b), "b1"));
  CHECK(Reserved(etcd).empty());
}

TEST_CASE("etcd-ipam: a member killed and restarted during allocations loses nothing",
          "[netns][etcd-ipam]") {
  NetnsFixture fx;
  EtcdCluster etcd(3);
  std::string conf = Conf(EtcdIpam(etcd, "10.23.0.0/24"));
  constexpr int kWorkers = 4, kEach = 25;
  std::vector<RunResult> results(kWorkers * kEach);
  std::atomic<int> done{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < kWorkers; ++w) {
    threads.emplace_back([&, w] {
      for (int k = 0; k < kEach; ++k) {
        results[w * kEach + k] = Ipam("ADD", conf, absl::StrCat("w", w, "-", k));
        ++done;
      }
    });
  }
  // Kill the first endpoint every plugin tries, then the leader, each while
  // the others keep allocating, and restart them.
  auto wait_for = [&](int n) {
    while (done < n) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  };
  wait_for(10);
  etcd.Stop(0);
  wait_for(35);
  etcd.Start(0);
  REQUIRE(etcd.WaitQuorum());
  int leader = etcd.Leader();
  REQUIRE(leader >= 0);
  wait_for(50);
  etcd.Stop(leader);  // an election happens during the allocations
  wait_for(75);
  etcd.Start(leader);
  for (std::thread& t : threads) t.join();
  REQUIRE(etcd.WaitQuorum());

  std::map<std::string, std::string> given;
  for (int i = 0; i < kWorkers * kEach; ++i) {
    INFO("call " << i << ": " << Describe(results[i]));
    REQUIRE(results[i].exit_code == 0);  // a member down is no reason to fail
    std::string ip = Address(MustResult(results[i]));
    CHECK(given.count(ip) == 0);
    given[ip] = absl::StrCat("w", i / kEach, "-", i % kEach);
  }
  // Every reservation handed out is in etcd, for its owner, and no other.
  std::map<std::string, std::string> reserved = Reserved(etcd);
  CHECK(reserved.size() == given.size());
  for (const auto& [ip, ctr] : given) CHECK(OwnerOf(reserved, ip) == ctr);
}

TEST_CASE("etcd-ipam: without a quorum every command is code 11 and changes nothing",
          "[netns][etcd-ipam]") {
  NetnsFixture fx;
  EtcdCluster etcd(3);
  std::string conf = Conf(EtcdIpam(etcd, "10.24.0.0/24", "", "", /*timeout=*/2));
  std::string a = Address(MustResult(Ipam("ADD", conf, "a")));
  MustResult(Ipam("ADD", conf, "b"));
  std::map<std::string, std::string> before = etcd.Get("/cni/ipam/");

  etcd.Stop(1);
  etcd.Stop(2);
  auto t0 = std::chrono::steady_clock::now();
  RunResult add = Ipam("ADD", conf, "c");
  double add_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  INFO(Describe(add));
  CHECK(ErrorCode(add) == 11);
  CHECK(add_s < 4.0);  // within the 2 s timeout (plus process start)
  CHECK(ErrorCode(Ipam("DEL", conf, "a")) == 11);
  CHECK(ErrorCode(Ipam("CHECK", conf, "a")) == 11);
  CHECK(ErrorCode(Ipam("STATUS", conf, "")) == 50);

  etcd.Start(1);
  etcd.Start(2);
  REQUIRE(etcd.WaitQuorum());
  CHECK(etcd.Get("/cni/ipam/") == before);  // nothing half-written
  MustSucceed(Ipam("STATUS", conf, ""));
  std::string c = Address(MustResult(Ipam("ADD", conf, "c")));
  CHECK(c != a);
  MustSucceed(Ipam("DEL", conf, "a"));
  CHECK(OwnerOf(Reserved(etcd), a).empty());

  // No member reachable at all: code 11 as well.
  Json nowhere = EtcdIpam(etcd, "10.24.0.0/24", "", "", 1);
  nowhere["etcd"]["endpoints"] = Json::array({"http://127.0.0.1:1"});
  RunResult unreachable = Ipam("ADD", Conf(nowhere), "d");
  INFO(Describe(unreachable));
  CHECK(ErrorCode(unreachable) == 11);
}

namespace {

// A plugin run inside `node` (its network namespace), as that node's runtime runs it.
RunResult OnNode(const std::string& node, const std::string& plugin, const std::string& command,
                 const std::string& conf, const std::string& netns, const std::string& id) {
  return RunProcess({"/usr/bin/nsenter", "--net=" + node, "--", PluginDir() + "/" + plugin},
                    {kTestPath, "CNI_COMMAND=" + command, "CNI_CONTAINERID=" + id,
                     "CNI_NETNS=" + netns, "CNI_IFNAME=eth0", "CNI_PATH=" + PluginDir()},
                    conf);
}

}  // namespace

TEST_CASE("etcd-ipam: macvlan containers on two nodes get distinct addresses of one range and talk",
          "[netns][etcd-ipam][macvlan]") {
  NetnsFixture fx;
  // The "LAN": a bridge in the private host namespace; etcd listens on it.
  MustExec(fx, "", {"ip", "link", "add", "lan0", "type", "bridge"});
  MustExec(fx, "", {"ip", "addr", "add", "192.168.77.1/24", "dev", "lan0"});
  MustExec(fx, "", {"ip", "link", "set", "lan0", "up"});
  EtcdCluster etcd(3, "192.168.77.1");
  // Two nodes, each with an uplink on the LAN.
  std::vector<std::string> nodes;
  for (int n = 1; n <= 2; ++n) {
    std::string node = fx.AddNetns(absl::StrCat("node", n));
    std::string port = absl::StrCat("n", n, "-lan");
    MustExec(fx, "", {"ip", "link", "add", port, "type", "veth", "peer", "name", "uplink", "netns",
                      absl::StrCat("node", n)});
    MustExec(fx, "", {"ip", "link", "set", port, "master", "lan0", "up"});
    MustExec(fx, node, {"ip", "link", "set", "lo", "up"});
    MustExec(fx, node, {"ip", "addr", "add", absl::StrCat("192.168.77.1", n, "/24"), "dev", "uplink"});
    MustExec(fx, node, {"ip", "link", "set", "uplink", "up"});
    nodes.push_back(node);
  }
  Json conf = {{"cniVersion", "1.1.0"}, {"name", "etcdnet"}, {"type", "macvlan"},
               {"master", "uplink"},    {"mode", "bridge"}};
  conf["ipam"] = EtcdIpam(etcd, "10.30.0.0/24");
  // Three containers per node, alternating nodes.
  std::vector<std::string> ctrs;
  std::vector<cni::net::IpAddress> addrs;
  for (int i = 0; i < 6; ++i) {
    std::string ctr = fx.AddNetns(absl::StrCat("ctr", i));
    cni::Result r = MustResult(OnNode(nodes[i % 2], "macvlan", "ADD", conf.dump(), ctr, absl::StrCat("c", i)));
    REQUIRE(r.ips.size() == 1);
    for (const cni::net::IpAddress& a : addrs) CHECK(a != r.ips[0].address.addr());
    ctrs.push_back(ctr);
    addrs.push_back(r.ips[0].address.addr());
  }
  CHECK(Reserved(etcd).size() == 6);
  // Across nodes, both ways (and within a node).
  CHECK(Ping(ctrs[0], addrs[1]));
  CHECK(Ping(ctrs[1], addrs[0]));
  CHECK(Ping(ctrs[3], addrs[4]));
  CHECK(Ping(ctrs[2], addrs[4]));
  for (int i = 0; i < 6; ++i) {
    MustSucceed(OnNode(nodes[i % 2], "macvlan", "DEL", conf.dump(), ctrs[i], absl::StrCat("c", i)));
  }
  CHECK(Reserved(etcd).empty());
  std::vector<std::string> all = ctrs;
  all.insert(all.end(), nodes.begin(), nodes.end());
  // The nodes' uplink peers go with their namespaces, asynchronously: deleted
  // here if still present.
  TearDown(fx, all, {"n1-lan", "n2-lan", "lan0"});
}

TEST_CASE("etcd-ipam: TLS with a client certificate (caFile, certFile, keyFile)", "[netns][etcd-ipam]") {
  NetnsFixture fx;
  EtcdCluster etcd(3, "127.0.0.1", 23790, /*tls=*/true);
  Json ipam = EtcdIpam(etcd, "10.25.0.0/24", "", "", /*timeout=*/2);
  ipam["etcd"]["caFile"] = etcd.CaFile();
  ipam["etcd"]["certFile"] = etcd.ClientCert();
  ipam["etcd"]["keyFile"] = etcd.ClientKey();
  std::string conf = Conf(ipam);
  std::string a = Address(MustResult(Ipam("ADD", conf, "a")));
  CHECK(OwnerOf(Reserved(etcd), a) == "a");
  MustSucceed(Ipam("CHECK", conf, "a"));
  MustSucceed(Ipam("STATUS", conf, ""));

  // Without the client certificate the members refuse us; without the CA we
  // refuse them. Either way nothing is written.
  Json no_cert = ipam;
  no_cert["etcd"].erase("certFile");
  no_cert["etcd"].erase("keyFile");
  CHECK(Ipam("ADD", Conf(no_cert), "b").exit_code != 0);
  Json no_ca = ipam;
  no_ca["etcd"].erase("caFile");
  CHECK(Ipam("ADD", Conf(no_ca), "b").exit_code != 0);
  // A key file that is not there: code 5 (I/O), before any request.
  Json missing = ipam;
  missing["etcd"]["keyFile"] = etcd.ClientKey() + ".missing";
  CHECK(ErrorCode(Ipam("ADD", Conf(missing), "b")) == 5);
  CHECK(Reserved(etcd).size() == 1);
  MustSucceed(Ipam("DEL", conf, "a"));
  CHECK(Reserved(etcd).empty());
}

TEST_CASE("etcd-ipam: ADDs killed at any moment leave whole attachments or nothing",
          "[netns][etcd-ipam]") {
  NetnsFixture fx;
  EtcdCluster etcd(3);
  std::string conf = Conf(EtcdIpam(etcd, "10.26.0.0/24"));
  // 40 ADDs, each SIGKILLed after 1..40 ms (RunProcess's timeout): some
  // finish, some die before, during or after their transaction.
  std::vector<std::string> ids;
  for (int i = 0; i < 40; ++i) {
    ids.push_back(absl::StrCat("k", i));
    RunProcess({PluginDir() + "/etcd-ipam"},
               {kTestPath, "CNI_COMMAND=ADD", "CNI_CONTAINERID=" + ids.back(), "CNI_NETNS=/run/netns/none",
                "CNI_IFNAME=eth0", "CNI_PATH=" + PluginDir()},
               conf, 1 + i);
  }
  // Every record lists addresses that are reserved for it, and every reserved
  // address belongs to a record: no half-written ADD.
  std::map<std::string, std::string> reserved = Reserved(etcd);
  std::map<std::string, std::string> records = etcd.Get(absl::StrCat(kPrefix, "/attachments/"));
  size_t listed = 0;
  for (const auto& [key, value] : records) {
    Json rec = Json::parse(value);
    for (const Json& ip : rec["ips"]) {
      CHECK(OwnerOf(reserved, ip.get<std::string>()) == rec.value("containerID", ""));
      ++listed;
    }
  }
  CHECK(listed == reserved.size());
  INFO(records.size() << " of 40 ADDs killed after 1..40 ms had committed");
  // The runtime's DEL after a failed ADD releases whatever was written.
  for (const std::string& id : ids) MustSucceed(Ipam("DEL", conf, id));
  CHECK(Reserved(etcd).empty());
  CHECK(etcd.Get(absl::StrCat(kPrefix, "/attachments/")).empty());
}

// The bandwidth plugin through the CNI protocol, chained after ptp (static
// IPAM) in a NetnsFixture: kernel state, measured throughput with iperf3
// between a container and the private host namespace, errors, and the
// differential against upstream (/usr/lib/cni/bandwidth).
#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "cni/base/json.h"
#include "cni/net/link.h"
#include "cni/net/netlink.h"
#include "cni/net/qdisc.h"
#include "support/cni_call.h"
#include "support/netns_fixture.h"
#include "support/netns_tools.h"
#include "support/run.h"

namespace {

using cni::Json;
using namespace cni::test;  // NOLINT: test brevity

constexpr uint64_t kRate = 10'000'000;   // 10 Mbit/s
constexpr uint64_t kBurst = 80'000;      // 10 kB

Json PtpConf(const std::string& version, const std::string& addr) {
  return NetConf(version, "bwnet", "ptp", {{"ipam", StaticIpam(addr, "10.89.0.1", nullptr)}});
}

Json PtpAdd(const std::string& version, const std::string& netns, const std::string& id,
            const std::string& addr) {
  RunResult r = CallPlugin("ptp", "ADD", PtpConf(version, addr).dump(), netns, id);
  MustSucceed(r);
  return Json::parse(r.out);
}

void PtpDel(const std::string& version, const std::string& netns, const std::string& id) {
  MustSucceed(CallPlugin("ptp", "DEL", PtpConf(version, "10.89.0.5/24").dump(), netns, id));
}

Json BwConf(const std::string& version, const Json& prev, const Json& keys) {
  return NetConf(version, "bwnet", "bandwidth", keys, prev);
}

const Json kBoth = {{"ingressRate", kRate}, {"ingressBurst", kBurst},
                    {"egressRate", kRate}, {"egressBurst", kBurst}};

// The host interface of a ptp result.
std::string HostVeth(const Json& result) {
  for (const auto& i : result["interfaces"]) {
    if (!i.contains("sandbox")) return i["name"].get<std::string>();
  }
  return "";
}

std::vector<std::string> Ifbs(const NetnsFixture& fx) {
  std::vector<std::string> out;
  for (const std::string& l : fx.Links()) {
    if (l.rfind("bwp", 0) == 0) out.push_back(l);
  }
  return out;
}

// Qdiscs (root and ingress) of a host link, read straight from the kernel.
std::vector<cni::net::QdiscInfo> Qdiscs(const std::string& link) {
  auto sock = cni::net::NetlinkSocket::Open();
  REQUIRE(sock.ok());
  auto info = cni::net::LinkByName(*sock, link);
  REQUIRE(info.ok());
  auto q = cni::net::ListQdiscs(*sock, info->index);
  REQUIRE(q.ok());
  std::vector<cni::net::QdiscInfo> out;
  for (auto& x : *q) {
    if (x.kind == "tbf" || x.kind == "ingress") out.push_back(x);
  }
  return out;
}

// iperf3 from `netns` to a one-shot server on `server_ip` in the host
// namespace, ~3 s; `reverse` measures host -> container. Bits/s received.
double Iperf(const NetnsFixture& fx, const std::string& netns, const std::string& server_ip,
             bool reverse) {
  std::thread server([&] {
    fx.Exec("", {"iperf3", "-s", "-1", "-B", server_ip, "-p", "5299"}, 15000);
  });
  RunResult r;
  for (int attempt = 0; attempt < 20; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::vector<std::string> argv = {"iperf3", "-c", server_ip, "-p", "5299", "-t", "3", "-J",
                                     "--connect-timeout", "1000"};
    if (reverse) argv.push_back("-R");
    r = fx.Exec(netns, argv, 12000);
    if (r.exit_code == 0) break;
  }
  server.join();
  INFO(Describe(r));
  REQUIRE(r.exit_code == 0);
  Json j = Json::parse(r.out);
  return j["end"]["sum_received"]["bits_per_second"].get<double>();
}

}  // namespace

TEST_CASE("bandwidth: measured shaping in both directions", "[netns][bandwidth]") {
  NetnsFixture fx;
  std::string c1 = fx.AddNetns("c1");
  Json prev = PtpAdd("1.0.0", c1, "ctr1", "10.89.0.5/24");

  double free_up = Iperf(fx, c1, "10.89.0.1", false);
  RunResult add = CallPlugin("bandwidth", "ADD", BwConf("1.0.0", prev, kBoth).dump(), c1, "ctr1");
  INFO(Describe(add));
  REQUIRE(add.exit_code == 0);
  double egress = Iperf(fx, c1, "10.89.0.1", false);
  double ingress = Iperf(fx, c1, "10.89.0.1", true);
  INFO("unshaped " << free_up << " egress " << egress << " ingress " << ingress);
  CHECK(egress > kRate * 0.8);
  CHECK(egress < kRate * 1.2);
  CHECK(ingress > kRate * 0.8);
  CHECK(ingress < kRate * 1.2);
  CHECK(free_up > kRate * 5);

  REQUIRE(CallPlugin("bandwidth", "DEL", BwConf("1.0.0", Json::parse(add.out), kBoth).dump(), c1, "ctr1")
              .exit_code == 0);
  CHECK(Ifbs(fx).empty());
  CHECK(Iperf(fx, c1, "10.89.0.1", true) > kRate * 5);
  PtpDel("1.0.0", c1, "ctr1");
  TearDown(fx, {c1});
}

TEST_CASE("bandwidth: ADD, CHECK, DEL at every chaining version", "[netns][bandwidth]") {
  const std::string version = GENERATE(as<std::string>{}, "0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0");
  INFO("cniVersion " << version);
  NetnsFixture fx;
  std::string c1 = fx.AddNetns("c1");
  Json prev = PtpAdd(version, c1, "ctr1", "10.89.0.5/24");
  std::string veth = HostVeth(prev);

  RunResult add = CallPlugin("bandwidth", "ADD", BwConf(version, prev, kBoth).dump(), c1, "ctr1");
  INFO(Describe(add));
  REQUIRE(add.exit_code == 0);
  Json out = Json::parse(add.out);
  CHECK(out["cniVersion"] == version);
  std::vector<std::string> ifbs = Ifbs(fx);
  REQUIRE(ifbs.size() == 1);
  CHECK(ifbs[0].size() == 15);
  CHECK(out["interfaces"].back()["name"] == ifbs[0]);
  CHECK(Qdiscs(veth).size() == 2);   // tbf + ingress
  CHECK(Qdiscs(ifbs[0]).size() == 1);

  std::string chained = BwConf(version, out, kBoth).dump();
  if (version == "0.4.0" || version >= "1.0.0") {
    RunResult check = CallPlugin("bandwidth", "CHECK", chained, c1, "ctr1");
    INFO(Describe(check));
    CHECK(check.exit_code == 0);
    // A different rate fails CHECK.
    Json other = kBoth;
    other["egressRate"] = kRate * 2;
    CHECK(CallPlugin("bandwidth", "CHECK", BwConf(version, out, other).dump(), c1, "ctr1").exit_code != 0);
  }

  RunResult del = CallPlugin("bandwidth", "DEL", chained, c1, "ctr1");
  INFO(Describe(del));
  REQUIRE(del.exit_code == 0);
  CHECK(Ifbs(fx).empty());
  CHECK(Qdiscs(veth).empty());
  CHECK(CallPlugin("bandwidth", "DEL", chained, c1, "ctr1").exit_code == 0);  // missing is fine
  PtpDel(version, c1, "ctr1");
  TearDown(fx, {c1});
}

TEST_CASE("bandwidth: the runtimeConfig capability and refused configs", "[netns][bandwidth]") {
  NetnsFixture fx;
  std::string c1 = fx.AddNetns("c1");
  Json prev = PtpAdd("1.0.0", c1, "ctr1", "10.89.0.5/24");
  std::string veth = HostVeth(prev);

  auto refused = [&](const Json& keys, int code, const std::string& netns) {
    RunResult r = CallPlugin("bandwidth", "ADD", BwConf("1.0.0", prev, keys).dump(), netns, "ctr1");
    INFO(keys.dump() << " -> " << Describe(r));
    CHECK(r.exit_code != 0);
    CHECK(ErrorCode(r) == code);
    CHECK(Ifbs(fx).empty());
    CHECK(Qdiscs(veth).empty());
  };
  refused({{"ingressRate", kRate}}, 7, c1);
  refused({{"egressBurst", kBurst}}, 7, c1);
  refused({{"egressRate", kRate}, {"egressBurst", uint64_t{8} * 0xFFFFFFFFull}}, 7, c1);
  refused({{"egressRate", -5}, {"egressBurst", kBurst}}, 6, c1);
  // A container interface that is no veth.
  std::string c2 = fx.AddNetns("c2");
  REQUIRE(fx.Exec(c2, {"ip", "link", "add", "eth0", "type", "ifb"}).exit_code == 0);
  refused(kBoth, 999, c2);
  // Without limits ADD makes nothing, and CHECK has nothing to verify, even
  // off a veth (upstream 1.9.1 answers success too).
  CHECK(CallPlugin("bandwidth", "CHECK", BwConf("1.0.0", prev, Json::object()).dump(), c2, "ctr1").exit_code == 0);
  REQUIRE(fx.Exec(c2, {"ip", "link", "del", "eth0"}).exit_code == 0);

  // No keys in the config: the capability decides.
  Json rt = {{"runtimeConfig", {{"bandwidth", {{"egressRate", kRate}, {"egressBurst", kBurst}}}}}};
  RunResult add = CallPlugin("bandwidth", "ADD", BwConf("1.0.0", prev, rt).dump(), c1, "ctr1");
  INFO(Describe(add));
  REQUIRE(add.exit_code == 0);
  CHECK(Ifbs(fx).size() == 1);
  CHECK(Qdiscs(veth).size() == 1);  // ingress (redirect) only, no tbf on the veth
  // Keys in the config win over the capability.
  Json both = rt;
  both["ingressRate"] = kRate;
  both["ingressBurst"] = kBurst;
  CHECK(CallPlugin("bandwidth", "CHECK", BwConf("1.0.0", Json::parse(add.out), both).dump(), c1, "ctr1")
            .exit_code != 0);
  CHECK(CallPlugin("bandwidth", "CHECK", BwConf("1.0.0", Json::parse(add.out), rt).dump(), c1, "ctr1")
            .exit_code == 0);
  REQUIRE(CallPlugin("bandwidth", "DEL", BwConf("1.0.0", prev, rt).dump(), c1, "ctr1").exit_code == 0);

  PtpDel("1.0.0", c1, "ctr1");
  TearDown(fx, {c1, c2});
}

TEST_CASE("bandwidth: same kernel state as upstream, ADD/DEL across implementations, GC", "[netns][bandwidth]") {
  NetnsFixture fx;
  std::string c1 = fx.AddNetns("c1");
  std::string c2 = fx.AddNetns("c2");
  Json p1 = PtpAdd("1.0.0", c1, "ctr1", "10.89.0.5/24");
  Json p2 = PtpAdd("1.0.0", c2, "ctr2", "10.89.0.6/24");
  Json keys = {{"ingressRate", 123'456'789}, {"ingressBurst", 999'999},
               {"egressRate", 7'777'777}, {"egressBurst", 333'333}};
  RunResult ours = CallPlugin("bandwidth", "ADD", BwConf("1.0.0", p1, keys).dump(), c1, "ctr1");
  RunResult theirs =
      CallPlugin("bandwidth", "ADD", BwConf("1.0.0", p2, keys).dump(), c2, "ctr2", {.dir = kUpstreamDir});
  INFO(Describe(ours) << "\n" << Describe(theirs));
  REQUIRE(ours.exit_code == 0);
  REQUIRE(theirs.exit_code == 0);
  Json o = Json::parse(ours.out);
  Json t = Json::parse(theirs.out);
  REQUIRE(o["interfaces"].size() == t["interfaces"].size());
  std::string ifb1 = o["interfaces"].back()["name"];
  std::string ifb2 = t["interfaces"].back()["name"];

  auto same = [](const std::vector<cni::net::QdiscInfo>& a, const std::vector<cni::net::QdiscInfo>& b) {
    REQUIRE(a.size() == b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      CHECK(a[i].kind == b[i].kind);
      CHECK(a[i].handle == b[i].handle);
      CHECK(a[i].parent == b[i].parent);
      CHECK(a[i].tbf == b[i].tbf);
    }
  };
  same(Qdiscs(HostVeth(p1)), Qdiscs(HostVeth(p2)));
  same(Qdiscs(ifb1), Qdiscs(ifb2));
  {
    auto sock = cni::net::NetlinkSocket::Open();
    REQUIRE(sock.ok());
    auto l1 = cni::net::LinkByName(*sock, ifb1);
    auto l2 = cni::net::LinkByName(*sock, ifb2);
    REQUIRE(l1.ok());
    REQUIRE(l2.ok());
    CHECK(l1->mtu == l2->mtu);
    CHECK(l1->txqlen == l2->txqlen);
    CHECK(l1->up() == l2->up());
    CHECK(l1->kind == l2->kind);
  }
  // Both redirect the veth's ingress to their ifb.
  for (auto [veth, ifb] : {std::pair{HostVeth(p1), ifb1}, std::pair{HostVeth(p2), ifb2}}) {
    RunResult f = fx.Exec("", {"tc", "filter", "show", "dev", veth, "ingress"});
    CHECK(f.out.find("mirred") != std::string::npos);
    CHECK(f.out.find(ifb) != std::string::npos);
  }
  // Each CHECK accepts the other's work.
  CHECK(CallPlugin("bandwidth", "CHECK", BwConf("1.0.0", t, keys).dump(), c2, "ctr2").exit_code == 0);
  CHECK(CallPlugin("bandwidth", "CHECK", BwConf("1.0.0", o, keys).dump(), c1, "ctr1", {.dir = kUpstreamDir})
            .exit_code == 0);

  // ADD by one, DEL by the other.
  CHECK(CallPlugin("bandwidth", "DEL", BwConf("1.0.0", o, keys).dump(), c1, "ctr1", {.dir = kUpstreamDir})
            .exit_code == 0);
  CHECK(CallPlugin("bandwidth", "DEL", BwConf("1.0.0", t, keys).dump(), c2, "ctr2").exit_code == 0);
  CHECK(Ifbs(fx).empty());
  // Upstream's DEL leaves the veth's qdiscs (they go with the veth); ours
  // removes them, so the veth is ready for the next ADD.
  CHECK(CallPlugin("bandwidth", "DEL", BwConf("1.0.0", o, keys).dump(), c1, "ctr1").exit_code == 0);
  CHECK(Qdiscs(HostVeth(p1)).empty());
  CHECK(Qdiscs(HostVeth(p2)).empty());

  // GC: ours, for an attachment not in the list, goes; a listed one stays.
  REQUIRE(CallPlugin("bandwidth", "ADD", BwConf("1.0.0", p1, keys).dump(), c1, "ctr1").exit_code == 0);
  REQUIRE(CallPlugin("bandwidth", "ADD", BwConf("1.0.0", p2, keys).dump(), c2, "ctr2").exit_code == 0);
  Json gc = {{"cniVersion", "1.1.0"}, {"name", "bwnet"}, {"type", "bandwidth"},
             {"cni.dev/valid-attachments", Json::array({{{"containerID", "ctr2"}, {"ifname", "eth0"}}})}};
  RunResult r = CallPlugin("bandwidth", "GC", gc.dump(), "", "", {.ifname = ""});
  INFO(Describe(r));
  CHECK(r.exit_code == 0);
  CHECK(Ifbs(fx) == std::vector<std::string>{ifb2});
  CHECK(CallPlugin("bandwidth", "STATUS", gc.dump(), "", "", {.ifname = ""}).exit_code == 0);

  CHECK(CallPlugin("bandwidth", "DEL", BwConf("1.0.0", t, keys).dump(), c2, "ctr2").exit_code == 0);
  PtpDel("1.0.0", c1, "ctr1");
  PtpDel("1.0.0", c2, "ctr2");
  TearDown(fx, {c1, c2});
}

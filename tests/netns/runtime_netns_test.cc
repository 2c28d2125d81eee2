// The runtime library driving the real plugins (ptp, host-local, loopback)
// against real namespaces: ADD/CHECK/DEL for two containers with traffic
// between them, GC and STATUS, and the same results with upstream's plugins
// from /usr/lib/cni. Every case runs in a private host namespace
// (NetnsFixture), with host-local's dataDir and the cache in temp dirs.
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "cni/base/error.h"
#include "cni/base/ip.h"
#include "cni/base/json.h"
#include "cni/protocol/version.h"
#include "cni/runtime/runtime.h"
#include "support/cni_call.h"
#include "support/netns_fixture.h"
#include "support/netns_tools.h"
#include "support/run.h"

namespace {

using cni::Json;
using cni::runtime::Runtime;
using cni::runtime::RuntimeConf;
using namespace cni::test;  // NOLINT: test brevity

// ptp + host-local (+ loopback) at `version`.
cni::runtime::NetworkConfigList PtpList(const TempDir& data, const std::string& version, bool loopback) {
  Json ptp = {{"type", "ptp"},
              {"ipam", HostLocalIpam(data, {"10.88.0.0/24"}, Json::array({{{"dst", "0.0.0.0/0"}}}))}};
  Json plugins = Json::array({ptp});
  if (loopback) plugins.push_back({{"type", "loopback"}});
  Json list = {{"cniVersion", version}, {"name", "rtnet"}, {"plugins", plugins}};
  auto parsed = cni::runtime::ConfListFromBytes(list.dump());
  REQUIRE(parsed.ok());
  return *parsed;
}

RuntimeConf Att(const std::string& id, const std::string& netns) {
  RuntimeConf rt;
  rt.container_id = id;
  rt.netns = netns;
  rt.ifname = "eth0";
  return rt;
}

cni::net::IpAddress Addr(const cni::Result& r) { return r.ips.at(0).address.addr(); }

}  // namespace

TEST_CASE("runtime netns: ADD, traffic, CHECK, DEL with ptp, host-local and loopback", "[netns][runtime]") {
  NetnsFixture fx;
  TempDir data, cache;
  std::string ns1 = fx.AddNetns("rt1"), ns2 = fx.AddNetns("rt2");
  for (const std::string version : {"0.4.0", "1.0.0", "1.1.0"}) {
    DYNAMIC_SECTION("cniVersion " << version) {
      auto list = PtpList(data, version, /*loopback=*/true);
      cni::runtime::Options o;
      o.plugin_dirs = {cni::test::PluginDir()};
      o.cache_dir = cache.str();
      Runtime rt(o);
      cni::Result r1 = MustResult(rt.AddNetworkList(list, Att("ctr1", ns1)));
      cni::Result r2 = MustResult(rt.AddNetworkList(list, Att("ctr2", ns2)));
      // loopback passed ptp's result through; the final result is cached.
      REQUIRE(r1.ips.size() == 1);
      CHECK(r1.ips[0].address.ToString().rfind("10.88.0.", 0) == 0);
      CHECK(std::filesystem::exists(cache.str() + "/results/rtnet-ctr1-eth0"));
      CHECK(cni::test::Ping(ns1, Addr(r2)));
      CHECK(cni::test::Ping(ns2, Addr(r1)));
      CHECK(rt.CheckNetworkList(list, Att("ctr1", ns1)).ok());
      CHECK(rt.CheckNetworkList(list, Att("ctr2", ns2)).ok());
      CHECK(Reservations(data).size() == 2);

      REQUIRE(rt.DelNetworkList(list, Att("ctr1", ns1)).ok());
      REQUIRE(rt.DelNetworkList(list, Att("ctr2", ns2)).ok());
      CHECK(rt.DelNetworkList(list, Att("ctr2", ns2)).ok());  // DEL again is fine
      CHECK(Reservations(data).empty());
      CHECK(fx.Links(ns1) == std::vector<std::string>{"lo"});
      CHECK(fx.Links() == std::vector<std::string>{"lo"});
      CHECK(rt.GetCachedAttachments().empty());
    }
  }
  TearDown(fx, {ns1, ns2});
}

TEST_CASE("runtime netns: GC deletes what is not valid, then collects, and STATUS", "[netns][runtime]") {
  NetnsFixture fx;
  TempDir data, cache;
  std::string ns1 = fx.AddNetns("gc1"), ns2 = fx.AddNetns("gc2");
  auto list = PtpList(data, "1.1.0", /*loopback=*/false);
  cni::runtime::Options o;
  o.plugin_dirs = {cni::test::PluginDir()};
  o.cache_dir = cache.str();
  Runtime rt(o);
  CHECK(rt.StatusNetworkList(list).ok());
  cni::Result r1 = MustResult(rt.AddNetworkList(list, Att("ctr1", ns1)));
  MustResult(rt.AddNetworkList(list, Att("ctr2", ns2)));
  REQUIRE(fx.Links().size() == 3);

  REQUIRE(rt.GcNetworkList(list, std::vector<cni::Attachment>{{"ctr1", "eth0"}}).ok());
  // ctr2 was deleted (its veth and reservation are gone); ctr1 still works.
  CHECK(fx.Links().size() == 2);
  CHECK(fx.Links(ns2) == std::vector<std::string>{"lo"});
  CHECK(Reservations(data).size() == 1);
  CHECK(rt.GetCachedAttachments().size() == 1);
  CHECK(rt.CheckNetworkList(list, Att("ctr1", ns1)).ok());

  // GC with nothing valid takes the rest.
  REQUIRE(rt.GcNetworkList(list, std::vector<cni::Attachment>{}).ok());
  CHECK(Reservations(data).empty());
  CHECK(fx.Links() == std::vector<std::string>{"lo"});
  TearDown(fx, {ns1, ns2});
}

TEST_CASE("runtime netns: upstream's plugins give the same results through the library",
          "[netns][runtime][differential]") {
  if (!std::filesystem::exists(std::string(kUpstreamDir) + "/ptp") ||
      !std::filesystem::exists(std::string(kUpstreamDir) + "/host-local")) {
    WARN("no upstream ptp/host-local in /usr/lib/cni: differential skipped");
    return;
  }
  NetnsFixture fx;
  std::string ns = fx.AddNetns("diff");
  // The same list, once per plugin directory, each with fresh state.
  auto run = [&](const std::string& dir) {
    TempDir data, cache;
    auto list = PtpList(data, "1.0.0", /*loopback=*/false);
    cni::runtime::Options o;
    o.plugin_dirs = {dir};
    o.cache_dir = cache.str();
    Runtime rt(o);
    absl::StatusOr<Json> raw = rt.AddNetworkList(list, Att("diffctr", ns));
    cni::Result r = MustResult(raw);
    CHECK(rt.CheckNetworkList(list, Att("diffctr", ns)).ok());
    CHECK(rt.DelNetworkList(list, Att("diffctr", ns)).ok());
    CHECK(Reservations(data).empty());
    // Host veth names and MACs are random by construction.
    REQUIRE(r.interfaces.size() == 2);
    for (cni::Interface& i : r.interfaces) {
      if (i.sandbox.empty()) i.name = "HOSTVETH";
      i.mac.clear();
    }
    return r;
  };
  cni::Result upstream = run(kUpstreamDir);
  cni::Result ours = run(cni::test::PluginDir());
  CHECK(ours == upstream);
  CHECK(ours.cni_version == "1.0.0");
  TearDown(fx, {ns});
}

// GC through the library with plugins that own rules and devices: the
// attachment left out of the valid set loses its reservation, its portmap
// rules and its bandwidth ifb; the listed one keeps all three.
TEST_CASE("runtime netns: GC removes reservations, rules and devices of unlisted attachments",
          "[netns][runtime]") {
  NetnsFixture fx;
  TempDir data, cache;
  std::string ns1 = fx.AddNetns("gcr1"), ns2 = fx.AddNetns("gcr2");
  Json ptp = {{"type", "ptp"}, {"ipam", HostLocalIpam(data, {"10.89.0.0/24"}, nullptr)}};
  Json portmap = {{"type", "portmap"}, {"backend", "nftables"}, {"capabilities", {{"portMappings", true}}}};
  Json bandwidth = {{"type", "bandwidth"}, {"capabilities", {{"bandwidth", true}}}};
  Json doc = {{"cniVersion", "1.1.0"}, {"name", "gcnet"}, {"plugins", Json::array({ptp, portmap, bandwidth})}};
  auto list = cni::runtime::ConfListFromBytes(doc.dump());
  REQUIRE(list.ok());
  cni::runtime::Options o;
  o.plugin_dirs = {cni::test::PluginDir()};
  o.cache_dir = cache.str();
  Runtime rt(o);
  auto with_caps = [](RuntimeConf conf, int host_port) {
    conf.capability_args = {
        {"portMappings", Json::array({{{"hostPort", host_port}, {"containerPort", 80}, {"protocol", "tcp"}}})},
        {"bandwidth", {{"ingressRate", 8000000}, {"ingressBurst", 100000},
                       {"egressRate", 8000000}, {"egressBurst", 100000}}}};
    return conf;
  };
  MustResult(rt.AddNetworkList(*list, with_caps(Att("gcctr1", ns1), 8081)));
  MustResult(rt.AddNetworkList(*list, with_caps(Att("gcctr2", ns2), 8082)));
  auto rules = [&] { return fx.Exec("", {"nft", "list", "ruleset"}).out; };
  auto ifbs = [&] {
    int n = 0;
    for (const std::string& l : fx.Links()) n += l.rfind("bwp", 0) == 0;
    return n;
  };
  REQUIRE(Reservations(data).size() == 2);
  REQUIRE(ifbs() == 2);
  REQUIRE(rules().find("dport 8081") != std::string::npos);
  REQUIRE(rules().find("dport 8082") != std::string::npos);

  REQUIRE(rt.GcNetworkList(*list, std::vector<cni::Attachment>{{"gcctr1", "eth0"}}).ok());
  CHECK(Reservations(data).size() == 1);
  CHECK(ifbs() == 1);
  CHECK(rules().find("dport 8081") != std::string::npos);
  CHECK(rules().find("dport 8082") == std::string::npos);

  REQUIRE(rt.GcNetworkList(*list, std::vector<cni::Attachment>{}).ok());
  CHECK(Reservations(data).empty());
  CHECK(ifbs() == 0);
  CHECK(rules().find("dport 8081") == std::string::npos);
  TearDown(fx, {ns1, ns2});
}

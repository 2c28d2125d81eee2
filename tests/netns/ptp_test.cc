// The ptp plugin through the CNI protocol, against real kernel objects. Every
// test case runs in a NetnsFixture (a private host namespace); containers are
// namespaces created inside it. IPAM is `static` (no state) or `host-local`
// with a dataDir in a TempDir, so the machine's /var/lib/cni is never touched.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cni/base/ip.h"
#include "cni/base/json.h"
#include "cni/protocol/types.h"
#include "cni/protocol/version.h"
#include "support/cni_call.h"
#include "support/netns_fixture.h"
#include "support/netns_tools.h"
#include "support/run.h"

namespace {

using cni::Json;
using namespace cni::test;  // NOLINT: test brevity

cni::net::IpAddress A(const char* text) { return *cni::net::IpAddress::Parse(text); }

// A ptp network configuration: `ipam` as given, `extra` keys merged in.
std::string PtpConf(const std::string& version, const Json& ipam, const Json& extra = Json::object()) {
  Json conf = {{"cniVersion", version}, {"name", "ptpnet"}, {"type", "ptp"}, {"ipam", ipam}};
  for (const auto& [k, v] : extra.items()) conf[k] = v;
  return conf.dump();
}

const Json kDefaultRoute = Json::array({{{"dst", "0.0.0.0/0"}}});

// The ptp plugin through the CNI protocol. `options.dir` empty: our build;
// else e.g. kUpstreamDir (then its IPAM plugins come from there too).
RunResult Call(const std::string& command, const std::string& conf, const std::string& netns,
               const std::string& id, const CallOptions& options = {}) {
  return CallPlugin("ptp", command, conf, netns, id, options);
}

bool HasLink(const std::vector<std::string>& links, const std::string& name) {
  return std::find(links.begin(), links.end(), name) != links.end();
}

const std::vector<std::string> kOnlyLo = {"lo"};

size_t Count(absl::string_view text, absl::string_view word) {
  size_t n = 0;
  for (size_t at = text.find(word); at != absl::string_view::npos; at = text.find(word, at + word.size())) ++n;
  return n;
}

// The host namespace's link-local addresses, once there are `links` of them
// (or after 10 s). The kernel adds one when the link's carrier comes up, and
// hears of the carrier asynchronously (linkwatch), so the address may come
// after ADD has returned; the plugin promises only that it skips DAD.
std::string HostLinkLocals(const NetnsFixture& fx, size_t links) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  std::string out = MustExec(fx, "", {"ip", "-6", "-o", "addr", "show", "scope", "link"});
  while (Count(out, "fe80::") < links && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    out = MustExec(fx, "", {"ip", "-6", "-o", "addr", "show", "scope", "link"});
  }
  return out;
}

}  // namespace

TEST_CASE("ptp: ADD, traffic, CHECK, DEL at every CNI version", "[netns][ptp]") {
  const std::string version =
      GENERATE(as<std::string>{}, "0.1.0", "0.2.0", "0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0");
  INFO("cniVersion " << version);
  NetnsFixture fx;
  std::string c1 = fx.AddNetns("c1");
  std::string c2 = fx.AddNetns("c2");
  std::string conf1 = PtpConf(version, StaticIpam("10.77.0.5/24", "10.77.0.1", kDefaultRoute));
  std::string conf2 = PtpConf(version, StaticIpam("10.77.0.6/24", "10.77.0.1", kDefaultRoute));

  RunResult add1 = Call("ADD", conf1, c1, "ctr1");
  cni::Result r1 = MustResult(add1);
  MustResult(Call("ADD", conf2, c2, "ctr2"));

  REQUIRE(r1.ips.size() == 1);
  CHECK(r1.ips[0].address.ToString() == "10.77.0.5/24");
  CHECK(r1.ips[0].gateway == A("10.77.0.1"));
  if (cni::VersionAtLeast(version, "0.3.0")) {
    REQUIRE(r1.interfaces.size() == 2);
    CHECK(absl::StartsWith(r1.interfaces[0].name, "veth"));
    CHECK(r1.interfaces[0].name.size() == 12);
    CHECK(r1.interfaces[0].sandbox.empty());
    CHECK(r1.interfaces[1].name == "eth0");
    CHECK(r1.interfaces[1].sandbox == c1);
    CHECK(r1.ips[0].interface == 1);
    CHECK(HasLink(fx.Links(), r1.interfaces[0].name));
  }
  CHECK(fx.Links().size() == 3);  // lo + two host veths
  CHECK(HasLink(fx.Links(c1), "eth0"));

  // The container reaches its gateway (the host end) and, through the host,
  // a neighbour in its own subnet.
  CHECK(cni::test::Ping(c1, A("10.77.0.1")));
  CHECK(cni::test::Ping(c1, A("10.77.0.6")));
  CHECK(cni::test::Ping(c2, A("10.77.0.5")));
  CHECK(MustExec(fx, "", {"ip", "-4", "route", "show", "10.77.0.5"}).find("scope host") != std::string::npos);

  if (cni::VersionAtLeast(version, "0.4.0")) {
    MustSucceed(Call("CHECK", WithPrevResult(conf1, add1.out), c1, "ctr1"));
  }

  MustSucceed(Call("DEL", conf1, c1, "ctr1"));
  MustSucceed(Call("DEL", conf1, c1, "ctr1"));  // idempotent
  MustSucceed(Call("DEL", conf2, c2, "ctr2"));
  CHECK(fx.Links(c1) == kOnlyLo);
  CHECK(fx.Links(c2) == kOnlyLo);
  TearDown(fx, {c1, c2});
}

TEST_CASE("ptp: CHECK names what is missing", "[netns][ptp]") {
  NetnsFixture fx;
  std::string c1 = fx.AddNetns("c1");
  std::string conf = PtpConf("1.0.0", StaticIpam("10.77.0.5/24", "10.77.0.1", kDefaultRoute));
  RunResult add = Call("ADD", conf, c1, "ctr1");
  cni::Result res = MustResult(add);
  const std::string host_veth = res.interfaces[0].name;
  const std::string check_conf = WithPrevResult(conf, add.out);
  MustSucceed(Call("CHECK", check_conf, c1, "ctr1"));

  std::string expect;
  SECTION("the subnet route in the container") {
    MustExec(fx, c1, {"ip", "route", "del", "10.77.0.0/24"});
    expect = "route 10.77.0.0/24 via 10.77.0.1 dev eth0 is missing in the container";
  }
  SECTION("the default route from IPAM") {
    MustExec(fx, c1, {"ip", "route", "del", "default"});
    expect = "route 0.0.0.0/0 is missing in the container";
  }
  SECTION("the container address") {
    MustExec(fx, c1, {"ip", "addr", "del", "10.77.0.5/24", "dev", "eth0"});
    expect = "address 10.77.0.5/24 is missing on container interface \"eth0\"";
  }
  SECTION("the gateway address on the host veth") {
    MustExec(fx, "", {"ip", "addr", "del", "10.77.0.1/32", "dev", host_veth});
    expect = "address 10.77.0.1/32 is missing on host interface \"" + host_veth + "\"";
  }
  SECTION("the host route") {
    MustExec(fx, "", {"ip", "route", "del", "10.77.0.5/32", "dev", host_veth});
    expect = "route 10.77.0.5/32 dev " + host_veth + " is missing in the host namespace";
  }
  SECTION("the container link") {
    MustExec(fx, c1, {"ip", "link", "del", "eth0"});
    expect = "container interface \"eth0\" not found";
  }
  RunResult check = Call("CHECK", check_conf, c1, "ctr1");
  CHECK(check.exit_code != 0);
  INFO(check.out);
  CHECK(absl::StrContains(ErrorMessage(check), expect));

  MustSucceed(Call("DEL", conf, c1, "ctr1"));
  TearDown(fx, {c1});
}

TEST_CASE("ptp: dual stack with host-local", "[netns][ptp]") {
  NetnsFixture fx;
  TempDir data;
  std::string c1 = fx.AddNetns("c1");
  std::string c2 = fx.AddNetns("c2");
  const std::vector<std::string> subnets = {"10.88.0.0/24", "fd88::/64"};
  Json routes = Json::array({{{"dst", "0.0.0.0/0"}}, {{"dst", "::/0"}}});
  std::string conf = PtpConf("1.1.0", HostLocalIpam(data, subnets, routes));

  RunResult add1 = Call("ADD", conf, c1, "ctr1");
  cni::Result r1 = MustResult(add1);
  cni::Result r2 = MustResult(Call("ADD", conf, c2, "ctr2"));
  REQUIRE(r1.ips.size() == 2);
  REQUIRE(r2.ips.size() == 2);
  CHECK(Reservations(data).size() == 4);
  // The host ends route from the moment ADD returns: their link-local
  // addresses skip DAD. While one is tentative (1-2 s) the host sends no
  // neighbour solicitation on that link, and c1 could not reach c2.
  const std::string host_link_local = HostLinkLocals(fx, 2);
  CHECK(Count(host_link_local, "fe80::") == 2);
  CHECK_FALSE(absl::StrContains(host_link_local, "tentative"));

  for (const cni::IpConfig& ip : r1.ips) {
    INFO(ip.address.ToString());
    REQUIRE(ip.gateway);
    CHECK(cni::test::Ping(c1, *ip.gateway));
  }
  for (const cni::IpConfig& ip : r2.ips) {
    INFO(ip.address.ToString());
    CHECK(cni::test::Ping(c1, ip.address.addr()));
  }
  // The IPv6 default route goes through the gateway, like IPv4's.
  CHECK(absl::StrContains(MustExec(fx, c1, {"ip", "-6", "route", "show", "default"}), "via fd88::1 dev eth0"));
  CHECK(MustExec(fx, "", {"ip", "-6", "addr", "show"}).find("fd88::1/128") != std::string::npos);
  CHECK(absl::StrContains(MustExec(fx, "", {"ip", "-o", "-6", "route"}), r1.ips[1].address.addr().ToString()));

  MustSucceed(Call("CHECK", WithPrevResult(conf, add1.out), c1, "ctr1"));
  // STATUS and GC go to host-local; GC keeping both attachments frees nothing.
  MustSucceed(Call("STATUS", conf, "", ""));
  Json gc = Json::parse(conf);
  gc["cni.dev/valid-attachments"] = {{{"containerID", "ctr1"}, {"ifname", "eth0"}},
                                     {{"containerID", "ctr2"}, {"ifname", "eth0"}}};
  MustSucceed(Call("GC", gc.dump(), "", "", {.ifname = ""}));
  CHECK(Reservations(data).size() == 4);

  MustSucceed(Call("DEL", conf, c1, "ctr1"));
  MustSucceed(Call("DEL", conf, c2, "ctr2"));
  MustSucceed(Call("DEL", conf, c2, "ctr2"));
  CHECK(Reservations(data).empty());
  CHECK(fx.Links() == kOnlyLo);
  TearDown(fx, {c1, c2});
}

TEST_CASE("ptp: DEL releases the address when the namespace is gone", "[netns][ptp]") {
  NetnsFixture fx;
  TempDir data;
  std::string c1 = fx.AddNetns("c1");
  std::string conf = PtpConf("1.0.0", HostLocalIpam(data, {"10.88.0.0/24"}));
  MustResult(Call("ADD", conf, c1, "ctr1"));
  REQUIRE(Reservations(data).size() == 1);
  fx.DelNetns(c1);
  // The kernel takes the veth pair with the namespace, asynchronously.
  for (int i = 0; i < 100 && fx.Links() != kOnlyLo; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK(fx.Links() == kOnlyLo);

  SECTION("CNI_NETNS still names the vanished namespace") {
    MustSucceed(Call("DEL", conf, c1, "ctr1"));
  }
  SECTION("CNI_NETNS is empty") {
    MustSucceed(Call("DEL", conf, "", "ctr1"));
  }
  CHECK(Reservations(data).empty());
  CHECK(fx.Leftovers().empty());
}

TEST_CASE("ptp: ipMasq with an unknown backend is refused before anything happens", "[netns][ptp]") {
  // The masquerading itself is exercised in ipmasq_test.cc.
  NetnsFixture fx;
  TempDir data;
  std::string c1 = fx.AddNetns("c1");
  std::string conf =
      PtpConf("1.0.0", HostLocalIpam(data, {"10.88.0.0/24"}), {{"ipMasq", true}, {"ipMasqBackend", "pf"}});
  RunResult add = Call("ADD", conf, c1, "ctr1");
  CHECK(add.exit_code != 0);
  CHECK(ErrorCode(add) == 7);
  CHECK(absl::StrContains(ErrorMessage(add), "ipMasqBackend"));
  // IPAM was never called: not even its network directory exists.
  CHECK(std::filesystem::is_empty(data.path()));
  CHECK(fx.Links() == kOnlyLo);
  CHECK(fx.Links(c1) == kOnlyLo);
  TearDown(fx, {c1});
}

TEST_CASE("ptp: a CNI_IFNAME that exists in the container is refused before any change",
          "[netns][ptp]") {
  // "lo" is in every namespace: ADD must fail before IPAM and before the
  // host-wide ip_forward, which starts at 0 in the private host namespace.
  NetnsFixture fx;
  TempDir data;
  std::string c1 = fx.AddNetns("c1");
  auto ip_forward = [&] { return MustExec(fx, "", {"cat", "/proc/sys/net/ipv4/ip_forward"}); };
  REQUIRE(ip_forward() == "0\n");
  RunResult add = Call("ADD", PtpConf("1.0.0", HostLocalIpam(data, {"10.88.0.0/24"})), c1, "ctr1",
                       {.ifname = "lo"});
  INFO(add.out << add.err);
  CHECK(add.exit_code != 0);
  CHECK(ErrorMessage(add) == "container veth name \"lo\" already exists");
  CHECK(ip_forward() == "0\n");
  CHECK(std::filesystem::is_empty(data.path()));  // IPAM was never called
  CHECK(fx.Links() == kOnlyLo);
  CHECK(fx.Links(c1) == kOnlyLo);
  TearDown(fx, {c1});
}

TEST_CASE("ptp: a failed ADD rolls back", "[netns][ptp]") {
  NetnsFixture fx;
  TempDir data;
  std::string c1 = fx.AddNetns("c1");
  const std::vector<std::string> subnets = {"10.88.0.0/24"};
  std::vector<std::string> container_links_before = kOnlyLo;
  RunResult add;

  SECTION("CNI_IFNAME already exists in the container") {
    MustExec(fx, c1, {"ip", "link", "add", "eth0", "type", "veth", "peer", "name", "eth0peer"});
    container_links_before = fx.Links(c1);
    add = Call("ADD", PtpConf("1.0.0", HostLocalIpam(data, subnets)), c1, "ctr1");
    CHECK(absl::StrContains(ErrorMessage(add), "\"eth0\" already exists"));
  }
  SECTION("an IPAM route the container cannot have (after the veth exists)") {
    Json routes = Json::array({{{"dst", "10.99.0.0/16"}, {"gw", "192.168.254.1"}}});
    add = Call("ADD", PtpConf("1.0.0", HostLocalIpam(data, subnets, routes)), c1, "ctr1");
    CHECK(absl::StrContains(ErrorMessage(add), "10.99.0.0/16"));
  }
  SECTION("an MTU veth cannot have (refused before IPAM)") {
    add = Call("ADD", PtpConf("1.0.0", HostLocalIpam(data, subnets), {{"mtu", 70000}}), c1, "ctr1");
    CHECK(ErrorCode(add) == 7);
    CHECK(absl::StrContains(ErrorMessage(add), "mtu 70000"));
  }
  SECTION("an IPAM address without a gateway") {
    add = Call("ADD", PtpConf("1.0.0", StaticIpam("10.77.0.5/24", "", kDefaultRoute)), c1, "ctr1");
    CHECK(absl::StrContains(ErrorMessage(add), "has no gateway"));
  }
  INFO(add.out << add.err);
  CHECK(add.exit_code != 0);
  CHECK(Reservations(data).empty());
  CHECK(fx.Links() == kOnlyLo);
  CHECK(fx.Links(c1) == container_links_before);
  TearDown(fx, {c1});
}

TEST_CASE("ptp: a CNI_NETNS that is not a namespace", "[netns][ptp]") {
  NetnsFixture fx;
  TempDir data;
  std::string file = data.str() + "/not-a-netns";
  std::ofstream(file) << "plain file\n";
  std::string conf = PtpConf("1.0.0", HostLocalIpam(data, {"10.88.0.0/24"}));
  RunResult add = Call("ADD", conf, file, "ctr1");
  INFO(add.out);
  CHECK(add.exit_code != 0);
  CHECK(absl::StrContains(ErrorMessage(add), file));
  CHECK(Reservations(data).empty());
  CHECK(fx.Links() == kOnlyLo);
  CHECK(fx.Leftovers().empty());
}

// ---- Differential: upstream's ptp and ours, one after the other, same config ----
namespace {

// The kernel state of one namespace in a comparable form: addresses and
// main-table routes, with the host veth's random name replaced, link-local
// IPv6 (derived from the random MACs) and address flags left out.
std::vector<std::string> KernelState(const NetnsFixture& fx, const std::string& netns,
                                     const std::string& host_veth) {
  auto dev = [&](const std::string& name) { return name == host_veth ? "HOSTVETH" : name; };
  std::vector<std::string> out;
  for (const Json& link : Json::parse(MustExec(fx, netns, {"ip", "-j", "addr", "show"}))) {
    out.push_back(absl::StrCat("link ", dev(link.value("ifname", "")), " mtu ", link.value("mtu", 0)));
    for (const Json& a : link.value("addr_info", Json::array())) {
      std::string local = a.value("local", "");
      if (absl::StartsWith(local, "fe80:")) continue;
      out.push_back(absl::StrCat("addr ", dev(link.value("ifname", "")), " ", local, "/",
                                 a.value("prefixlen", 0), " scope ", a.value("scope", "")));
    }
  }
  for (const char* family : {"-4", "-6"}) {
    for (const Json& r :
         Json::parse(MustExec(fx, netns, {"ip", "-j", family, "route", "show", "table", "main"}))) {
      std::string dst = r.value("dst", "");
      if (absl::StartsWith(dst, "fe80:")) continue;
      out.push_back(absl::StrCat("route ", dst, " via ", r.value("gateway", "-"), " dev ",
                                 dev(r.value("dev", "")), " scope ", r.value("scope", "-"),
                                 " src ", r.value("prefsrc", "-"), " proto ",
                                 r.value("protocol", "-"), " metric ", r.value("metric", 0)));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

struct Outcome {
  cni::Result result;
  std::vector<std::string> container, host;
};

Outcome AddAndSnapshot(NetnsFixture& fx, const std::string& conf, const std::string& netns,
                       const std::string& dir) {
  Outcome o;
  o.result = MustResult(Call("ADD", conf, netns, "diff", {.dir = dir}));
  REQUIRE(o.result.interfaces.size() == 2);
  const std::string host_veth = o.result.interfaces[0].name;
  o.container = KernelState(fx, netns, host_veth);
  o.host = KernelState(fx, "", host_veth);
  // Names, MACs and the sandbox path differ by construction.
  NormalizeForDiff(o.result, host_veth);
  MustSucceed(Call("DEL", conf, netns, "diff", {.dir = dir}));
  return o;
}

}  // namespace

TEST_CASE("ptp: same result and kernel state as upstream's ptp", "[netns][ptp][differential]") {
  if (!std::filesystem::exists(std::string(kUpstreamDir) + "/ptp")) {
    WARN("no upstream ptp in /usr/lib/cni: differential skipped");
    return;
  }
  NetnsFixture fx;
  std::string up_ns = fx.AddNetns("upstream");
  std::string our_ns = fx.AddNetns("ours");
  // Dual stack, an extra IPAM route, mtu and dns: every part of the contract.
  Json ipam = StaticIpam("10.77.0.5/24", "10.77.0.1",
                         Json::array({{{"dst", "0.0.0.0/0"}},
                                      {{"dst", "::/0"}},
                                      {{"dst", "192.168.50.0/24"}, {"gw", "10.77.0.1"}}}));
  ipam["addresses"].push_back({{"address", "fd77::5/64"}, {"gateway", "fd77::1"}});
  std::string conf = PtpConf("1.0.0", ipam, {{"mtu", 1400}, {"dns", {{"nameservers", {"10.0.0.53"}}}}});

  Outcome up = AddAndSnapshot(fx, conf, up_ns, kUpstreamDir);
  Outcome ours = AddAndSnapshot(fx, conf, our_ns, "");
  CHECK(ours.result == up.result);
  CHECK(ours.container == up.container);
  CHECK(ours.host == up.host);
  // Spot checks that the comparison sees what matters (ip -j omits defaults).
  auto has = [](const std::vector<std::string>& v, const std::string& line) {
    return std::find(v.begin(), v.end(), line) != v.end();
  };
  CHECK(has(ours.container, "link eth0 mtu 1400"));
  CHECK(has(ours.container, "route 10.77.0.1 via - dev eth0 scope link src 10.77.0.5 proto - metric 0"));
  CHECK(has(ours.container, "route 10.77.0.0/24 via 10.77.0.1 dev eth0 scope - src 10.77.0.5 proto - metric 0"));
  CHECK(has(ours.container, "route fd77::/64 via fd77::1 dev eth0 scope - src fd77::5 proto - metric 1024"));
  CHECK(has(ours.host, "addr HOSTVETH 10.77.0.1/32 scope global"));
  CHECK(has(ours.host, "route 10.77.0.5 via - dev HOSTVETH scope host src - proto - metric 0"));
  CHECK(ours.result.dns.nameservers == std::vector<std::string>{"10.0.0.53"});

  CHECK(fx.Links(up_ns) == kOnlyLo);
  CHECK(fx.Links(our_ns) == kOnlyLo);
  TearDown(fx, {up_ns, our_ns});
}

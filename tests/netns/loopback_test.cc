// The loopback plugin through the CNI protocol, in a NetnsFixture.
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
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

// The loopback plugin through the CNI protocol, with a fixed container id
// (CNI_IFNAME is eth0 and ignored: loopback always means "lo").
RunResult Call(const std::string& command, const std::string& conf, const std::string& netns,
               const std::string& dir = "") {
  return CallPlugin("loopback", command, conf, netns, "lo-test", {.dir = dir});
}

std::string Conf(const std::string& version) {
  return Json{{"cniVersion", version}, {"name", "lo"}, {"type", "loopback"}}.dump();
}

// True when lo is administratively up in `netns` (kernel view through ip -j).
bool LoUp(const NetnsFixture& fx, const std::string& netns) {
  RunResult r = fx.Exec(netns, {"ip", "-j", "link", "show", "lo"});
  REQUIRE(r.exit_code == 0);
  // Keep the document in a variable: a range-for over a member of a temporary
  // would dangle (the temporary dies before the loop body, before C++23).
  const Json links = Json::parse(r.out);
  for (const Json& flag : links.at(0).at("flags")) {
    if (flag.is_string() && flag.get<std::string>() == "UP") return true;
  }
  return false;
}

std::vector<std::string> Addresses(const cni::Result& r) {
  std::vector<std::string> out;
  for (const cni::IpConfig& ip : r.ips) out.push_back(ip.address.ToString());
  return out;
}

}  // namespace

TEST_CASE("loopback: up and down at every CNI version", "[netns][loopback]") {
  const std::string version =
      GENERATE(as<std::string>{}, "0.1.0", "0.2.0", "0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0");
  INFO("cniVersion " << version);
  NetnsFixture fx;
  std::string ns = fx.AddNetns("c1");
  REQUIRE_FALSE(LoUp(fx, ns));

  cni::Result r = MustResult(Call("ADD", Conf(version), ns));
  CHECK(LoUp(fx, ns));
  CHECK(cni::test::Ping(ns, *cni::net::IpAddress::Parse("127.0.0.1")));
  CHECK(Addresses(r) == std::vector<std::string>{"127.0.0.1/8", "::1/128"});
  if (cni::VersionAtLeast(version, "0.3.0")) {
    REQUIRE(r.interfaces.size() == 1);
    CHECK(r.interfaces[0].name == "lo");
    CHECK(r.interfaces[0].sandbox == ns);
    CHECK(r.ips[0].interface == 0);
  }

  const bool has_check = cni::VersionAtLeast(version, "0.4.0");
  if (has_check) MustSucceed(Call("CHECK", Conf(version), ns));

  MustSucceed(Call("DEL", Conf(version), ns));
  CHECK_FALSE(LoUp(fx, ns));
  if (has_check) {
    RunResult check = Call("CHECK", Conf(version), ns);
    CHECK(check.exit_code != 0);
    CHECK(absl::StrContains(check.out, "loopback interface is down"));
  }
  MustSucceed(Call("DEL", Conf(version), ns));  // idempotent

  fx.DelNetns(ns);
  MustSucceed(Call("DEL", Conf(version), ns));  // the namespace is gone
  MustSucceed(Call("DEL", Conf(version), ""));  // no namespace at all
  CHECK(fx.Leftovers().empty());
}

TEST_CASE("loopback: prevResult passes through, dns is kept", "[netns][loopback]") {
  NetnsFixture fx;
  std::string ns = fx.AddNetns("c1");
  Json prev = {{"cniVersion", "1.0.0"},
               {"interfaces", {{{"name", "eth0"}, {"sandbox", ns}}}},
               {"ips", {{{"interface", 0}, {"address", "10.1.2.3/24"}}}}};
  Json chained = {{"cniVersion", "1.0.0"}, {"name", "lo"}, {"type", "loopback"}, {"prevResult", prev}};
  cni::Result r = MustResult(Call("ADD", chained.dump(), ns));
  CHECK(Addresses(r) == std::vector<std::string>{"10.1.2.3/24"});
  CHECK(LoUp(fx, ns));

  Json with_dns = {{"cniVersion", "1.0.0"}, {"name", "lo"}, {"type", "loopback"},
                   {"dns", {{"nameservers", {"10.0.0.53"}}}}};
  cni::Result d = MustResult(Call("ADD", with_dns.dump(), ns));
  CHECK(d.dns.nameservers == std::vector<std::string>{"10.0.0.53"});

  MustSucceed(Call("DEL", chained.dump(), ns));
  TearDown(fx, {ns});
}

TEST_CASE("loopback: same result and state as upstream's loopback", "[netns][loopback][differential]") {
  if (!std::filesystem::exists(std::string(kUpstreamDir) + "/loopback")) {
    WARN("no upstream loopback in /usr/lib/cni: differential skipped");
    return;
  }
  NetnsFixture fx;
  std::string up_ns = fx.AddNetns("upstream");
  std::string our_ns = fx.AddNetns("ours");
  // 1.0.0: upstream v1.1.1 prints older versions without converting them.
  cni::Result up = MustResult(Call("ADD", Conf("1.0.0"), up_ns, kUpstreamDir));
  cni::Result ours = MustResult(Call("ADD", Conf("1.0.0"), our_ns));
  up.interfaces[0].sandbox = ours.interfaces[0].sandbox = "SANDBOX";
  CHECK(ours == up);
  CHECK(LoUp(fx, up_ns) == LoUp(fx, our_ns));

  MustSucceed(Call("DEL", Conf("1.0.0"), up_ns, kUpstreamDir));
  MustSucceed(Call("DEL", Conf("1.0.0"), our_ns));
  CHECK(LoUp(fx, up_ns) == LoUp(fx, our_ns));
  TearDown(fx, {up_ns, our_ns});
}

// cnitool through its command line, in a private namespace: NETCONFPATH names
// a temp dir; the result cache (/var/lib/cni, as upstream's cnitool has no
// setting for it) is NetnsFixture's private /var/lib/cni, so the machine's
// /var/lib is never touched.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "cni/base/hash.h"
#include "cni/base/ip.h"
#include "cni/base/json.h"
#include "support/netns_fixture.h"
#include "support/run.h"

namespace {

using cni::Json;
using cni::test::NetnsFixture;
using cni::test::RunResult;
using cni::test::TempDir;

RunResult Cnitool(const std::vector<std::string>& args, const TempDir& netconf,
                  const std::vector<std::string>& extra_env = {}) {
  std::vector<std::string> argv = {cni::test::PluginDir() + "/cnitool"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<std::string> env = {cni::test::kTestPath, "NETCONFPATH=" + netconf.str(),
                                  "CNI_PATH=" + cni::test::PluginDir()};
  env.insert(env.end(), extra_env.begin(), extra_env.end());
  return cni::test::RunProcess(argv, env, "");
}

std::string CacheFile(const std::string& netns, const std::string& ifname = "eth0") {
  // Upstream: "cnitool-" + hex(sha512(netns path)[:10]).
  return "/var/lib/cni/results/toolnet-" + cni::HashWithPrefix(28, "cnitool-", netns) + "-" + ifname;
}

}  // namespace

TEST_CASE("runtime cnitool: add, check, status, del and gc in a private namespace", "[netns][runtime][cnitool]") {
  NetnsFixture fx;
  TempDir netconf, data;
  Json list = {{"cniVersion", "1.1.0"},
               {"name", "toolnet"},
               {"plugins", Json::array({{{"type", "ptp"},
                                         {"ipam", {{"type", "host-local"},
                                                   {"dataDir", data.str()},
                                                   {"subnet", "10.89.0.0/24"},
                                                   {"routes", Json::array({{{"dst", "0.0.0.0/0"}}})}}}},
                                        {{"type", "loopback"}}})}};
  std::ofstream(netconf.path() / "10-toolnet.conflist") << list.dump(2);
  std::string ns1 = fx.AddNetns("tool1"), ns2 = fx.AddNetns("tool2");

  RunResult add1 = Cnitool({"add", "toolnet", ns1}, netconf);
  INFO(add1.out << add1.err);
  REQUIRE(add1.exit_code == 0);
  // Printed as upstream prints it: Go field order, 4-space indent, no newline.
  CHECK(add1.out.rfind("{\n    \"cniVersion\": \"1.1.0\",\n    \"interfaces\": [\n        {\n            \"name\": ", 0) == 0);
  CHECK(add1.out.back() == '}');
  Json r1 = Json::parse(add1.out);
  CHECK(std::filesystem::exists(CacheFile(ns1)));

  // -i picks the interface name (and so the cache file).
  RunResult add2 = Cnitool({"-i", "net0", "add", "toolnet", ns2}, netconf, {"CNI_ARGS=IgnoreUnknown=1"});
  INFO(add2.out << add2.err);
  REQUIRE(add2.exit_code == 0);
  Json r2 = Json::parse(add2.out);
  CHECK(std::filesystem::exists(CacheFile(ns2, "net0")));
  CHECK(fx.Links(ns2) == std::vector<std::string>{"lo", "net0"});

  auto addr = [](const Json& r) {
    std::string a = r["ips"][0]["address"].get<std::string>();
    return *cni::net::IpAddress::Parse(a.substr(0, a.find('/')));
  };
  CHECK(cni::test::Ping(ns1, addr(r2)));
  CHECK(Cnitool({"check", "toolnet", ns1}, netconf).exit_code == 0);
  CHECK(Cnitool({"status", "toolnet", ns1}, netconf).exit_code == 0);

  RunResult del1 = Cnitool({"del", "toolnet", ns1}, netconf);
  CHECK(del1.exit_code == 0);
  CHECK(del1.out.empty());
  CHECK_FALSE(std::filesystem::exists(CacheFile(ns1)));
  CHECK(fx.Links(ns1) == std::vector<std::string>{"lo"});

  // gc without valid attachments (as upstream's cnitool) deletes the rest.
  RunResult gc = Cnitool({"gc", "toolnet", ns1}, netconf);
  INFO(gc.err);
  CHECK(gc.exit_code == 0);
  CHECK(fx.Links(ns2) == std::vector<std::string>{"lo"});
  CHECK(std::filesystem::is_empty("/var/lib/cni/results"));
  CHECK(fx.Links() == std::vector<std::string>{"lo"});

  // Errors: exit 1 and the message on stderr.
  RunResult missing = Cnitool({"add", "nonet", ns1}, netconf);
  CHECK(missing.exit_code == 1);
  CHECK(missing.err.find("no net configuration with name \"nonet\"") != std::string::npos);
  RunResult bad_args = Cnitool({"add", "toolnet", ns1}, netconf, {"CNI_ARGS=novalue"});
  CHECK(bad_args.exit_code == 1);
  CHECK(bad_args.err == "invalid CNI_ARGS pair \"novalue\"\n");
  CHECK(Cnitool({"frobnicate", "toolnet", ns1}, netconf).exit_code == 1);
  CHECK(Cnitool({"add", "toolnet"}, netconf).exit_code == 1);

  fx.DelNetns(ns1);
  fx.DelNetns(ns2);
  CHECK(fx.Leftovers().empty());  // the result cache included
}

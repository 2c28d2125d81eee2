// The test kit (cni::testing): what a runtime-like call hands the plugin, the
// configuration builders, the Catch2 matchers and the golden files, on an
// in-process plugin that echoes what it received.
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "cni/base/error.h"
#include "cni/protocol/version.h"
#include "cni/testing/call.h"
#include "cni/testing/catch.h"
#include "cni/testing/golden.h"
#include "cni/testing/process.h"

namespace {

using cni::Json;
using namespace cni::testing;  // NOLINT: the kit is what is under test

// ADD answers with what it was given: CNI_ARGS and runtimeConfig in the
// interface's name and mac, prevResult's IPs carried through. GC fails
// unless it got no container ID and exactly one valid attachment.
Plugin Echo() {
  cni::PluginFuncs funcs;
  funcs.add = [](const cni::CmdArgs& args) -> absl::StatusOr<cni::Result> {
    cni::Result r;
    if (!args.conf.prev_result.is_null()) {
      CNI_ASSIGN_OR_RETURN(r, cni::ParseResult(args.conf.prev_result));
    }
    r.interfaces.push_back({.name = args.ifname, .mac = args.args, .sandbox = args.netns});
    if (args.conf.runtime_config.contains("mtu")) r.interfaces.back().mtu = args.conf.runtime_config["mtu"].get<int>();
    return r;
  };
  funcs.gc = [](const cni::CmdArgs& args) -> absl::Status {
    if (!args.container_id.empty() || args.conf.valid_attachments.size() != 1) {
      return cni::Error(cni::ErrorCode::kInvalidEnvironment, "unexpected GC input");
    }
    return absl::OkStatus();
  };
  return Plugin::InProcess(funcs, {cni::AllVersions(), "CNI echo plugin"});
}

Json Conf(const std::string& version = "1.1.0") {
  return {{"cniVersion", version}, {"name", "n"}, {"type", "echo"}};
}

}  // namespace

TEST_CASE("kit: the environment of an invocation leaves empty variables out") {
  Invocation call;
  call.command = "ADD";
  call.netns = "/run/netns/x";
  call.args = "K=V";
  call.env = {"FOO=1"};
  call.container_id.clear();
  CHECK(CniEnvironment(call) == std::vector<std::string>{kTestPath, "CNI_COMMAND=ADD", "CNI_NETNS=/run/netns/x",
                                                          "CNI_IFNAME=eth0", "CNI_ARGS=K=V",
                                                          "CNI_PATH=/opt/cni/bin", "FOO=1"});
}

TEST_CASE("kit: an in-process plugin gets CNI_ARGS, capability args and prevResult") {
  Plugin plugin = Echo();
  plugin.defaults.netns = "/run/netns/ctr";
  plugin.defaults.args = "IgnoreUnknown=1;K8S_POD_NAME=p";
  RunResult first = plugin.Add(WithRuntimeConfig(Conf(), {{"mtu", 1400}}));
  cni::Result r = MustResult(first);
  CHECK_THAT(r, HasInterface("eth0", "/run/netns/ctr"));
  CHECK(r.interfaces[0].mac == "IgnoreUnknown=1;K8S_POD_NAME=p");
  CHECK(r.interfaces[0].mtu == 1400);

  // Chained: the next plugin sees the first one's result.
  Json prev = {{"cniVersion", "1.1.0"}, {"ips", {{{"address", "10.1.0.5/24"}, {"gateway", "10.1.0.1"}}}}};
  Json with_prev = Conf();
  with_prev["prevResult"] = prev;
  RunResult add = plugin.Add(with_prev);
  plugin.defaults.ifname = "net1";
  cni::Result chained = MustResult(plugin.Add(WithPrevResult(Conf(), add)));
  CHECK_THAT(chained, HasIp("10.1.0.5/24", "10.1.0.1") && HasInterface("eth0") && HasInterface("net1"));
  CHECK_THAT(chained, !HasIp("10.1.0.6/24") && !HasIp("10.1.0.5/24", "10.1.0.9"));
}

TEST_CASE("kit: GC is called as the spec says, with the valid attachments") {
  Plugin plugin = Echo();
  CHECK_THAT(plugin.Gc(WithValidAttachments(Conf(), {{"c1", "eth0"}})), Succeeded());
  CHECK_THAT(plugin.Gc(WithValidAttachments(Conf(), {})), IsCniError(4, "unexpected GC input"));
}

TEST_CASE("kit: the CNI error matcher checks status, code and message") {
  Plugin plugin = Echo();
  CHECK_THAT(plugin.Add(Conf()), IsCniError(4, "CNI_NETNS"));  // the default invocation has no netns
  plugin.defaults.netns = "/run/netns/ctr";
  RunResult bad = plugin.Add(Conf("0.0.9"));  // an unsupported version: code 1
  CHECK_THAT(bad, IsCniError(1));
  CHECK_THAT(bad, !IsCniError(7));
  CHECK_THAT(bad, !IsCniError(1, "no such words in the message"));
  CHECK_THAT(bad, !Succeeded());
  CHECK(ErrorCode(bad) == 1);
  const RunResult exit_zero{.exit_code = 0, .out = R"({"code":1,"msg":"x"})"};
  CHECK_THAT(exit_zero, !IsCniError(1));  // exit 0 is no error
  const RunResult not_json{.exit_code = 1, .out = "not json"};
  CHECK(ErrorCode(not_json) == -1);
  CHECK_THAT(plugin.About(), Succeeded());
  CHECK(plugin.About().err.find("CNI echo plugin") == 0);
}

TEST_CASE("kit: routes match by destination and gateway") {
  cni::Result r = MustResult(RunResult{
      .exit_code = 0,
      .out = R"({"cniVersion":"1.1.0","routes":[{"dst":"192.0.2.0/24","gw":"10.1.0.1"},{"dst":"198.51.100.0/24"}]})"});
  CHECK_THAT(r, HasRoute("192.0.2.0/24") && HasRoute("192.0.2.0/24", "10.1.0.1") && HasRoute("198.51.100.0/24", "-"));
  CHECK_THAT(r, !HasRoute("192.0.2.0/24", "-") && !HasRoute("198.51.100.0/24", "10.1.0.1") &&
                    !HasRoute("203.0.113.0/24"));
}

TEST_CASE("kit: golden files are written in update mode, then compared") {
  TempDir dir;
  cni::Result r = MustResult(RunResult{
      .exit_code = 0,
      .out = R"({"cniVersion":"1.1.0","interfaces":[{"name":"eth0","sandbox":"/x"}],)"
             R"("ips":[{"address":"10.1.0.5/24","interface":0}],"routes":[{"dst":"0.0.0.0/0","gw":"10.1.0.1"}]})"});
  GoldenOptions compare;
  compare.update = false;
  CHECK(CompareGolden(r, dir.path(), "add", compare).size() == cni::AllVersions().size());  // all missing

  GoldenOptions update;
  update.update = true;
  CHECK(CompareGolden(r, dir.path(), "add", update).empty());
  for (const std::string& v : cni::AllVersions()) CHECK(std::filesystem::exists(dir.path() / ("add@" + v + ".json")));
  CHECK_THAT(r, MatchesGolden(dir.path(), "add", compare));
  // 0.2.0 prints the old ip4 shape; 1.0.0 the interfaces.
  CHECK(GoldenDocument(r, "0.2.0").contains("ip4"));
  CHECK(GoldenDocument(r, "1.0.0")["interfaces"][0]["name"] == "eth0");

  // A change shows as a difference in the versions it touches.
  cni::Result changed = r;
  changed.routes.clear();
  std::vector<std::string> problems = CompareGolden(changed, dir.path(), "add", compare);
  CHECK(problems.size() == cni::AllVersions().size());
  CHECK_THAT(changed, !MatchesGolden(dir.path(), "add", compare));
  // A result no old version can print is pinned as its error.
  cni::Result no_ip;
  no_ip.cni_version = "1.1.0";
  CHECK(GoldenDocument(no_ip, "0.2.0")["error"]["code"] == 1);
}

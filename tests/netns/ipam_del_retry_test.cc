// An IPAM DEL that fails in a way a retry may get past (code 11, try again
// later, or an IPAM plugin that never answered: killed, crashed) stops the
// interface plugin's DEL before it deletes anything: the retried DEL's IPAM
// DEL may need the container's interface (the dhcp daemon sends its RELEASE
// through it). Any other IPAM failure does not keep the interface. Every
// interface plugin with IPAM, against a stand-in IPAM plugin that runs
// host-local unless told to fail. dummy, ipvlan and vlan run in the VM
// tier (this host's kernel has none of those link kinds).
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "cni/base/json.h"
#include "support/cni_call.h"
#include "support/netns_fixture.h"
#include "support/netns_tools.h"
#include "support/run.h"

namespace {

using cni::Json;
using namespace cni::test;  // NOLINT: test brevity

// "flaky-ipam" in `dir`: host-local, except that DEL fails as the file
// `dir`/mode says: "retry" prints code 11, "kill" dies of SIGKILL, "final"
// prints code 7.
void WriteFlakyIpam(const TempDir& dir) {
  const std::string path = dir.str() + "/flaky-ipam";
  std::ofstream(path) << "#!/bin/sh\n"
                      << "mode=$(cat " << dir.str() << "/mode 2>/dev/null)\n"
                      << "if [ \"$CNI_COMMAND\" = DEL ]; then\n"
                      << "  case \"$mode\" in\n"
                      << "    retry) echo '{\"cniVersion\":\"1.0.0\",\"code\":11,\"msg\":\"daemon away\"}'; exit 1;;\n"
                      << "    final) echo '{\"cniVersion\":\"1.0.0\",\"code\":7,\"msg\":\"bad config\"}'; exit 1;;\n"
                      << "    kill) kill -9 $$;;\n"
                      << "  esac\n"
                      << "fi\n"
                      << "exec " << PluginDir() << "/host-local\n";
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
}

void SetMode(const TempDir& dir, const std::string& mode) { std::ofstream(dir.str() + "/mode") << mode; }

RunResult Call(const std::string& type, const std::string& command, const std::string& conf,
               const std::string& netns, const TempDir& bin) {
  PluginCall call;
  call.command = command;
  call.container_id = "ctr-retry";
  call.netns = netns;
  call.ifname = "eth0";
  call.path = bin.str() + ":" + PluginDir();
  call.config = conf;
  return RunPlugin(type, call);
}

Json KeysOf(const std::string& type) {
  if (type == "bridge") return {{"bridge", "brretry"}};
  if (type == "macvlan" || type == "ipvlan") return {{"master", "mst0"}};
  if (type == "vlan") return {{"master", "mst0"}, {"vlanId", 100}};
  if (type == "host-device") return {{"device", "hd0"}};
  return Json::object();
}

// ADD, a DEL whose IPAM DEL fails as `mode` says, the retry; then a final
// IPAM failure.
void KeepsInterfaceForRetry(const std::string& type, const std::string& mode) {
  INFO(type << ", IPAM DEL: " << mode);
  NetnsFixture fx;
  MustExec(fx, "", {"ip", "link", "add", "mst0", "type", "veth", "peer", "name", "mst0p"});
  MustExec(fx, "", {"ip", "link", "set", "mst0", "up"});
  MustExec(fx, "", {"ip", "link", "add", "hd0", "type", "veth", "peer", "name", "hd0p"});
  const std::string ctr = fx.AddNetns("c1");
  TempDir bin, store;
  WriteFlakyIpam(bin);
  Json ipam = HostLocalIpam(store, {"10.79.0.0/24"});
  ipam["type"] = "flaky-ipam";
  Json conf = NetConf("1.0.0", "retrynet", type, KeysOf(type));
  conf["ipam"] = ipam;
  const std::string text = conf.dump();

  MustResult(Call(type, "ADD", text, ctr, bin));
  REQUIRE(Reservations(store).size() == 1);
  SetMode(bin, mode);
  RunResult del = Call(type, "DEL", text, ctr, bin);
  INFO(Describe(del));
  CHECK(del.exit_code == 1);
  CHECK(ErrorCode(del) == (mode == "retry" ? 11 : 999));
  // Nothing deleted: the interface and the address are there for the retry.
  CHECK(fx.Links(ctr) == std::vector<std::string>{"eth0", "lo"});
  CHECK(Reservations(store).size() == 1);
  // The retry, with IPAM working again, finishes; and DEL stays idempotent.
  SetMode(bin, "");
  MustSucceed(Call(type, "DEL", text, ctr, bin), "retried DEL");
  CHECK(fx.Links(ctr) == std::vector<std::string>{"lo"});
  CHECK(Reservations(store).empty());
  MustSucceed(Call(type, "DEL", text, ctr, bin), "DEL again");

  // A final IPAM failure (any other code) does not keep the interface.
  MustResult(Call(type, "ADD", text, ctr, bin));
  SetMode(bin, "final");
  CHECK(ErrorCode(Call(type, "DEL", text, ctr, bin)) == 7);
  CHECK(fx.Links(ctr) == std::vector<std::string>{"lo"});
  SetMode(bin, "");
  MustSucceed(Call(type, "DEL", text, ctr, bin), "DEL after a final failure");
  CHECK(Reservations(store).empty());
  TearDown(fx, {ctr}, {"mst0", "hd0", "brretry"});
}

}  // namespace

TEST_CASE("an IPAM DEL that may finish on a retry keeps the interface for it", "[netns][ipam-del-retry]") {
  const std::string type = GENERATE(as<std::string>{}, "bridge", "ptp", "macvlan", "tap", "host-device");
  KeepsInterfaceForRetry(type, GENERATE(as<std::string>{}, "retry", "kill"));
}

TEST_CASE("an IPAM DEL that may finish on a retry keeps the dummy, ipvlan or vlan link for it",
          "[netns][vm][ipam-del-retry]") {
  const std::string type = GENERATE(as<std::string>{}, "dummy", "ipvlan", "vlan");
  KeepsInterfaceForRetry(type, GENERATE(as<std::string>{}, "retry", "kill"));
}

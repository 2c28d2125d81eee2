// The flannel binary with a recording fake delegate (a shell script named
// "bridge" in a temp CNI_PATH): what it saves, what the delegate gets, and
// what happens when the delegate, the save or the subnet file fail.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "../unit/runtime_fake_plugins.h"
#include "cni/base/json.h"
#include "cni/protocol/version.h"
#include "support/cni_call.h"
#include "support/run.h"

namespace {

using cni::Json;
using cni::test::FakePlugins;
using cni::test::RunResult;
using cni::test::TempDir;

constexpr const char* kEnv =
    "FLANNEL_NETWORK=10.42.0.0/16\nFLANNEL_SUBNET=10.42.3.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n";
// Upstream's bytes for kEnv and Conf("1.0.0") (flannel-io/cni-plugin v1.9.1-flannel1).
constexpr const char* kSaved =
    R"({"cniVersion":"1.0.0","hairpinMode":true,"ipMasq":false,"ipam":{"ranges":[[{"subnet":"10.42.3.0/24"}]],)"
    R"("routes":[{"dst":"10.42.0.0/16"}],"type":"host-local"},"isGateway":true,"mtu":1450,"name":"fnet",)"
    R"("type":"bridge"})";

struct Node {
  FakePlugins fake;
  TempDir dir;
  std::string subnet_file() const { return dir.str() + "/subnet.env"; }
  std::string data_dir() const { return dir.str() + "/flannel"; }
  std::string saved(const std::string& id = "ctr1") const { return data_dir() + "/" + id; }
  Node() {
    fake.Add("bridge");
    WriteSubnet(kEnv);
  }
  void WriteSubnet(const std::string& text) const { std::ofstream(subnet_file()) << text; }

  std::string Conf(const std::string& version = "1.0.0", const Json& extra = Json::object()) const {
    Json c = {{"cniVersion", version}, {"name", "fnet"}, {"type", "flannel"}, {"subnetFile", subnet_file()},
              {"dataDir", data_dir()}, {"delegate", {{"hairpinMode", true}}}};
    for (const auto& [k, v] : extra.items()) c[k] = v;
    return c.dump();
  }

  RunResult Call(const std::string& command, const std::string& conf, const std::string& id = "ctr1") const {
    cni::test::PluginCall call;
    call.command = command;
    call.container_id = id;
    call.netns = "/run/netns/flannel-fake";
    call.ifname = command == "GC" || command == "STATUS" ? "" : "eth0";
    call.path = fake.bin();
    call.config = conf;
    call.extra_env = {"REC=" + fake.rec()};
    return cni::test::RunPlugin("flannel", call);
  }
};

std::string Result(const std::string& version) {
  if (version < "0.3.0") {
    return Json({{"cniVersion", version}, {"ip4", {{"ip", "10.42.3.2/24"}, {"gateway", "10.42.3.1"}}}}).dump();
  }
  Json r = {{"cniVersion", version},
            {"interfaces", Json::array({{{"name", "eth0"}, {"sandbox", "/run/netns/flannel-fake"}}})},
            {"ips", Json::array({{{"address", "10.42.3.2/24"}, {"gateway", "10.42.3.1"}, {"interface", 0}}})}};
  if (version < "1.0.0") r["ips"][0]["version"] = "4";
  return r.dump();
}

std::string Read(const std::string& path) { return FakePlugins::Read(path); }

}  // namespace

TEST_CASE("flannel process: ADD saves upstream's bytes, delegates them, DEL uses them", "[flannel]") {
  for (const std::string version : {"0.1.0", "0.2.0", "0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"}) {
    DYNAMIC_SECTION("cniVersion " << version) {
      Node n;
      n.fake.Answer("bridge", "ADD", Result(version));
      RunResult add = n.Call("ADD", n.Conf(version));
      cni::test::MustSucceed(add, "ADD");
      cni::Result printed = cni::test::MustResult(add);
      REQUIRE(printed.ips.size() == 1);
      CHECK(printed.ips[0].address.ToString() == "10.42.3.2/24");
      std::string saved = Read(n.saved());
      std::string want = kSaved;
      want.replace(want.find("1.0.0"), 5, version);
      CHECK(saved == want);
      CHECK(Read(n.fake.rec() + "/bridge.ADD.stdin") == want);  // the same bytes, on stdin
      CHECK(n.fake.Env("bridge", "ADD", "CNI_COMMAND") == "ADD");
      CHECK(n.fake.Env("bridge", "ADD", "CNI_CONTAINERID") == "ctr1");
      CHECK(n.fake.Env("bridge", "ADD", "CNI_IFNAME") == "eth0");
      struct stat st {};
      REQUIRE(::stat(n.saved().c_str(), &st) == 0);
      CHECK((st.st_mode & 07777) == 0600);
      REQUIRE(::stat(n.data_dir().c_str(), &st) == 0);
      CHECK((st.st_mode & 07777) == 0700);

      if (cni::VersionAtLeast(version, "0.4.0")) {
        // CHECK: the saved configuration with the runtime's prevResult.
        Json conf = Json::parse(n.Conf(version));
        conf["prevResult"] = Json::parse(add.out);
        cni::test::MustSucceed(n.Call("CHECK", conf.dump()), "CHECK");
        Json got = n.fake.Stdin("bridge", "CHECK");
        CHECK(got["prevResult"] == Json::parse(add.out));
        CHECK(got["ipam"] == Json::parse(want)["ipam"]);
        // The node's subnet changed (flanneld took another lease): CHECK fails.
        std::string moved = kEnv;
        moved.replace(moved.find("10.42.3.1"), 9, "10.42.9.1");
        n.WriteSubnet(moved);
        RunResult changed = n.Call("CHECK", conf.dump());
        CHECK(cni::test::ErrorCode(changed) == 7);
        CHECK(cni::test::ErrorMessage(changed).find("subnet changed") != std::string::npos);
        n.WriteSubnet(kEnv);
      }

      // DEL hands the saved bytes over as they are, even when the subnet file
      // is gone by now, then forgets them.
      std::filesystem::remove(n.subnet_file());
      cni::test::MustSucceed(n.Call("DEL", n.Conf(version)), "DEL");
      CHECK(Read(n.fake.rec() + "/bridge.DEL.stdin") == want);
      CHECK(n.fake.Env("bridge", "DEL", "CNI_COMMAND") == "DEL");
      CHECK_FALSE(std::filesystem::exists(n.saved()));
      // DEL again: no saved file, no subnet file: success, no delegate call.
      n.fake.ClearCalls();
      cni::test::MustSucceed(n.Call("DEL", n.Conf(version)), "DEL again");
      CHECK(n.fake.Calls().empty());
      // DEL with no saved file but a subnet file: delegated with a rebuilt one.
      n.WriteSubnet(kEnv);
      cni::test::MustSucceed(n.Call("DEL", n.Conf(version)), "DEL rebuilt");
      CHECK(n.fake.Calls() == std::vector<std::string>{"DEL bridge ctr1"});
      CHECK(Read(n.fake.rec() + "/bridge.DEL.stdin") == want);
    }
  }
}

TEST_CASE("flannel process: a failed delegate ADD is undone and leaves no saved file", "[flannel]") {
  Node n;
  n.fake.Answer("bridge", "ADD", R"({"cniVersion":"1.0.0","code":11,"msg":"no addresses left"})", 1);
  RunResult add = n.Call("ADD", n.Conf());
  CHECK(add.exit_code != 0);
  CHECK(cni::test::ErrorCode(add) == 11);  // the delegate's error, as it wrote it
  CHECK(cni::test::ErrorMessage(add) == "no addresses left");
  CHECK(n.fake.Calls() == std::vector<std::string>{"ADD bridge ctr1", "DEL bridge ctr1"});
  CHECK_FALSE(std::filesystem::exists(n.saved()));

  SECTION("a delegate that succeeds with a result that does not parse is undone too") {
    n.fake.ClearCalls();
    n.fake.Answer("bridge", "ADD", "this is not a result");
    std::filesystem::remove(n.fake.rec() + "/bridge.ADD.rc");
    CHECK(n.Call("ADD", n.Conf()).exit_code != 0);
    CHECK(n.fake.Calls() == std::vector<std::string>{"ADD bridge ctr1", "DEL bridge ctr1"});
    CHECK_FALSE(std::filesystem::exists(n.saved()));
  }
  SECTION("when the undo fails too, the file stays for the runtime's DEL") {
    n.fake.Answer("bridge", "DEL", R"({"code":999,"msg":"busy"})", 1);
    CHECK(n.Call("ADD", n.Conf()).exit_code != 0);
    CHECK(Read(n.saved()) == kSaved);
    // A failed DEL keeps it as well (upstream removes it whatever the answer).
    CHECK(cni::test::ErrorMessage(n.Call("DEL", n.Conf())) == "busy");
    CHECK(std::filesystem::exists(n.saved()));
    std::filesystem::remove(n.fake.rec() + "/bridge.DEL.rc");
    std::filesystem::remove(n.fake.rec() + "/bridge.DEL.out");
    cni::test::MustSucceed(n.Call("DEL", n.Conf()), "DEL");
    CHECK_FALSE(std::filesystem::exists(n.saved()));
  }
}

TEST_CASE("flannel process: no delegate call when the save, the subnet file or the config is bad", "[flannel]") {
  Node n;
  n.fake.Answer("bridge", "ADD", Result("1.0.0"));
  SECTION("the saved file cannot be written") {
    std::ofstream(n.data_dir()) << "a file where the directory should be";
    RunResult add = n.Call("ADD", n.Conf());
    CHECK(cni::test::ErrorCode(add) == 5);
  }
  SECTION("no subnet file: code 11, try again when flanneld has written it") {
    std::filesystem::remove(n.subnet_file());
    RunResult add = n.Call("ADD", n.Conf());
    CHECK(cni::test::ErrorCode(add) == 11);
    CHECK(cni::test::ErrorMessage(add).find(n.subnet_file()) != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(n.data_dir()));
  }
  SECTION("a malformed or incomplete subnet file: code 7 naming the key") {
    const std::string head = "FLANNEL_NETWORK=10.42.0.0/16\nFLANNEL_SUBNET=10.42.3.1/24\n";
    for (const auto& [text, named] : std::vector<std::pair<std::string, std::string>>{
             {head + "FLANNEL_MTU=big\nFLANNEL_IPMASQ=true\n", "FLANNEL_MTU"},
             {head, "missing FLANNEL_MTU, FLANNEL_IPMASQ"}}) {
      n.WriteSubnet(text);
      RunResult add = n.Call("ADD", n.Conf());
      CHECK(cni::test::ErrorCode(add) == 7);
      CHECK(cni::test::ErrorMessage(add).find(named) != std::string::npos);
      CHECK_FALSE(std::filesystem::exists(n.data_dir()));
    }
  }
  SECTION("bad delegate keys: code 7; wrong types: code 6") {
    CHECK(cni::test::ErrorCode(n.Call("ADD", n.Conf("1.0.0", {{"delegate", {{"name", "x"}}}}))) == 7);
    CHECK(cni::test::ErrorCode(n.Call("ADD", n.Conf("1.0.0", {{"delegate", {{"ipam", Json::object()}}}}))) == 7);
    CHECK(cni::test::ErrorCode(n.Call("ADD", n.Conf("1.0.0", {{"delegate", {{"type", 3}}}}))) == 7);
    CHECK(cni::test::ErrorCode(n.Call("ADD", n.Conf("1.0.0", {{"delegate", "bridge"}}))) == 6);
    CHECK(cni::test::ErrorCode(n.Call("ADD", n.Conf("1.0.0", {{"subnetFile", 1}}))) == 6);
    CHECK(cni::test::ErrorCode(n.Call("ADD", n.Conf("1.0.0", {{"ipam", {{"routes", "x"}}}}))) == 6);
    CHECK_FALSE(std::filesystem::exists(n.data_dir()));
  }
  SECTION("an unknown delegate type: code 7, nothing saved") {
    CHECK(cni::test::ErrorCode(n.Call("ADD", n.Conf("1.0.0", {{"delegate", {{"type", "nosuch"}}}}))) == 7);
    CHECK_FALSE(std::filesystem::exists(n.saved()));
  }
  CHECK(n.fake.Calls().empty());
}

TEST_CASE("flannel process: GC and STATUS", "[flannel]") {
  Node n;
  n.fake.Answer("bridge", "ADD", Result("1.1.0"));
  for (const char* id : {"keep", "stale"}) cni::test::MustSucceed(n.Call("ADD", n.Conf("1.1.0"), id), id);
  // Another flannel network's file in the same directory is not ours to collect.
  std::ofstream(n.saved("other")) << R"({"name":"othernet","type":"bridge"})";
  Json gc = Json::parse(n.Conf("1.1.0"));
  gc["cni.dev/valid-attachments"] = Json::array({{{"containerID", "keep"}, {"ifname", "eth0"}}});
  cni::test::MustSucceed(n.Call("GC", gc.dump(), ""), "GC");
  CHECK(std::filesystem::exists(n.saved("keep")));
  CHECK_FALSE(std::filesystem::exists(n.saved("stale")));
  CHECK(std::filesystem::exists(n.saved("other")));
  // The delegate collects its own state (host-local's reservations) with the list.
  Json got = n.fake.Stdin("bridge", "GC");
  CHECK(got["cni.dev/valid-attachments"] == gc["cni.dev/valid-attachments"]);
  CHECK(got["ipam"]["ranges"] == Json::parse(R"([[{"subnet":"10.42.3.0/24"}]])"));

  cni::test::MustSucceed(n.Call("STATUS", n.Conf("1.1.0"), ""), "STATUS");
  CHECK(n.fake.Stdin("bridge", "STATUS")["type"] == "bridge");
  std::filesystem::remove(n.subnet_file());
  RunResult status = n.Call("STATUS", n.Conf("1.1.0"), "");
  CHECK(cni::test::ErrorCode(status) == 50);  // flanneld is not ready: ADD would fail
}

TEST_CASE("flannel process: DEL with a corrupt saved file rebuilds the configuration or gives up", "[flannel]") {
  Node n;
  std::filesystem::create_directories(n.data_dir());
  std::ofstream(n.saved()) << "{\"half\":";
  cni::test::MustSucceed(n.Call("DEL", n.Conf()), "DEL");
  CHECK(n.fake.Calls() == std::vector<std::string>{"DEL bridge ctr1"});
  CHECK(Read(n.fake.rec() + "/bridge.DEL.stdin") == kSaved);  // rebuilt from the subnet file
  CHECK_FALSE(std::filesystem::exists(n.saved()));

  n.fake.ClearCalls();
  std::ofstream(n.saved()) << R"({"type":7})";
  std::filesystem::remove(n.subnet_file());
  cni::test::MustSucceed(n.Call("DEL", n.Conf()), "DEL without a subnet file");
  CHECK(n.fake.Calls().empty());
  CHECK_FALSE(std::filesystem::exists(n.saved()));
}

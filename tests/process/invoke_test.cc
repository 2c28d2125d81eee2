// The SDK's invoke layer delegating to the built `static` binary.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <fstream>

#include "cni/base/error.h"
#include "cni/protocol/invoke.h"
#include "cni/protocol/skel.h"
#include "support/run.h"

namespace {

using cni::Json;

cni::CmdArgs DelegatingArgs(const std::string& conf_text, std::vector<std::string> dirs = {}) {
  cni::CmdArgs a;
  a.container_id = "ctr-invoke";
  a.ifname = "eth0";
  a.netns = "/var/run/netns/none";
  a.plugin_dirs = dirs.empty() ? std::vector<std::string>{cni::test::PluginDir()} : dirs;
  a.stdin_data = conf_text;
  a.conf = *cni::NetConf::Parse(conf_text);
  a.env = {"CNI_CONTAINERID=ctr-invoke", "CNI_IFNAME=eth0", "CNI_NETNS=/var/run/netns/none",
           "CNI_PATH=" + cni::test::PluginDir(), "CNI_COMMAND=ADD", "PATH=/usr/bin:/bin"};
  return a;
}

std::string BridgeLikeConf(const std::string& version, const std::string& address = "10.1.2.3/24") {
  Json conf = {{"cniVersion", version},
               {"name", "outer"},
               {"type", "bridge"},
               {"bridge", "cni0"},
               {"ipam", {{"type", "static"}, {"addresses", {{{"address", address}, {"gateway", "10.1.2.1"}}}}}}};
  return conf.dump();
}

}  // namespace

TEST_CASE("invoke: FindPlugin finds binaries and rejects paths", "[invoke]") {
  auto found = cni::FindPlugin("static", {"/nonexistent", cni::test::PluginDir()});
  REQUIRE(found.ok());
  CHECK(*found == cni::test::PluginDir() + "/static");
  for (const char* bad : {"../static", "/usr/bin/static", "a/b", "", ".", ".."}) {
    INFO(bad);
    auto r = cni::FindPlugin(bad, {cni::test::PluginDir()});
    REQUIRE_FALSE(r.ok());
    CHECK(cni::CodeOf(r.status()) == 7);
  }
  auto missing = cni::FindPlugin("no-such-plugin", {"/nonexistent"});
  REQUIRE_FALSE(missing.ok());
  CHECK(std::string(missing.status().message()).find("no-such-plugin") != std::string::npos);
}

TEST_CASE("invoke: DelegateAdd runs the IPAM plugin with the whole config", "[invoke]") {
  for (const char* version : {"0.2.0", "0.3.1", "1.0.0", "1.1.0"}) {
    INFO(version);
    cni::CmdArgs a = DelegatingArgs(BridgeLikeConf(version));
    auto result = cni::DelegateAdd("static", a);
    INFO(result.status());
    REQUIRE(result.ok());
    REQUIRE(result->ips.size() == 1);
    CHECK(result->ips[0].address.ToString() == "10.1.2.3/24");
    CHECK(result->ips[0].gateway->ToString() == "10.1.2.1");
  }
}

TEST_CASE("invoke: a delegate's error keeps its code and message", "[invoke]") {
  cni::CmdArgs a = DelegatingArgs(BridgeLikeConf("1.0.0", "10.1.2.3/99"));
  auto result = cni::DelegateAdd("static", a);
  REQUIRE_FALSE(result.ok());
  CHECK(cni::CodeOf(result.status()) == 7);
  CHECK(std::string(result.status().message()).find("10.1.2.3/99") != std::string::npos);
}

TEST_CASE("invoke: DEL, CHECK, STATUS, GC delegate with CNI_COMMAND set", "[invoke]") {
  cni::CmdArgs a = DelegatingArgs(BridgeLikeConf("1.1.0"));
  CHECK(cni::DelegateDel("static", a).ok());
  CHECK(cni::DelegateStatus("static", a).ok());
  CHECK(cni::DelegateGc("static", a).ok());
  // CHECK without prevResult: static reports it.
  absl::Status check = cni::DelegateCheck("static", a);
  REQUIRE_FALSE(check.ok());
  CHECK(std::string(check.message()).find("prevResult") != std::string::npos);
}

TEST_CASE("invoke: a missing plugin is a clear error", "[invoke]") {
  cni::CmdArgs a = DelegatingArgs(BridgeLikeConf("1.0.0"));
  auto result = cni::DelegateAdd("host-nope", a);
  REQUIRE_FALSE(result.ok());
  CHECK(std::string(result.status().message()).find("host-nope") != std::string::npos);
}

TEST_CASE("invoke: a plugin that prints garbage and fails is code 999 with its output", "[invoke]") {
  cni::test::TempDir dir;
  std::string path = dir.str() + "/broken";
  {
    std::ofstream f(path);
    f << "#!/bin/sh\necho 'not json'\nexit 3\n";
  }
  chmod(path.c_str(), 0755);
  auto out = cni::ExecPlugin(path, {"CNI_COMMAND=ADD"}, "{}");
  REQUIRE_FALSE(out.ok());
  CHECK(cni::CodeOf(out.status()) == 999);
  CHECK(std::string(out.status().message()).find("not json") != std::string::npos);
}

TEST_CASE("invoke: a result without cniVersion takes the config's version", "[invoke]") {
  cni::test::TempDir dir;
  std::string path = dir.str() + "/fixed";
  {
    std::ofstream f(path);
    f << "#!/bin/sh\ncat >/dev/null\necho '{\"ip4\":{\"ip\":\"10.5.0.2/16\"}}'\n";
  }
  chmod(path.c_str(), 0755);
  cni::CmdArgs a = DelegatingArgs(BridgeLikeConf("0.2.0"), {dir.str()});
  auto result = cni::DelegateAdd("fixed", a);
  INFO(result.status());
  REQUIRE(result.ok());
  CHECK(result->ips.at(0).address.ToString() == "10.5.0.2/16");
}

TEST_CASE("invoke: SetEnv replaces or appends", "[invoke]") {
  std::vector<std::string> env = {"A=1", "CNI_COMMAND=ADD"};
  cni::SetEnv(env, "CNI_COMMAND", "DEL");
  cni::SetEnv(env, "B", "2");
  CHECK(env == std::vector<std::string>{"A=1", "CNI_COMMAND=DEL", "B=2"});
}

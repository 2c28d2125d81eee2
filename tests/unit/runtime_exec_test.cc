// The runtime library executing a network configuration list (spec section 3)
// against fake plugins: the spec appendix's "dbnet" example end to end, then
// CHECK/DEL details, STATUS and error propagation.
#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "cni/base/error.h"
#include "cni/runtime/runtime.h"
#include "runtime_fake_plugins.h"

namespace {

using cni::Json;
using cni::runtime::Runtime;
using cni::runtime::RuntimeConf;

// Section 1's example configuration.
constexpr const char* kDbnet = R"({
  "cniVersion": "1.0.0",
  "name": "dbnet",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "cni0",
      "keyA": ["some more", "plugin specific", "configuration"],
      "ipam": {
        "type": "host-local",
        "subnet": "10.1.0.0/16",
        "gateway": "10.1.0.1",
        "routes": [ {"dst": "0.0.0.0/0"} ]
      },
      "dns": { "nameservers": [ "10.1.0.1" ] }
    },
    {
      "type": "tuning",
      "capabilities": { "mac": true },
      "sysctl": { "net.core.somaxconn": "500" }
    },
    {
      "type": "portmap",
      "capabilities": {"portMappings": true}
    }
  ]
})";

// The appendix's bridge result (as printed by bridge: no cniVersion).
constexpr const char* kBridgeResult = R"({
  "ips": [ { "address": "10.1.0.5/16", "gateway": "10.1.0.1", "interface": 2 } ],
  "routes": [ { "dst": "0.0.0.0/0" } ],
  "interfaces": [
    { "name": "cni0", "mac": "00:11:22:33:44:55" },
    { "name": "veth3243", "mac": "55:44:33:22:11:11" },
    { "name": "eth0", "mac": "99:88:77:66:55:44", "sandbox": "/var/run/netns/blue" }
  ],
  "dns": { "nameservers": [ "10.1.0.1" ] }
})";

// The appendix's tuning result: the mac of eth0 has changed.
constexpr const char* kTuningResult = R"({
  "cniVersion": "1.0.0",
  "ips": [ { "address": "10.1.0.5/16", "gateway": "10.1.0.1", "interface": 2 } ],
  "routes": [ { "dst": "0.0.0.0/0" } ],
  "interfaces": [
    { "name": "cni0", "mac": "00:11:22:33:44:55" },
    { "name": "veth3243", "mac": "55:44:33:22:11:11" },
    { "name": "eth0", "mac": "00:11:22:33:44:66", "sandbox": "/var/run/netns/blue" }
  ],
  "dns": { "nameservers": [ "10.1.0.1" ] }
})";

// The execution configurations of the appendix. Two notes: the appendix's
// bridge config drops ipam.routes, which section 1 has and section 3 says must
// pass through unchanged, so we expect it kept; and a prevResult carries
// "cniVersion" (a result always has one; libcni fills it in when a plugin
// leaves it out, as the appendix's abbreviated bridge result does).
Json BridgeConf() {
  Json j = Json::parse(R"({
    "cniVersion": "1.0.0", "name": "dbnet", "type": "bridge", "bridge": "cni0",
    "keyA": ["some more", "plugin specific", "configuration"],
    "ipam": { "type": "host-local", "subnet": "10.1.0.0/16", "gateway": "10.1.0.1",
              "routes": [ {"dst": "0.0.0.0/0"} ] },
    "dns": { "nameservers": [ "10.1.0.1" ] } })");
  return j;
}
Json TuningConf() {
  return Json::parse(R"({ "cniVersion": "1.0.0", "name": "dbnet", "type": "tuning",
    "sysctl": { "net.core.somaxconn": "500" },
    "runtimeConfig": { "mac": "00:11:22:33:44:66" } })");
}
Json PortmapConf() {
  return Json::parse(R"({ "cniVersion": "1.0.0", "name": "dbnet", "type": "portmap",
    "runtimeConfig": { "portMappings" : [ { "hostPort": 8080, "containerPort": 80, "protocol": "tcp" } ] } })");
}
Json WithPrev(Json conf, Json prev) {
  prev["cniVersion"] = "1.0.0";
  conf["prevResult"] = std::move(prev);
  return conf;
}

RuntimeConf Attachment() {
  RuntimeConf rt;
  rt.container_id = "dbctr";
  rt.netns = "/var/run/netns/blue";
  rt.ifname = "eth0";
  rt.args = {{"argA", "foo"}};
  rt.capability_args = Json::parse(R"({"portMappings": [ { "hostPort": 8080, "containerPort": 80, "protocol": "tcp" } ],
                                       "mac": "00:11:22:33:44:66", "bandwidth": {"ingressRate": 1}})");
  return rt;
}

struct Dbnet {
  cni::test::FakePlugins fake;
  cni::runtime::NetworkConfigList list;
  Dbnet() {
    for (const char* p : {"bridge", "tuning", "portmap"}) fake.Add(p);
    fake.Answer("bridge", "ADD", kBridgeResult);
    fake.Answer("tuning", "ADD", kTuningResult);
    fake.Answer("portmap", "ADD", kTuningResult);
    list = *cni::runtime::ConfListFromBytes(kDbnet);
  }
};

}  // namespace

TEST_CASE("runtime: dbnet ADD gives each plugin the appendix's configuration", "[runtime]") {
  Dbnet d;
  Runtime rt(d.fake.Options());
  absl::StatusOr<Json> result = rt.AddNetworkList(d.list, Attachment());
  REQUIRE(result.ok());
  CHECK(*result == Json::parse(kTuningResult));

  CHECK(d.fake.Calls() == std::vector<std::string>{"ADD bridge dbctr", "ADD tuning dbctr", "ADD portmap dbctr"});
  CHECK(d.fake.Stdin("bridge", "ADD") == BridgeConf());
  CHECK(d.fake.Stdin("tuning", "ADD") == WithPrev(TuningConf(), Json::parse(kBridgeResult)));
  CHECK(d.fake.Stdin("portmap", "ADD") == WithPrev(PortmapConf(), Json::parse(kTuningResult)));

  // The attachment parameters travel in the environment, overriding stale ones.
  CHECK(d.fake.Env("tuning", "ADD", "CNI_COMMAND") == "ADD");
  CHECK(d.fake.Env("tuning", "ADD", "CNI_CONTAINERID") == "dbctr");
  CHECK(d.fake.Env("tuning", "ADD", "CNI_NETNS") == "/var/run/netns/blue");
  CHECK(d.fake.Env("tuning", "ADD", "CNI_IFNAME") == "eth0");
  CHECK(d.fake.Env("tuning", "ADD", "CNI_ARGS") == "argA=foo");
  CHECK(d.fake.Env("tuning", "ADD", "CNI_PATH") == "/nonexistent-cni-dir:" + d.fake.bin());
}

TEST_CASE("runtime: dbnet CHECK and DEL use the cached final result", "[runtime]") {
  Dbnet d;
  Runtime rt(d.fake.Options());
  REQUIRE(rt.AddNetworkList(d.list, Attachment()).ok());
  d.fake.ClearCalls();

  REQUIRE(rt.CheckNetworkList(d.list, Attachment()).ok());
  Json final_result = Json::parse(kTuningResult);
  CHECK(d.fake.Calls() == std::vector<std::string>{"CHECK bridge dbctr", "CHECK tuning dbctr", "CHECK portmap dbctr"});
  CHECK(d.fake.Stdin("bridge", "CHECK") == WithPrev(BridgeConf(), final_result));
  CHECK(d.fake.Stdin("tuning", "CHECK") == WithPrev(TuningConf(), final_result));
  CHECK(d.fake.Stdin("portmap", "CHECK") == WithPrev(PortmapConf(), final_result));
  d.fake.ClearCalls();

  REQUIRE(rt.DelNetworkList(d.list, Attachment()).ok());
  CHECK(d.fake.Calls() == std::vector<std::string>{"DEL portmap dbctr", "DEL tuning dbctr", "DEL bridge dbctr"});
  CHECK(d.fake.Stdin("portmap", "DEL") == WithPrev(PortmapConf(), final_result));
  CHECK(d.fake.Stdin("tuning", "DEL") == WithPrev(TuningConf(), final_result));
  CHECK(d.fake.Stdin("bridge", "DEL") == WithPrev(BridgeConf(), final_result));
  // DEL removed the cache entry; a second DEL runs without prevResult.
  CHECK_FALSE(std::filesystem::exists(d.fake.cache() + "/results/dbnet-dbctr-eth0"));
  REQUIRE(rt.DelNetworkList(d.list, Attachment()).ok());
  CHECK(d.fake.Stdin("bridge", "DEL") == BridgeConf());
}

TEST_CASE("runtime: CHECK honours disableCheck and needs 0.4.0", "[runtime]") {
  cni::test::FakePlugins fake;
  fake.Add("p");
  Runtime rt(fake.Options());
  auto list = cni::runtime::ConfListFromBytes(
      R"({"cniVersion":"1.0.0","name":"n","disableCheck":true,"plugins":[{"type":"p"}]})");
  REQUIRE(list.ok());
  CHECK(rt.CheckNetworkList(*list, Attachment()).ok());
  CHECK(fake.Calls().empty());

  auto old = cni::runtime::ConfListFromBytes(R"({"cniVersion":"0.3.1","name":"n","plugins":[{"type":"p"}]})");
  absl::Status s = rt.CheckNetworkList(*old, Attachment());
  CHECK(cni::CodeOf(s) == 1);
  CHECK(fake.Calls().empty());
}

TEST_CASE("runtime: a plugin's error comes back with its code, msg and details", "[runtime]") {
  Dbnet d;
  d.fake.Answer("tuning", "ADD", R"({"cniVersion":"1.0.0","code":7,"msg":"bad sysctl","details":"net.core.x"})", 1);
  Runtime rt(d.fake.Options());
  absl::StatusOr<Json> r = rt.AddNetworkList(d.list, Attachment());
  REQUIRE_FALSE(r.ok());
  CHECK(cni::CodeOf(r.status()) == 7);
  CHECK(cni::DetailsOf(r.status()) == "net.core.x");
  CHECK(std::string(r.status().message()) == "plugin type=\"tuning\" failed (add): bad sysctl");
  // ADD halted: portmap never ran, nothing was cached.
  CHECK(d.fake.Calls() == std::vector<std::string>{"ADD bridge dbctr", "ADD tuning dbctr"});
  CHECK_FALSE(std::filesystem::exists(d.fake.cache() + "/results/dbnet-dbctr-eth0"));

  // Not an error document: code 999 with what it said.
  d.fake.Answer("tuning", "ADD", "oops", 2);
  r = rt.AddNetworkList(d.list, Attachment());
  CHECK(cni::CodeOf(r.status()) == 999);
  CHECK_THAT(std::string(r.status().message()), Catch::Contains("exited with status 2: oops"));

  // A missing plugin: code 7 naming the search path.
  auto list = cni::runtime::ConfListFromBytes(R"({"cniVersion":"1.0.0","name":"n","plugins":[{"type":"nope"}]})");
  r = rt.AddNetworkList(*list, Attachment());
  CHECK(cni::CodeOf(r.status()) == 7);
  CHECK_THAT(std::string(r.status().message()), Catch::Contains("failed to find plugin \"nope\""));

  // A bad attachment is refused before anything runs.
  RuntimeConf bad = Attachment();
  bad.ifname = "a/b";
  CHECK_FALSE(rt.AddNetworkList(d.list, bad).ok());
}

TEST_CASE("runtime: a plugin that hangs is killed after the timeout", "[runtime]") {
  cni::test::FakePlugins fake;
  // exec: the plugin process itself hangs (a forked child would hold its
  // stdout open past the kill; RunCommand signals only the plugin).
  std::ofstream(fake.bin() + "/slow") << "#!/bin/sh\nexec sleep 5\n";
  std::filesystem::permissions(fake.bin() + "/slow", std::filesystem::perms::owner_all);
  cni::runtime::Options o = fake.Options();
  o.timeout = std::chrono::milliseconds(300);
  Runtime rt(o);
  auto list = cni::runtime::ConfListFromBytes(R"({"cniVersion":"1.1.0","name":"n","plugins":[{"type":"slow"}]})");
  absl::Status s = rt.StatusNetworkList(*list);
  CHECK(cni::CodeOf(s) == 999);
  CHECK_THAT(std::string(s.message()), Catch::Contains("timed out"));
}

TEST_CASE("runtime: STATUS runs each plugin at 1.1.0 and stops at the first error", "[runtime]") {
  cni::test::FakePlugins fake;
  for (const char* p : {"a", "b", "c"}) fake.Add(p);
  fake.Answer("b", "STATUS", R"({"code":50,"msg":"no addresses left"})", 1);
  Runtime rt(fake.Options());
  auto list = cni::runtime::ConfListFromBytes(
      R"({"cniVersion":"1.1.0","name":"n","plugins":[{"type":"a","capabilities":{"mac":true}},{"type":"b"},{"type":"c"}]})");
  absl::Status s = rt.StatusNetworkList(*list);
  CHECK(cni::CodeOf(s) == 50);
  CHECK(std::string(s.message()) == "no addresses left");
  CHECK(fake.Calls() == std::vector<std::string>{"STATUS a ", "STATUS b "});
  CHECK(fake.Stdin("a", "STATUS") == Json::parse(R"({"cniVersion":"1.1.0","name":"n","type":"a"})"));
  CHECK(fake.Env("a", "STATUS", "CNI_CONTAINERID").empty());

  fake.ClearCalls();
  auto old = cni::runtime::ConfListFromBytes(R"({"cniVersion":"1.0.0","name":"n","plugins":[{"type":"b"}]})");
  CHECK(rt.StatusNetworkList(*old).ok());
  CHECK(fake.Calls().empty());
}

TEST_CASE("runtime: execution config keeps unknown keys and filters capabilities", "[runtime]") {
  cni::runtime::PluginConfig p;
  p.type = "x";
  p.conf = Json::parse(R"({"type":"x","capabilities":{"a":true,"b":false,"c":true},"weird":{"k":[1,2]},"args":{"cni":{}}})");
  p.capabilities = {{"a", true}, {"b", false}, {"c", true}};
  RuntimeConf rt;
  rt.capability_args = Json::parse(R"({"a":1,"b":2,"d":4})");
  Json got = cni::runtime::BuildExecConfig("net", "0.4.0", p, nullptr, &rt);
  CHECK(got == Json::parse(R"({"type":"x","name":"net","cniVersion":"0.4.0","weird":{"k":[1,2]},
                               "args":{"cni":{}},"runtimeConfig":{"a":1}})"));
  // No capability matched: no runtimeConfig at all.
  rt.capability_args = Json::parse(R"({"d":4})");
  CHECK_FALSE(cni::runtime::BuildExecConfig("net", "0.4.0", p, nullptr, &rt).contains("runtimeConfig"));
}

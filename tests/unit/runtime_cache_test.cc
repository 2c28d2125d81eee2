// The result cache: libcni's file name, mode and JSON, corrupt entries, and GC
// (which works from the cache).
#include <sys/stat.h>

#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "absl/strings/escaping.h"
#include "cni/base/error.h"
#include "cni/runtime/runtime.h"
#include "runtime_fake_plugins.h"

namespace {

using cni::Json;
using cni::runtime::Runtime;
using cni::runtime::RuntimeConf;

constexpr const char* kList =
    R"({"cniVersion":"1.1.0","name":"net1","plugins":[{"type":"a","capabilities":{"portMappings":true}},{"type":"b"}]})";
constexpr const char* kResult =
    R"({"cniVersion":"1.1.0","interfaces":[{"name":"eth0","sandbox":"/run/netns/x"}],"ips":[{"address":"10.0.0.2/24","interface":0}]})";

RuntimeConf Att(const std::string& id, const std::string& ifname = "eth0") {
  RuntimeConf rt;
  rt.container_id = id;
  rt.netns = "/run/netns/" + id;
  rt.ifname = ifname;
  return rt;
}

struct Net {
  cni::test::FakePlugins fake;
  Net() {
    fake.Add("a");
    fake.Add("b");
    fake.Answer("a", "ADD", kResult);
    fake.Answer("b", "ADD", kResult);
  }
  std::string CachePath(const std::string& net, const std::string& id, const std::string& ifname = "eth0") const {
    return fake.cache() + "/results/" + net + "-" + id + "-" + ifname;
  }
};

}  // namespace

TEST_CASE("runtime cache: libcni's file name, mode and bytes", "[runtime]") {
  Net n;
  Runtime rt(n.fake.Options());
  auto list = cni::runtime::ConfListFromBytes(kList);
  RuntimeConf att = Att("ctr1");
  att.args = {{"IgnoreUnknown", "1"}, {"K8S_POD_NAME", "web<1>&"}};
  att.capability_args = Json::parse(R"({"portMappings":[{"hostPort":8080,"containerPort":80,"protocol":"tcp"}]})");
  REQUIRE(rt.AddNetworkList(*list, att).ok());

  std::string path = n.CachePath("net1", "ctr1");
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  REQUIRE(::stat((n.fake.cache() + "/results").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);

  // Exactly what Go's json.Marshal(&cachedInfo{...}) writes: struct field
  // order, []byte as base64, maps with sorted keys, HTML characters escaped.
  std::string expected =
      std::string(R"({"kind":"cniCacheV1","containerId":"ctr1","config":")") + absl::Base64Escape(kList) +
      R"(","ifName":"eth0","networkName":"net1","netns":"/run/netns/ctr1",)"
      R"("cniArgs":[["IgnoreUnknown","1"],["K8S_POD_NAME","web\u003c1\u003e\u0026"]],)"
      R"("capabilityArgs":{"portMappings":[{"containerPort":80,"hostPort":8080,"protocol":"tcp"}]},)"
      R"("result":{"cniVersion":"1.1.0","interfaces":[{"name":"eth0","sandbox":"/run/netns/x"}],)"
      R"("ips":[{"address":"10.0.0.2/24","interface":0}]}})";
  CHECK(cni::test::FakePlugins::Read(path) == expected);

  // And it reads back.
  auto entry = cni::runtime::DecodeCacheEntry(expected);
  REQUIRE(entry.ok());
  CHECK(entry->config == kList);
  CHECK(entry->cni_args[1].second == "web<1>&");
  auto cached = rt.GetCachedResult(*list, att);
  REQUIRE(cached.ok());
  REQUIRE(cached->has_value());
  CHECK(**cached == Json::parse(kResult));
}

TEST_CASE("runtime cache: empty fields are left out as Go's omitempty does", "[runtime]") {
  cni::runtime::CacheEntry e;
  e.container_id = "c";
  e.ifname = "eth0";
  e.network = "n";
  CHECK(cni::runtime::EncodeCacheEntry(e) ==
        R"({"kind":"cniCacheV1","containerId":"c","config":"","ifName":"eth0","networkName":"n"})");
  CHECK_FALSE(cni::runtime::CacheFilePath("/var/lib/cni", "n", "", "eth0").ok());
  CHECK(*cni::runtime::CacheFilePath("/var/lib/cni", "n", "c", "eth0") == "/var/lib/cni/results/n-c-eth0");
  CHECK(cni::runtime::kDefaultCacheDir == "/var/lib/cni");
}

TEST_CASE("runtime cache: a libcni cache written for an older version is converted", "[runtime]") {
  Net n;
  Runtime rt(n.fake.Options());
  // A legacy (pre-cniCacheV1) cache file is the bare result; a 0.4.0 result is
  // given to 1.1.0 plugins converted.
  std::filesystem::create_directories(n.fake.cache() + "/results");
  std::ofstream(n.CachePath("net1", "old")) << R"({"cniVersion":"0.4.0","ips":[{"version":"4","address":"10.0.0.9/24"}]})";
  auto list = cni::runtime::ConfListFromBytes(kList);
  auto cached = rt.GetCachedResult(*list, Att("old"));
  REQUIRE(cached.ok());
  REQUIRE(cached->has_value());
  CHECK((**cached)["cniVersion"] == "1.1.0");
  CHECK((**cached)["ips"][0] == Json::parse(R"({"address":"10.0.0.9/24"})"));
}

TEST_CASE("runtime cache: a corrupt entry does not block DEL", "[runtime]") {
  Net n;
  Runtime rt(n.fake.Options());
  auto list = cni::runtime::ConfListFromBytes(kList);
  std::filesystem::create_directories(n.fake.cache() + "/results");
  std::ofstream(n.CachePath("net1", "ctr1")) << "{\"kind\":\"cniCacheV1\",\"result\":{\"ips\":7";
  REQUIRE(rt.DelNetworkList(*list, Att("ctr1")).ok());
  CHECK(n.fake.Calls() == std::vector<std::string>{"DEL b ctr1", "DEL a ctr1"});
  CHECK_FALSE(n.fake.Stdin("a", "DEL").contains("prevResult"));
  CHECK_FALSE(std::filesystem::exists(n.CachePath("net1", "ctr1")));
  // CHECK, on the other hand, reports it.
  std::ofstream(n.CachePath("net1", "ctr1")) << "garbage";
  CHECK_FALSE(rt.CheckNetworkList(*list, Att("ctr1")).ok());
}

TEST_CASE("runtime GC: DEL for unlisted cached attachments, then GC to each plugin", "[runtime]") {
  Net n;
  Runtime rt(n.fake.Options());
  auto list = cni::runtime::ConfListFromBytes(kList);
  auto other = cni::runtime::ConfListFromBytes(
      R"({"cniVersion":"1.1.0","name":"net2","plugins":[{"type":"a"}]})");
  RuntimeConf stale = Att("ctr2");
  stale.args = {{"K", "V"}};
  stale.capability_args = Json::parse(R"({"portMappings":[{"hostPort":1,"containerPort":2,"protocol":"udp"}]})");
  REQUIRE(rt.AddNetworkList(*list, Att("ctr1")).ok());
  REQUIRE(rt.AddNetworkList(*list, stale).ok());
  REQUIRE(rt.AddNetworkList(*other, Att("ctr3")).ok());
  n.fake.ClearCalls();

  std::vector<cni::Attachment> valid = {{"ctr1", "eth0"}};
  REQUIRE(rt.GcNetworkList(*list, valid).ok());
  CHECK(n.fake.Calls() == std::vector<std::string>{"DEL b ctr2", "DEL a ctr2", "GC a ", "GC b "});
  // The stale attachment's DEL used what was cached at its ADD.
  CHECK(n.fake.Env("a", "DEL", "CNI_ARGS") == "K=V");
  CHECK(n.fake.Env("a", "DEL", "CNI_NETNS") == "/run/netns/ctr2");
  CHECK(n.fake.Stdin("a", "DEL")["runtimeConfig"] == stale.capability_args);
  CHECK(n.fake.Stdin("a", "DEL")["prevResult"] == Json::parse(kResult));
  // GC carries the valid attachments (under both names libcni sends).
  Json gc = n.fake.Stdin("b", "GC");
  Json attachments = Json::parse(R"([{"containerID":"ctr1","ifname":"eth0"}])");
  Json want = Json::parse(R"({"cniVersion":"1.1.0","name":"net1","type":"b"})");
  want["cni.dev/valid-attachments"] = attachments;
  want["cni.dev/attachments"] = attachments;
  CHECK(gc == want);
  CHECK(n.fake.Env("b", "GC", "CNI_COMMAND") == "GC");
  CHECK(std::filesystem::exists(n.CachePath("net1", "ctr1")));
  CHECK_FALSE(std::filesystem::exists(n.CachePath("net1", "ctr2")));
  CHECK(std::filesystem::exists(n.CachePath("net2", "ctr3")));  // another network's

  auto cached = rt.GetCachedAttachments();
  REQUIRE(cached.size() == 2);
  CHECK(cached[0].network == "net1");
  CHECK(cached[0].container_id == "ctr1");
  CHECK(rt.GetCachedAttachments("ctr3").size() == 1);
}

TEST_CASE("runtime GC: below 1.1.0 only the DELs, disableGC nothing, errors collected", "[runtime]") {
  Net n;
  Runtime rt(n.fake.Options());
  auto v100 = cni::runtime::ConfListFromBytes(R"({"cniVersion":"1.0.0","name":"old","plugins":[{"type":"a"}]})");
  REQUIRE(rt.AddNetworkList(*v100, Att("c1")).ok());
  n.fake.ClearCalls();
  REQUIRE(rt.GcNetworkList(*v100, std::vector<cni::Attachment>{}).ok());
  CHECK(n.fake.Calls() == std::vector<std::string>{"DEL a c1"});

  auto off = cni::runtime::ConfListFromBytes(
      R"({"cniVersion":"1.1.0","name":"off","disableGC":true,"plugins":[{"type":"a"}]})");
  REQUIRE(rt.AddNetworkList(*off, Att("c2")).ok());
  n.fake.ClearCalls();
  CHECK(rt.GcNetworkList(*off, std::nullopt).ok());
  CHECK(n.fake.Calls().empty());
  CHECK(std::filesystem::exists(n.CachePath("off", "c2")));

  // A failing GC does not stop the next plugin; all errors come back.
  n.fake.Answer("a", "GC", R"({"code":11,"msg":"busy"})", 1);
  auto list = cni::runtime::ConfListFromBytes(kList);
  absl::Status s = rt.GcNetworkList(*list, std::nullopt);
  CHECK(cni::CodeOf(s) == 11);
  CHECK_THAT(std::string(s.message()), Catch::Contains("failed to GC plugin a: busy"));
  CHECK(n.fake.Calls() == std::vector<std::string>{"GC a ", "GC b "});
  // Without a valid list the key is not sent at all (cnitool gc).
  CHECK_FALSE(n.fake.Stdin("b", "GC").contains("cni.dev/valid-attachments"));
}

// Loading network configuration lists as libcni does: from bytes, version
// selection with cniVersions, and from a directory in libcni's order.
#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "cni/base/error.h"
#include "cni/runtime/runtime.h"
#include "support/run.h"

namespace {

void Write(const std::filesystem::path& p, const std::string& s) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p) << s;
}

std::string Version(const std::string& doc) {
  auto l = cni::runtime::ConfListFromBytes(doc);
  return l.ok() ? l->cni_version : "error: " + std::string(l.status().message());
}

}  // namespace

TEST_CASE("runtime conf: a list from bytes", "[runtime]") {
  std::string doc = R"({"cniVersion":"1.0.0","name":"n","disableCheck":"TRUE","disableGC":true,
    "plugins":[{"type":"ptp","capabilities":{"mac":true,"ips":false},"x":1},{"type":"portmap"}]})";
  auto l = cni::runtime::ConfListFromBytes(doc);
  REQUIRE(l.ok());
  CHECK(l->name == "n");
  CHECK(l->cni_version == "1.0.0");
  CHECK(l->disable_check);
  CHECK(l->disable_gc);
  REQUIRE(l->plugins.size() == 2);
  CHECK(l->plugins[0].type == "ptp");
  CHECK(l->plugins[0].capabilities == std::map<std::string, bool>{{"ips", false}, {"mac", true}});
  CHECK(l->plugins[0].conf["x"] == 1);
  CHECK(l->bytes == doc);

  for (const char* bad : {R"({"plugins":[{"type":"a"}]})", R"({"name":"n","plugins":[]})",
                          R"({"name":"n","plugins":[{"x":1}]})", R"({"name":"n","plugins":{}})",
                          R"({"name":"n","disableCheck":"maybe","plugins":[{"type":"a"}]})", "[1]", "{"}) {
    INFO(bad);
    CHECK_FALSE(cni::runtime::ConfListFromBytes(bad).ok());
  }
}

TEST_CASE("runtime conf: cniVersions picks the highest version we speak", "[runtime]") {
  CHECK(Version(R"({"name":"n","cniVersion":"0.4.0","cniVersions":["1.0.0","1.1.0","0.3.1"],"plugins":[{"type":"a"}]})") == "1.1.0");
  // Newer than 1.1.0 is skipped, as libcni does.
  CHECK(Version(R"({"name":"n","cniVersion":"1.0.0","cniVersions":["9.0.0"],"plugins":[{"type":"a"}]})") == "1.0.0");
  CHECK(Version(R"({"name":"n","cniVersions":["0.4.0","1.0.0"],"plugins":[{"type":"a"}]})") == "1.0.0");
  CHECK(Version(R"({"name":"n","cniVersion":"1.1.0","cniVersions":["1.0.0"],"plugins":[{"type":"a"}]})") == "1.1.0");
  CHECK(Version(R"({"name":"n","plugins":[{"type":"a"}]})").empty());
  CHECK(Version(R"({"name":"n","cniVersions":["x.y"],"plugins":[{"type":"a"}]})").rfind("error", 0) == 0);
  CHECK(Version(R"({"name":"n","cniVersions":"1.0.0","plugins":[{"type":"a"}]})").rfind("error", 0) == 0);
}

TEST_CASE("runtime conf: loading from a directory in libcni's order", "[runtime]") {
  cni::test::TempDir dir;
  const auto& d = dir.path();
  // Two lists named "n": the first by file name wins.
  Write(d / "20-b.conflist", R"({"cniVersion":"1.0.0","name":"n","plugins":[{"type":"second"}]})");
  Write(d / "10-a.conflist", R"({"cniVersion":"1.0.0","name":"n","plugins":[{"type":"first"}]})");
  // A .conf of the same name loses to any .conflist.
  Write(d / "00-n.conf", R"({"cniVersion":"1.0.0","name":"n","type":"single"})");
  // A single-plugin file of another name is upconverted.
  Write(d / "05-s.json", R"({"cniVersion":"0.4.0","name":"s","type":"bridge","b":"<x>"})");
  // Not a configuration file.
  Write(d / "99-n.txt", "{}");

  auto n = cni::runtime::LoadNetworkConf(d.string(), "n");
  REQUIRE(n.ok());
  REQUIRE(n->plugins.size() == 1);
  CHECK(n->plugins[0].type == "first");

  auto s = cni::runtime::LoadNetworkConf(d.string(), "s");
  REQUIRE(s.ok());
  CHECK(s->cni_version == "0.4.0");
  REQUIRE(s->plugins.size() == 1);
  CHECK(s->plugins[0].type == "bridge");
  // The bytes libcni caches for an upconverted .conf: Go's json.Marshal of the
  // map, keys sorted, HTML characters escaped.
  CHECK(s->bytes == R"({"cniVersion":"0.4.0","name":"s","plugins":[{"b":"\u003cx\u003e","cniVersion":"0.4.0","name":"s","type":"bridge"}]})");

  auto missing = cni::runtime::LoadNetworkConf(d.string(), "zzz");
  CHECK(cni::CodeOf(missing.status()) == 7);
  CHECK_THAT(std::string(missing.status().message()), Catch::Contains("no net configuration with name \"zzz\""));
  CHECK_FALSE(cni::runtime::LoadNetworkConf((d / "nonexistent").string(), "n").ok());
}

TEST_CASE("runtime conf: plugins from <dir>/<name>/*.conf (libcni 1.3)", "[runtime]") {
  cni::test::TempDir dir;
  const auto& d = dir.path();
  Write(d / "a.conflist", R"({"cniVersion":"1.1.0","name":"n","plugins":[{"type":"inline"}]})");
  Write(d / "n" / "2.conf", R"({"type":"p2"})");
  Write(d / "n" / "1.conf", R"({"type":"p1"})");
  auto n = cni::runtime::LoadNetworkConf(d.string(), "n");
  REQUIRE(n.ok());
  REQUIRE(n->plugins.size() == 3);
  CHECK(n->plugins[1].type == "p1");
  CHECK(n->plugins[2].type == "p2");

  Write(d / "a.conflist", R"({"cniVersion":"1.1.0","name":"n","loadOnlyInlinedPlugins":true,"plugins":[{"type":"inline"}]})");
  n = cni::runtime::LoadNetworkConf(d.string(), "n");
  REQUIRE(n.ok());
  CHECK(n->plugins.size() == 1);

  // A list without "plugins" takes them all from the directory.
  Write(d / "a.conflist", R"({"cniVersion":"1.1.0","name":"n"})");
  n = cni::runtime::LoadNetworkConf(d.string(), "n");
  REQUIRE(n.ok());
  CHECK(n->plugins.size() == 2);
}

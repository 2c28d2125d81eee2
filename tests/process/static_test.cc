// The built `static` binary, run the way a runtime runs it: CNI_* environment,
// configuration on stdin, result or error on stdout, exit status.
#include <catch2/catch.hpp>

#include "cni/protocol/version.h"
#include "support/run.h"

namespace {

using cni::Json;
using cni::test::PluginCall;
using cni::test::RunPlugin;
using cni::test::RunResult;

Json StaticConf(const std::string& version, Json ipam_extra = Json::object(), Json top_extra = Json::object()) {
  Json ipam = {{"type", "static"},
               {"addresses", {{{"address", "10.10.0.5/24"}, {"gateway", "10.10.0.1"}},
                              {{"address", "fd00:10::5/64"}, {"gateway", "fd00:10::1"}}}},
               {"routes", {{{"dst", "0.0.0.0/0"}}, {{"dst", "192.168.0.0/16"}, {"gw", "10.10.0.254"}}}},
               {"dns", {{"nameservers", {"10.10.0.53"}}, {"domain", "example.com"}, {"search", {"example.com"}}}}};
  ipam.update(ipam_extra);
  Json conf = {{"name", "static-net"}, {"type", "static"}, {"ipam", ipam}};
  if (!version.empty()) conf["cniVersion"] = version;
  conf.update(top_extra);
  return conf;
}

PluginCall Call(const std::string& cmd, const Json& conf, const std::string& args = "") {
  PluginCall c;
  c.command = cmd;
  c.container_id = "ctr-static-1";
  c.netns = "/var/run/netns/does-not-matter";
  c.ifname = "eth0";
  c.args = args;
  c.config = conf.dump();
  return c;
}

RunResult Run(const std::string& cmd, const Json& conf, const std::string& args = "") {
  return RunPlugin("static", Call(cmd, conf, args));
}

Json Out(const RunResult& r) {
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE_FALSE(r.out.empty());
  return Json::parse(r.out);
}

void RequireCniError(const RunResult& r, int code) {
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.exit_code != 0);
  REQUIRE(r.exit_code < 128);  // no crash
  Json j = Out(r);
  CHECK(j["code"] == code);
  CHECK_FALSE(j["msg"].get<std::string>().empty());
}

}  // namespace

TEST_CASE("static: ADD at every version prints that version's result shape", "[static]") {
  for (const std::string& version : cni::AllVersions()) {
    INFO(version);
    RunResult r = Run("ADD", StaticConf(version));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    Json j = Out(r);
    CHECK(j["cniVersion"] == version);
    if (version == "0.1.0" || version == "0.2.0") {
      CHECK(j["ip4"]["ip"] == "10.10.0.5/24");
      CHECK(j["ip4"]["gateway"] == "10.10.0.1");
      CHECK(j["ip6"]["ip"] == "fd00:10::5/64");
      CHECK(j["ip4"]["routes"].size() == 2);
      CHECK_FALSE(j.contains("ips"));
    } else {
      REQUIRE(j["ips"].size() == 2);
      CHECK(j["ips"][0]["address"] == "10.10.0.5/24");
      CHECK(j["ips"][0]["gateway"] == "10.10.0.1");
      CHECK(j["ips"][1]["address"] == "fd00:10::5/64");
      CHECK(j["routes"].size() == 2);
      CHECK(j["routes"][1]["gw"] == "10.10.0.254");
      bool has_version_field = j["ips"][0].contains("version");
      CHECK(has_version_field == (version < std::string("1.0.0")));
    }
    CHECK(j["dns"]["nameservers"][0] == "10.10.0.53");
    CHECK(j["dns"]["domain"] == "example.com");
  }
}

TEST_CASE("static: CHECK and DEL succeed after ADD", "[static]") {
  for (std::string version : {"0.4.0", "1.0.0", "1.1.0"}) {
    INFO(version);
    Json conf = StaticConf(version);
    RunResult add = Run("ADD", conf);
    REQUIRE(add.exit_code == 0);
    Json with_prev = conf;
    with_prev["prevResult"] = Json::parse(add.out);
    RunResult check = Run("CHECK", with_prev);
    INFO(check.out << check.err);
    CHECK(check.exit_code == 0);
    CHECK(check.out.empty());
    RunResult del = Run("DEL", conf);
    CHECK(del.exit_code == 0);
    CHECK(del.out.empty());
  }
}

TEST_CASE("static: CHECK fails when prevResult lacks a configured address", "[static]") {
  Json conf = StaticConf("1.0.0");
  Json prev = Out(Run("ADD", conf));
  prev["ips"].erase(1);
  conf["prevResult"] = prev;
  RequireCniError(Run("CHECK", conf), 7);
  Json no_prev = StaticConf("1.0.0");
  RequireCniError(Run("CHECK", no_prev), 7);
}

TEST_CASE("static: CHECK fails when the gateway differs", "[static]") {
  Json conf = StaticConf("1.0.0");
  Json prev = Out(Run("ADD", conf));
  prev["ips"][0]["gateway"] = "10.10.0.99";
  conf["prevResult"] = prev;
  RunResult r = Run("CHECK", conf);
  RequireCniError(r, 7);
  CHECK(r.out.find("10.10.0.99") != std::string::npos);
}

TEST_CASE("static: STATUS and GC succeed at 1.1.0", "[static]") {
  CHECK(Run("STATUS", StaticConf("1.1.0")).exit_code == 0);
  PluginCall gc = Call("GC", StaticConf("1.1.0", Json::object(),
                                       {{"cni.dev/valid-attachments", Json::array()}}));
  gc.container_id.clear();
  gc.ifname.clear();
  gc.netns.clear();
  CHECK(RunPlugin("static", gc).exit_code == 0);
}

TEST_CASE("static: CNI_ARGS IP and GATEWAY add addresses", "[static]") {
  Json conf = StaticConf("1.0.0", {{"addresses", Json::array()}});
  RunResult r = Run("ADD", conf, "IP=10.20.0.7/24,fd00:20::7/64;GATEWAY=10.20.0.1");
  REQUIRE(r.exit_code == 0);
  Json j = Out(r);
  REQUIRE(j["ips"].size() == 2);
  CHECK(j["ips"][0]["address"] == "10.20.0.7/24");
  CHECK(j["ips"][0]["gateway"] == "10.20.0.1");
  CHECK(j["ips"][1]["address"] == "fd00:20::7/64");
  CHECK_FALSE(j["ips"][1].contains("gateway"));
}

TEST_CASE("static: CNI_ARGS addresses are appended to the configured ones", "[static]") {
  RunResult r = Run("ADD", StaticConf("1.0.0"), "IP=10.20.0.7/24");
  REQUIRE(r.exit_code == 0);
  CHECK(Out(r)["ips"].size() == 3);
}

TEST_CASE("static: args.cni.ips replaces config and CNI_ARGS addresses", "[static]") {
  Json conf = StaticConf("1.0.0", Json::object(), {{"args", {{"cni", {{"ips", {"10.30.0.9/16"}}}}}}});
  RunResult r = Run("ADD", conf, "IP=10.20.0.7/24");
  REQUIRE(r.exit_code == 0);
  Json j = Out(r);
  REQUIRE(j["ips"].size() == 1);
  CHECK(j["ips"][0]["address"] == "10.30.0.9/16");
}

TEST_CASE("static: runtimeConfig.ips wins over everything", "[static]") {
  Json conf = StaticConf("1.0.0", Json::object(),
                         {{"args", {{"cni", {{"ips", {"10.30.0.9/16"}}}}}},
                          {"runtimeConfig", {{"ips", {"10.40.0.4/24", "fd00:40::4/64"}}}}});
  RunResult r = Run("ADD", conf, "IP=10.20.0.7/24");
  REQUIRE(r.exit_code == 0);
  Json j = Out(r);
  REQUIRE(j["ips"].size() == 2);
  CHECK(j["ips"][0]["address"] == "10.40.0.4/24");
  CHECK(j["ips"][1]["address"] == "fd00:40::4/64");
}

TEST_CASE("static: keys match case-insensitively", "[static]") {
  Json conf = {{"CNIVersion", "1.0.0"}, {"Name", "n"}, {"Type", "static"},
               {"IPAM", {{"Type", "static"}, {"Addresses", {{{"Address", "10.9.0.2/24"}}}}}}};
  RunResult r = Run("ADD", conf);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(Out(r)["ips"][0]["address"] == "10.9.0.2/24");
}

TEST_CASE("static: two addresses of one family need cniVersion >= 0.3.0", "[static]") {
  Json ipam = {{"addresses", {{{"address", "10.0.0.2/24"}}, {{"address", "10.0.1.2/24"}}}}};
  RequireCniError(Run("ADD", StaticConf("0.2.0", ipam)), 1);
  CHECK(Run("ADD", StaticConf("0.3.0", ipam)).exit_code == 0);
}

TEST_CASE("static: no addresses at 0.2.0 cannot be converted", "[static]") {
  RequireCniError(Run("ADD", StaticConf("0.2.0", {{"addresses", Json::array()}})), 1);
  RunResult r = Run("ADD", StaticConf("1.0.0", {{"addresses", Json::array()}}));
  CHECK(r.exit_code == 0);
}

TEST_CASE("static: bad input gives the right error and never crashes", "[static]") {
  struct Bad {
    std::string what;
    std::string config;
    std::string args;
    int code;
  };
  std::vector<Bad> cases = {
      {"invalid JSON", "{\"cniVersion\":", "", 6},
      {"empty stdin", "", "", 6},
      {"wrong type of addresses", StaticConf("1.0.0", {{"addresses", "10.0.0.1/24"}}).dump(), "", 6},
      {"wrong type of address", StaticConf("1.0.0", {{"addresses", {{{"address", 5}}}}}).dump(), "", 6},
      {"address without prefix", StaticConf("1.0.0", {{"addresses", {{{"address", "10.0.0.1"}}}}}).dump(), "", 7},
      {"prefix too long", StaticConf("1.0.0", {{"addresses", {{{"address", "10.0.0.1/33"}}}}}).dump(), "", 7},
      {"bad gateway", StaticConf("1.0.0", {{"addresses", {{{"address", "10.0.0.1/24"}, {"gateway", "x"}}}}}).dump(), "", 7},
      {"bad route", StaticConf("1.0.0", {{"routes", {{{"dst", "nope"}}}}}).dump(), "", 7},
      {"missing ipam", Json{{"cniVersion", "1.0.0"}, {"name", "n"}, {"type", "static"}}.dump(), "", 7},
      {"missing name", Json{{"cniVersion", "1.0.0"}, {"type", "static"}}.dump(), "", 7},
      {"missing type", Json{{"cniVersion", "1.0.0"}, {"name", "n"}}.dump(), "", 7},
      {"unsupported version", StaticConf("9.9.9").dump(), "", 1},
      {"unknown CNI_ARGS key", StaticConf("1.0.0").dump(), "FOO=bar", 4},
      {"malformed CNI_ARGS", StaticConf("1.0.0").dump(), "IP", 4},
      {"bad CNI_ARGS IP", StaticConf("1.0.0").dump(), "IP=10.0.0.300/24", 7},
      {"bad runtimeConfig ips", StaticConf("1.0.0", Json::object(), {{"runtimeConfig", {{"ips", {"10.0.0.1"}}}}}).dump(), "", 7},
  };
  for (const Bad& b : cases) {
    INFO(b.what);
    PluginCall c = Call("ADD", Json::object(), b.args);
    c.config = b.config;
    RequireCniError(RunPlugin("static", c), b.code);
  }
}

TEST_CASE("static: environment errors", "[static]") {
  PluginCall c = Call("ADD", StaticConf("1.0.0"));
  c.container_id = "bad id!";
  RequireCniError(RunPlugin("static", c), 4);
  c = Call("ADD", StaticConf("1.0.0"));
  c.ifname = "this-name-is-too-long";
  RequireCniError(RunPlugin("static", c), 4);
  c = Call("ADD", StaticConf("1.0.0"));
  c.ifname = "eth/0";
  RequireCniError(RunPlugin("static", c), 4);
  c = Call("ADD", StaticConf("1.0.0"));
  c.set_path = false;
  RequireCniError(RunPlugin("static", c), 4);
  c = Call("ADD", StaticConf("1.0.0"));
  c.netns = "/proc/self/ns/net";  // the plugin's own namespace
  RequireCniError(RunPlugin("static", c), 8);
  // CNI_NETNS_OVERRIDE=1 (what upstream's test utilities set) lifts that refusal.
  c.extra_env = {"CNI_NETNS_OVERRIDE=1"};
  CHECK(RunPlugin("static", c).exit_code == 0);
  c.extra_env = {"CNI_NETNS_OVERRIDE=0"};
  RequireCniError(RunPlugin("static", c), 8);
}

TEST_CASE("static: VERSION and the about line", "[static]") {
  PluginCall v;
  v.command = "VERSION";
  v.config = R"({"cniVersion":"1.0.0"})";
  RunResult r = RunPlugin("static", v);
  REQUIRE(r.exit_code == 0);
  Json j = Out(r);
  CHECK(j["supportedVersions"].size() == cni::AllVersions().size());
  PluginCall none;
  RunResult about = RunPlugin("static", none);
  CHECK(about.exit_code == 0);
  CHECK(about.out.empty());
  CHECK(about.err.find("static") != std::string::npos);
  CHECK(about.err.find("cni-cpp") != std::string::npos);
}

TEST_CASE("static: DEL succeeds even for a configuration it cannot use", "[static]") {
  RunResult r = Run("DEL", StaticConf("1.0.0", {{"addresses", {{{"address", "bogus"}}}}}));
  CHECK(r.exit_code == 0);
}

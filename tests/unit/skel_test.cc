// skel without a process: environment and stdio are injected.
#include <catch2/catch.hpp>
#include <errno.h>

#include <sstream>

#include "cni/base/error.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/version.h"
#include "support/run.h"

namespace {

using cni::Json;

struct Outcome {
  int rc;
  std::string out, err;
  Json json() const { return out.empty() ? Json() : Json::parse(out); }
};

struct Recorder {
  std::vector<std::string> calls;
  cni::CmdArgs last;
};

// A plugin whose handlers record their calls and return a fixed result.
cni::PluginFuncs RecordingFuncs(Recorder& rec) {
  cni::PluginFuncs f;
  f.add = [&rec](const cni::CmdArgs& a) -> absl::StatusOr<cni::Result> {
    rec.calls.push_back("ADD");
    rec.last = a;
    cni::Result r;
    r.interfaces.push_back({"eth0", "0a:58:0a:00:00:05", 1500, a.netns, "", ""});
    r.ips.push_back({0, *cni::net::IpPrefix::Parse("10.0.0.5/24"), *cni::net::IpAddress::Parse("10.0.0.1")});
    return r;
  };
  auto rec_handler = [&rec](const char* name) {
    return [&rec, name](const cni::CmdArgs& a) {
      rec.calls.push_back(name);
      rec.last = a;
      return absl::OkStatus();
    };
  };
  f.del = rec_handler("DEL");
  f.check = rec_handler("CHECK");
  f.gc = rec_handler("GC");
  f.status = rec_handler("STATUS");
  return f;
}

std::map<std::string, std::string> BaseEnv(const std::string& cmd) {
  return {{"CNI_COMMAND", cmd},       {"CNI_CONTAINERID", "ctr-1"}, {"CNI_NETNS", "/var/run/netns/x"},
          {"CNI_IFNAME", "eth0"},     {"CNI_PATH", "/opt/cni/bin:/usr/lib/cni"},
          {"CNI_ARGS", "IgnoreUnknown=1"}};
}

std::string Conf(const std::string& version, const std::string& extra = "") {
  std::string v = version.empty() ? "" : "\"cniVersion\":\"" + version + "\",";
  return "{" + v + "\"name\":\"net1\",\"type\":\"test\"" + extra + "}";
}

Outcome RunSkel(const cni::PluginFuncs& f, std::map<std::string, std::string> env,
                const std::string& stdin_data, const std::string& own_netns = "/proc/self/ns/net",
                const std::string& name = "test-plugin") {
  std::ostringstream out, err;
  cni::ProcessIo io;
  io.env = std::move(env);
  io.stdin_data = stdin_data;
  io.out = &out;
  io.err = &err;
  io.own_netns_path = own_netns;
  int rc = cni::Run(f, {{}, "CNI test plugin", name}, io);
  return {rc, out.str(), err.str()};
}

void RequireError(const Outcome& o, int code) {
  INFO(o.out << o.err);
  REQUIRE(o.rc != 0);
  Json j = o.json();
  CHECK(j["code"] == code);
  CHECK(j["msg"].is_string());
  CHECK_FALSE(j["msg"].get<std::string>().empty());
  CHECK(j.contains("cniVersion"));
}

}  // namespace

TEST_CASE("skel: ADD calls the handler and prints the result at the config's version", "[skel]") {
  for (const std::string& version : cni::AllVersions()) {
    INFO(version);
    Recorder rec;
    Outcome o = RunSkel(RecordingFuncs(rec), BaseEnv("ADD"), Conf(version));
    REQUIRE(o.rc == 0);
    REQUIRE(rec.calls == std::vector<std::string>{"ADD"});
    Json j = o.json();
    CHECK(j["cniVersion"] == version);
    if (version == "0.1.0" || version == "0.2.0") {
      CHECK(j["ip4"]["ip"] == "10.0.0.5/24");
    } else {
      CHECK(j["ips"][0]["address"] == "10.0.0.5/24");
    }
  }
}

TEST_CASE("skel: CmdArgs carries the environment, the plugin path and the parsed config", "[skel]") {
  Recorder rec;
  Outcome o = RunSkel(RecordingFuncs(rec), BaseEnv("ADD"), Conf("1.0.0", ",\"mtu\":1400"));
  REQUIRE(o.rc == 0);
  CHECK(rec.last.container_id == "ctr-1");
  CHECK(rec.last.netns == "/var/run/netns/x");
  CHECK(rec.last.ifname == "eth0");
  CHECK(rec.last.args == "IgnoreUnknown=1");
  CHECK(rec.last.plugin_dirs == std::vector<std::string>{"/opt/cni/bin", "/usr/lib/cni"});
  CHECK(rec.last.conf.name == "net1");
  CHECK(rec.last.conf.raw["mtu"] == 1400);
  bool saw_command = false;
  for (const auto& e : rec.last.env) saw_command |= e == "CNI_COMMAND=ADD";
  CHECK(saw_command);
}

TEST_CASE("skel: a config without cniVersion is a 0.1.0 config", "[skel]") {
  Recorder rec;
  Outcome o = RunSkel(RecordingFuncs(rec), BaseEnv("ADD"), Conf(""));
  REQUIRE(o.rc == 0);
  CHECK(o.json()["cniVersion"] == "0.1.0");
  CHECK(o.json().contains("ip4"));
}

TEST_CASE("skel: DEL, CHECK, GC, STATUS print nothing on success", "[skel]") {
  for (const char* cmd : {"DEL", "CHECK", "GC", "STATUS"}) {
    INFO(cmd);
    Recorder rec;
    Outcome o = RunSkel(RecordingFuncs(rec), BaseEnv(cmd), Conf("1.1.0"));
    CHECK(o.rc == 0);
    CHECK(o.out.empty());
    CHECK(rec.calls == std::vector<std::string>{cmd});
  }
}

TEST_CASE("skel: missing handlers succeed for DEL/CHECK/GC/STATUS", "[skel]") {
  cni::PluginFuncs none;
  for (const char* cmd : {"DEL", "CHECK", "GC", "STATUS"}) {
    Outcome o = RunSkel(none, BaseEnv(cmd), Conf("1.1.0"));
    CHECK(o.rc == 0);
  }
}

TEST_CASE("skel: VERSION answers with every supported version", "[skel]") {
  Recorder rec;
  Outcome o = RunSkel(RecordingFuncs(rec), {{"CNI_COMMAND", "VERSION"}}, "{\"cniVersion\":\"0.4.0\"}");
  REQUIRE(o.rc == 0);
  Json j = o.json();
  // Spec section 5, "Version": cniVersion is the value given on input.
  CHECK(j["cniVersion"] == "0.4.0");
  CHECK(j["supportedVersions"] ==
        Json({"0.1.0", "0.2.0", "0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"}));
  CHECK(rec.calls.empty());
  // VERSION needs no configuration at all; without a version (or with one
  // that is not a version) the answer carries ours.
  Outcome bare = RunSkel(RecordingFuncs(rec), {{"CNI_COMMAND", "VERSION"}}, "");
  REQUIRE(bare.rc == 0);
  CHECK(bare.json()["cniVersion"] == "1.1.0");
  CHECK(RunSkel(RecordingFuncs(rec), {{"CNI_COMMAND", "VERSION"}}, R"({"cniVersion":"x"})").json()["cniVersion"] ==
        "1.1.0");
}

TEST_CASE("skel: no CNI_COMMAND prints the about line on stderr and succeeds", "[skel]") {
  Recorder rec;
  Outcome o = RunSkel(RecordingFuncs(rec), {}, "");
  CHECK(o.rc == 0);
  CHECK(o.out.empty());
  CHECK(o.err.find("CNI test plugin") != std::string::npos);
  CHECK(o.err.find("1.1.0") != std::string::npos);
}

TEST_CASE("skel: an unknown command is error 4", "[skel]") {
  Recorder rec;
  RequireError(RunSkel(RecordingFuncs(rec), BaseEnv("FROB"), Conf("1.0.0")), 4);
  CHECK(rec.calls.empty());
}

TEST_CASE("skel: required variables per command", "[skel]") {
  struct Case {
    std::string cmd, var;
    bool required;
  };
  std::vector<Case> cases = {
      {"ADD", "CNI_CONTAINERID", true}, {"ADD", "CNI_NETNS", true},   {"ADD", "CNI_IFNAME", true},
      {"ADD", "CNI_PATH", true},        {"CHECK", "CNI_NETNS", true}, {"CHECK", "CNI_PATH", true},
      {"DEL", "CNI_CONTAINERID", true}, {"DEL", "CNI_IFNAME", true},  {"DEL", "CNI_PATH", true},
      {"DEL", "CNI_NETNS", false},      {"GC", "CNI_PATH", true},     {"GC", "CNI_CONTAINERID", false},
      {"GC", "CNI_NETNS", false},       {"STATUS", "CNI_PATH", false}, {"STATUS", "CNI_IFNAME", false},
      {"ADD", "CNI_ARGS", false},
  };
  for (const Case& c : cases) {
    INFO(c.cmd << " without " << c.var);
    Recorder rec;
    auto env = BaseEnv(c.cmd);
    env.erase(c.var);
    Outcome o = RunSkel(RecordingFuncs(rec), env, Conf("1.1.0"));
    if (c.required) {
      RequireError(o, 4);
      CHECK(o.json()["msg"].get<std::string>().find(c.var) != std::string::npos);
      CHECK(rec.calls.empty());
    } else {
      CHECK(o.rc == 0);
    }
  }
}

TEST_CASE("skel: container ID validation", "[skel]") {
  for (const char* bad : {"-leading-dash", ".dot", "has space", "semi;colon", "slash/", "ünïcode"}) {
    INFO(bad);
    Recorder rec;
    auto env = BaseEnv("ADD");
    env["CNI_CONTAINERID"] = bad;
    RequireError(RunSkel(RecordingFuncs(rec), env, Conf("1.0.0")), 4);
    CHECK(rec.calls.empty());
  }
  for (const char* good : {"a", "0abc", "abc_def.ghi-jkl", "A1"}) {
    Recorder rec;
    auto env = BaseEnv("ADD");
    env["CNI_CONTAINERID"] = good;
    CHECK(RunSkel(RecordingFuncs(rec), env, Conf("1.0.0")).rc == 0);
  }
}

TEST_CASE("skel: interface name validation", "[skel]") {
  for (const char* bad : {"sixteen-bytes-xx", ".", "..", "eth/0", "eth:0", "eth 0", "eth\t0"}) {
    INFO(bad);
    Recorder rec;
    auto env = BaseEnv("ADD");
    env["CNI_IFNAME"] = bad;
    RequireError(RunSkel(RecordingFuncs(rec), env, Conf("1.0.0")), 4);
    CHECK(rec.calls.empty());
  }
  Recorder rec;
  auto env = BaseEnv("ADD");
  env["CNI_IFNAME"] = "fifteen-bytes-x";
  CHECK(RunSkel(RecordingFuncs(rec), env, Conf("1.0.0")).rc == 0);
}

TEST_CASE("skel: network name validation", "[skel]") {
  Recorder rec;
  RequireError(RunSkel(RecordingFuncs(rec), BaseEnv("ADD"), R"({"cniVersion":"1.0.0","type":"t"})"), 7);
  RequireError(RunSkel(RecordingFuncs(rec), BaseEnv("ADD"),
                       R"({"cniVersion":"1.0.0","name":"../etc","type":"t"})"), 7);
  RequireError(RunSkel(RecordingFuncs(rec), BaseEnv("GC"),
                       R"({"cniVersion":"1.1.0","name":"a/b","type":"t"})"), 7);
  CHECK(rec.calls.empty());
}

TEST_CASE("skel: a missing plugin type is invalid config", "[skel]") {
  Recorder rec;
  RequireError(RunSkel(RecordingFuncs(rec), BaseEnv("ADD"), R"({"cniVersion":"1.0.0","name":"n"})"), 7);
}

TEST_CASE("skel: bad stdin is a decoding failure", "[skel]") {
  for (const char* bad : {"", "{", "[]", "not json", R"({"cniVersion": 1, "name":"n","type":"t"})",
                          R"({"cniVersion":"1.0.0","name":["n"],"type":"t"})"}) {
    INFO(bad);
    Recorder rec;
    RequireError(RunSkel(RecordingFuncs(rec), BaseEnv("ADD"), bad), 6);
    CHECK(rec.calls.empty());
  }
}

TEST_CASE("skel: its own refusals (codes 4, 6, 7) begin with the plugin's name, once", "[skel]") {
  Recorder rec;
  auto msg = [](const Outcome& o) { return o.json()["msg"].get<std::string>(); };
  Outcome decode = RunSkel(RecordingFuncs(rec), BaseEnv("ADD"), "{");
  RequireError(decode, 6);
  CHECK(msg(decode).rfind("test-plugin: decoding network configuration: ", 0) == 0);
  Outcome no_name = RunSkel(RecordingFuncs(rec), BaseEnv("ADD"), R"({"cniVersion":"1.0.0","type":"t"})");
  RequireError(no_name, 7);
  CHECK(msg(no_name) == "test-plugin: missing network name");
  auto env = BaseEnv("ADD");
  env.erase("CNI_NETNS");
  Outcome missing = RunSkel(RecordingFuncs(rec), env, Conf("1.0.0"));
  RequireError(missing, 4);
  CHECK(msg(missing) == "test-plugin: required env variables [CNI_NETNS] missing");
  Outcome unknown = RunSkel(RecordingFuncs(rec), BaseEnv("FROB"), Conf("1.0.0"));
  RequireError(unknown, 4);
  CHECK(msg(unknown) == "test-plugin: unknown CNI_COMMAND: FROB");
  cni::PluginFuncs no_add = RecordingFuncs(rec);
  no_add.add = nullptr;
  Outcome unimplemented = RunSkel(no_add, BaseEnv("ADD"), Conf("1.0.0"));
  RequireError(unimplemented, 4);
  CHECK(msg(unimplemented) == "test-plugin: ADD is not implemented");
  CHECK(rec.calls.empty());

  // Without a name: the program's file name (a plugin's type, once installed).
  Outcome unnamed = RunSkel(RecordingFuncs(rec), BaseEnv("ADD"), "{", "/proc/self/ns/net", "");
  CHECK(msg(unnamed).rfind(std::string(program_invocation_short_name) + ": decoding network configuration: ", 0) == 0);
  // Other codes, and a handler's own errors, are the handler's to word.
  Outcome version = RunSkel(RecordingFuncs(rec), BaseEnv("ADD"), Conf("0.5.0"));
  CHECK(msg(version) == "incompatible CNI versions");
}

TEST_CASE("skel: an unsupported version is error 1 with details", "[skel]") {
  Recorder rec;
  Outcome o = RunSkel(RecordingFuncs(rec), BaseEnv("ADD"), Conf("0.5.0"));
  RequireError(o, 1);
  CHECK(o.json()["details"].get<std::string>().find("0.5.0") != std::string::npos);
  // A plugin may restrict its versions.
  std::ostringstream out, err;
  cni::ProcessIo io{BaseEnv("ADD"), Conf("0.3.1"), &out, &err};
  CHECK(cni::Run(RecordingFuncs(rec), {{"1.0.0", "1.1.0"}, "x"}, io) == 1);
  CHECK(Json::parse(out.str())["code"] == 1);
  CHECK(rec.calls.empty());
}

TEST_CASE("skel: version gates for CHECK, GC and STATUS", "[skel]") {
  struct Gate {
    std::string cmd, too_old, ok;
  };
  for (const Gate& g : {Gate{"CHECK", "0.3.1", "0.4.0"}, Gate{"GC", "1.0.0", "1.1.0"},
                        Gate{"STATUS", "1.0.0", "1.1.0"}}) {
    INFO(g.cmd);
    Recorder rec;
    RequireError(RunSkel(RecordingFuncs(rec), BaseEnv(g.cmd), Conf(g.too_old)), 1);
    CHECK(rec.calls.empty());
    CHECK(RunSkel(RecordingFuncs(rec), BaseEnv(g.cmd), Conf(g.ok)).rc == 0);
  }
}

TEST_CASE("skel: CNI_NETNS naming the plugin's own namespace is error 8", "[skel]") {
  cni::test::TempDir dir;
  std::string own = dir.str() + "/own-ns";
  FILE* f = fopen(own.c_str(), "w");
  REQUIRE(f != nullptr);
  fclose(f);
  for (const char* cmd : {"ADD", "CHECK", "DEL"}) {
    INFO(cmd);
    Recorder rec;
    auto env = BaseEnv(cmd);
    env["CNI_NETNS"] = own;
    RequireError(RunSkel(RecordingFuncs(rec), env, Conf("1.0.0"), own), 8);
    CHECK(rec.calls.empty());
  }
  // A different path (even one that does not exist) goes to the handler.
  Recorder rec;
  CHECK(RunSkel(RecordingFuncs(rec), BaseEnv("DEL"), Conf("1.0.0"), own).rc == 0);
}

TEST_CASE("skel: CNI_NETNS_OVERRIDE \"1\" or \"true\" lifts the own-namespace refusal", "[skel]") {
  cni::test::TempDir dir;
  std::string own = dir.str() + "/own-ns";
  FILE* f = fopen(own.c_str(), "w");
  REQUIRE(f != nullptr);
  fclose(f);
  for (const char* cmd : {"ADD", "CHECK", "DEL"}) {
    // The reference skel's values: "1", and "true" in any case.
    for (const char* value : {"1", "true", "TRUE", "True"}) {
      INFO(cmd << " CNI_NETNS_OVERRIDE=" << value);
      Recorder rec;
      auto env = BaseEnv(cmd);
      env["CNI_NETNS"] = own;
      env["CNI_NETNS_OVERRIDE"] = value;
      CHECK(RunSkel(RecordingFuncs(rec), env, Conf("1.0.0"), own).rc == 0);
      CHECK(rec.calls == std::vector<std::string>{cmd});
    }
    // Anything else keeps the refusal, as upstream.
    for (const char* value : {"", "0", "false", "yes"}) {
      INFO(cmd << " CNI_NETNS_OVERRIDE=" << value);
      Recorder rec;
      auto env = BaseEnv(cmd);
      env["CNI_NETNS"] = own;
      env["CNI_NETNS_OVERRIDE"] = value;
      RequireError(RunSkel(RecordingFuncs(rec), env, Conf("1.0.0"), own), 8);
      CHECK(rec.calls.empty());
    }
  }
}

TEST_CASE("skel: handler errors carry their CNI code, message and details", "[skel]") {
  cni::PluginFuncs f;
  f.add = [](const cni::CmdArgs&) -> absl::StatusOr<cni::Result> {
    return cni::Error(cni::ErrorCode::kTryAgainLater, "busy", "try later");
  };
  f.del = [](const cni::CmdArgs&) { return absl::InternalError("plain failure"); };
  Outcome o = RunSkel(f, BaseEnv("ADD"), Conf("1.0.0"));
  RequireError(o, 11);
  CHECK(o.json()["msg"] == "busy");
  CHECK(o.json()["details"] == "try later");
  CHECK(o.json()["cniVersion"] == "1.0.0");
  Outcome d = RunSkel(f, BaseEnv("DEL"), Conf("1.0.0"));
  RequireError(d, 999);  // an untyped error is "internal", as upstream
  CHECK(d.json()["msg"] == "plain failure");
  CHECK_FALSE(d.json().contains("details"));
}

TEST_CASE("skel: a result that cannot be converted is an error", "[skel]") {
  cni::PluginFuncs f;
  f.add = [](const cni::CmdArgs&) -> absl::StatusOr<cni::Result> { return cni::Result{}; };
  Outcome o = RunSkel(f, BaseEnv("ADD"), Conf("0.2.0"));
  RequireError(o, 1);
}

TEST_CASE("skel: prevResult is parsed at the config's version", "[skel]") {
  auto conf = cni::NetConf::Parse(
      R"({"cniVersion":"0.2.0","name":"n","type":"t","prevResult":{"ip4":{"ip":"10.1.0.2/16","gateway":"10.1.0.1"}}})");
  REQUIRE(conf.ok());
  auto prev = cni::ParsePrevResult(*conf);
  REQUIRE(prev.ok());
  REQUIRE(prev->has_value());
  REQUIRE((*prev)->ips.size() == 1);
  CHECK((*prev)->ips[0].address.ToString() == "10.1.0.2/16");
  auto none = cni::ParsePrevResult(*cni::NetConf::Parse(R"({"name":"n","type":"t"})"));
  REQUIRE(none.ok());
  CHECK_FALSE(none->has_value());
}

TEST_CASE("error helpers: code, details, annotate", "[error]") {
  absl::Status s = cni::Error(cni::ErrorCode::kInvalidNetworkConfig, "bad subnet", "10.0.0.0/33");
  CHECK(cni::CodeOf(s) == 7);
  CHECK(cni::DetailsOf(s) == "10.0.0.0/33");
  absl::Status a = cni::Annotate(s, "loading ipam");
  CHECK(a.message() == "loading ipam: bad subnet");
  CHECK(cni::CodeOf(a) == 7);
  CHECK(cni::DetailsOf(a) == "10.0.0.0/33");
  CHECK(cni::CodeOf(absl::OkStatus()) == 0);
  CHECK(cni::CodeOf(absl::UnknownError("x")) == 999);
  CHECK(cni::CodeOf(cni::WithCode(absl::UnknownError("x"), cni::ErrorCode::kIoFailure)) == 5);
  CHECK(cni::WithCode(absl::OkStatus(), cni::ErrorCode::kIoFailure).ok());
}

TEST_CASE("skel: ADD refuses a CNI_IFNAME or CNI_NETNS that is not UTF-8 before the handler runs", "[skel]") {
  for (const char* key : {"CNI_IFNAME", "CNI_NETNS"}) {
    INFO(key);
    Recorder rec;
    auto env = BaseEnv("ADD");
    env[key] = std::string("eth\xff", 4);
    Outcome o = RunSkel(RecordingFuncs(rec), env, Conf("1.0.0"));
    RequireError(o, 4);
    CHECK(rec.calls.empty());
    CHECK(o.json()["msg"] == "test-plugin: " + std::string(key) + " is not valid UTF-8");
  }
  // Overlong and surrogate encodings are not UTF-8 either; real UTF-8 is fine.
  for (std::string bad : {std::string("\xc0\xaf"), std::string("\xed\xa0\x80"), std::string("e\xe2\x82")}) {
    Recorder rec;
    auto env = BaseEnv("ADD");
    env["CNI_IFNAME"] = bad;
    RequireError(RunSkel(RecordingFuncs(rec), env, Conf("1.0.0")), 4);
  }
  Recorder rec;
  auto env = BaseEnv("ADD");
  env["CNI_IFNAME"] = "eth\xc3\xa9";  // "ethé"
  CHECK(RunSkel(RecordingFuncs(rec), env, Conf("1.0.0")).rc == 0);
  // DEL prints no result: it takes any name, so such an interface can go.
  auto del = BaseEnv("DEL");
  del["CNI_IFNAME"] = std::string("eth\xff", 4);
  CHECK(RunSkel(RecordingFuncs(rec), del, Conf("1.0.0")).rc == 0);
}

TEST_CASE("skel: an exception from a handler is an error document, and the handler's guards run", "[skel]") {
  bool rolled_back = false;
  cni::PluginFuncs f;
  f.add = [&](const cni::CmdArgs&) -> absl::StatusOr<cni::Result> {
    struct Guard {
      bool* flag;
      ~Guard() { *flag = true; }
    } guard{&rolled_back};
    cni::Json j = "not a number";
    (void)j.get<int>();  // nlohmann throws type_error
    return cni::Result{};
  };
  f.del = [](const cni::CmdArgs&) -> absl::Status { throw 42; };
  Outcome o = RunSkel(f, BaseEnv("ADD"), Conf("1.0.0"));
  RequireError(o, 999);
  CHECK(rolled_back);
  CHECK(o.json()["msg"].get<std::string>().find("internal error") != std::string::npos);
  RequireError(RunSkel(f, BaseEnv("DEL"), Conf("1.0.0")), 999);
}

TEST_CASE("skel: a result holding bytes that are not UTF-8 still prints", "[skel]") {
  cni::PluginFuncs f;
  f.add = [](const cni::CmdArgs&) -> absl::StatusOr<cni::Result> {
    cni::Result r;
    r.interfaces.push_back({std::string("eth\xff", 4), "", std::nullopt, "", "", ""});
    r.ips.push_back({0, *cni::net::IpPrefix::Parse("10.0.0.5/24"), std::nullopt});
    return r;
  };
  Outcome o = RunSkel(f, BaseEnv("ADD"), Conf("1.0.0"));
  REQUIRE(o.rc == 0);
  CHECK(o.json()["interfaces"][0]["name"] == "eth\xef\xbf\xbd");  // U+FFFD
}

TEST_CASE("skel: a configuration nested 100,000 levels deep is a decoding failure", "[skel]") {
  Recorder rec;
  std::string deep = Conf("1.0.0", ",\"x\":" + std::string(100000, '[') + std::string(100000, ']'));
  Outcome o = RunSkel(RecordingFuncs(rec), BaseEnv("ADD"), deep);
  RequireError(o, 6);
  CHECK(rec.calls.empty());
  // Brackets inside strings do not count; a few real levels are fine.
  CHECK(RunSkel(RecordingFuncs(rec), BaseEnv("ADD"), Conf("1.0.0", ",\"x\":\"" + std::string(1000, '[') + "\"")).rc == 0);
}

namespace {

struct TypedConfig {
  int mtu = 0;
  static absl::StatusOr<TypedConfig> Parse(const cni::CmdArgs& args) {
    TypedConfig c;
    if (const cni::Json* m = cni::FindKey(args.conf.raw, "mtu"); m != nullptr) {
      if (!m->is_number_integer()) return cni::Error(cni::ErrorCode::kDecodingFailure, "mtu");
      c.mtu = m->get<int>();
    }
    return c;
  }
};

}  // namespace

TEST_CASE("skel: typed handlers get the configuration parsed once, before they run", "[skel]") {
  std::vector<std::string> seen;
  cni::TypedPluginFuncs<TypedConfig> typed;
  typed.add = [&](const cni::CmdArgs&, const TypedConfig& c) -> absl::StatusOr<cni::Result> {
    seen.push_back("ADD " + std::to_string(c.mtu));
    cni::Result r;
    r.ips.push_back({std::nullopt, *cni::net::IpPrefix::Parse("10.0.0.5/24"), std::nullopt});
    return r;
  };
  typed.del = [&](const cni::CmdArgs&, const TypedConfig& c) {
    seen.push_back("DEL " + std::to_string(c.mtu));
    return absl::OkStatus();
  };
  cni::PluginFuncs f = cni::Typed<TypedConfig>(typed);
  CHECK(RunSkel(f, BaseEnv("ADD"), Conf("1.0.0", ",\"mtu\":1400")).rc == 0);
  CHECK(RunSkel(f, BaseEnv("DEL"), Conf("1.0.0", ",\"mtu\":9000")).rc == 0);
  RequireError(RunSkel(f, BaseEnv("ADD"), Conf("1.0.0", ",\"mtu\":\"x\"")), 6);
  CHECK(seen == std::vector<std::string>{"ADD 1400", "DEL 9000"});
  // No handler: the command still validates the configuration, then succeeds.
  CHECK(RunSkel(f, BaseEnv("CHECK"), Conf("1.0.0", ",\"mtu\":1400")).rc == 0);
  RequireError(RunSkel(f, BaseEnv("STATUS"), Conf("1.1.0", ",\"mtu\":\"x\"")), 6);
  CHECK(seen.size() == 2);
  // A plugin without ADD still answers code 4 for it.
  cni::TypedPluginFuncs<TypedConfig> no_add;
  RequireError(RunSkel(cni::Typed<TypedConfig>(no_add), BaseEnv("ADD"), Conf("1.0.0")), 4);
}

// cni/plugin/config_schema.h: keys declared as data, one parser, uniform messages.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "cni/plugin/config_schema.h"
#include "cni/plugin/plugin_keys.h"

namespace {

namespace config = cni::config;

struct Sample {
  std::string bridge = "cni0";
  bool hairpin = false;
  int vlan = 0;
  std::optional<int> table;
  std::string backend;
  std::vector<std::string> names;
  int mtu = 0;
  int doubled = 0;
};

const config::Schema<Sample>& Keys() {
  static const config::Schema<Sample> keys = {
      config::String("bridge", &Sample::bridge, /*empty_keeps_default=*/true),
      config::Bool("hairpinMode", &Sample::hairpin),
      config::Integer("vlan", &Sample::vlan, {0, 4094}),
      config::Integer("table", &Sample::table, {1, 1000}),
      config::OneOf("backend", &Sample::backend, {"iptables", "nftables"}),
      config::StringList("names", &Sample::names),
      config::Parsed("mtu", &Sample::mtu, cni::ParseVethMtuKey),
      config::Custom("doubled", &Sample::doubled, [](const cni::Json& v) -> absl::StatusOr<int> {
        if (!v.is_number_integer()) return cni::Error(cni::ErrorCode::kDecodingFailure, "not a number");
        return 2 * v.get<int>();
      }),
  };
  return keys;
}

absl::StatusOr<Sample> ParseSample(const std::string& text) {
  Sample s;
  absl::Status st = config::ParseKeys(cni::Json::parse(text), Keys(), "test", s);
  if (!st.ok()) return st;
  return s;
}

}  // namespace

TEST_CASE("config schema: present keys fill their fields, absent and null keep defaults", "[unit][config]") {
  absl::StatusOr<Sample> s = ParseSample(
      R"({"BRIDGE":"br1","hairpinMode":true,"vlan":10,"table":null,"backend":"nftables",)"
      R"("names":["a","b"],"mtu":1400,"doubled":21})");
  REQUIRE(s.ok());
  CHECK(s->bridge == "br1");  // keys match case-insensitively
  CHECK(s->hairpin);
  CHECK(s->vlan == 10);
  CHECK(s->table == std::nullopt);
  CHECK(s->backend == "nftables");
  CHECK(s->names == std::vector<std::string>{"a", "b"});
  CHECK(s->mtu == 1400);
  CHECK(s->doubled == 42);
  absl::StatusOr<Sample> empty = ParseSample(R"({"bridge":""})");
  REQUIRE(empty.ok());
  CHECK(empty->bridge == "cni0");
}

TEST_CASE("config schema: wrong types are code 6, bad values code 7, with uniform messages", "[unit][config]") {
  auto fails = [](const std::string& text, int code, const std::string& msg) {
    absl::StatusOr<Sample> s = ParseSample(text);
    INFO(text);
    REQUIRE_FALSE(s.ok());
    CHECK(cni::CodeOf(s.status()) == code);
    CHECK(s.status().message() == msg);
  };
  fails(R"({"vlan":"10"})", 6, R"(test: cannot decode "vlan": expected integer, got string)");
  fails(R"({"hairpinMode":1})", 6, R"(test: cannot decode "hairpinMode": expected bool, got number)");
  fails(R"({"vlan":5000})", 7, R"(test: "vlan" must be between 0 and 4094, not 5000)");
  fails(R"({"table":0})", 7, R"(test: "table" must be between 1 and 1000, not 0)");
  fails(R"({"backend":"pf"})", 7, R"(test: "backend" must be one of "iptables", "nftables", not "pf")");
  fails(R"({"names":[1]})", 6, R"(test: cannot decode "names": expected list of strings, got number)");
  fails(R"({"mtu":9})", 7, "test: mtu 9 is out of range (68-65535, or 0 for the default)");
  fails(R"({"doubled":"x"})", 6, "test: not a number");
}

TEST_CASE("config schema: a Parsed row's parser sees only the key its row names", "[unit][config]") {
  struct Seen {
    std::string mode;
    int mtu = 0;
  };
  const config::Schema<Seen> keys = {
      config::Parsed("mode", &Seen::mode, [](const config::Field& key) -> absl::StatusOr<std::string> {
        CHECK(key.name() == "mode");
        CNI_ASSIGN_OR_RETURN(std::optional<std::string> v, key.AsString());
        return v.value_or("default");
      }),
      config::Parsed("mtu", &Seen::mtu, cni::ParseVethMtuKey),
  };
  Seen s;
  REQUIRE(config::ParseKeys(cni::Json{{"Mode", "l3"}, {"mtu", 1400}, {"other", 1}}, keys, "test", s).ok());
  CHECK(s.mode == "l3");
  CHECK(s.mtu == 1400);
  Seen absent;
  REQUIRE(config::ParseKeys(cni::Json{{"mtu", 1400}}, keys, "test", absent).ok());
  CHECK(absent.mode == "default");  // "mtu" is there, but not this row's key
  CHECK(config::KeyNames(keys) == std::vector<std::string>{"mode", "mtu"});
  CHECK(config::KeyNames(Keys()) ==
        std::vector<std::string>{"bridge", "hairpinMode", "vlan", "table", "backend", "names", "mtu", "doubled"});
}

// The header's example is ptp's table as it is: every line of it between
// "kKeys = {" and "};" is a line of plugins/ptp/config.cc.
TEST_CASE("config schema: the header's example is a real table", "[unit][config]") {
  auto read = [](const std::string& path) {
    std::ifstream in(std::string(CNI_TEST_SOURCE_DIR) + "/" + path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  };
  const std::string header = read("sdk/include/cni/plugin/config_schema.h");
  const std::string ptp = read("plugins/ptp/config.cc");
  REQUIRE_FALSE(ptp.empty());
  std::vector<std::string> example;
  bool in_table = false;
  std::istringstream lines(header);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("//   ", 0) != 0) continue;
    std::string code = line.substr(5);
    if (code.find("kKeys = {") != std::string::npos) in_table = true;
    if (in_table) example.push_back(code);
    if (in_table && code == "};") break;
  }
  REQUIRE(example.size() >= 3);
  for (const std::string& code : example) {
    INFO(code);
    CHECK(ptp.find("\n" + code + "\n") != std::string::npos);
  }
}

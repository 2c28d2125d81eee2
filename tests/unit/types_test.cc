// NetConf parsing and the Dns value type.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include "cni/base/error.h"
#include "cni/protocol/types.h"

namespace cni {
namespace {

std::string ReadSpecExample(const std::string& name) {
  std::ifstream in(std::string(CNI_TEST_DATA_DIR) + "/spec-examples/" + name);
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

NetConf MustParse(const std::string& text) {
  absl::StatusOr<NetConf> conf = NetConf::Parse(text);
  INFO("config: " << text);
  REQUIRE(conf.ok());
  return *conf;
}

void RequireDecodingFailure(const std::string& text, const std::string& key) {
  absl::StatusOr<NetConf> conf = NetConf::Parse(text);
  INFO("config: " << text);
  REQUIRE_FALSE(conf.ok());
  CHECK(CodeOf(conf.status()) == 6);
  CHECK_THAT(std::string(conf.status().message()), Catch::Contains(key));
}

}  // namespace

TEST_CASE("NetConf::Parse reads the spec's bridge example", "[types]") {
  NetConf conf = MustParse(ReadSpecExample("bridge-add-config.json"));
  CHECK(conf.cni_version == "1.0.0");
  CHECK(conf.name == "dbnet");
  CHECK(conf.type == "bridge");
  CHECK(conf.ipam_type == "host-local");
  CHECK(conf.ipam["subnet"] == "10.1.0.0/16");
  REQUIRE(conf.dns.has_value());
  CHECK(conf.dns->nameservers == std::vector<std::string>{"10.1.0.1"});
  CHECK(conf.prev_result.is_null());
  CHECK(conf.runtime_config == Json::object());
  CHECK(conf.args == Json::object());
  CHECK(conf.capabilities.empty());
  CHECK(conf.valid_attachments.empty());
  // Plugin-specific keys stay in raw.
  CHECK(conf.raw["bridge"] == "cni0");
  CHECK(conf.raw["keyA"].size() == 3);
}

TEST_CASE("NetConf::Parse keeps prevResult and runtimeConfig raw", "[types]") {
  NetConf conf = MustParse(ReadSpecExample("tuning-add-config.json"));
  CHECK(conf.type == "tuning");
  CHECK(conf.runtime_config["mac"] == "00:11:22:33:44:66");
  REQUIRE(conf.prev_result.is_object());
  CHECK(conf.prev_result["interfaces"].size() == 3);
  CHECK(conf.prev_result == conf.raw["prevResult"]);
  CHECK(conf.raw["sysctl"]["net.core.somaxconn"] == "500");

  NetConf portmap = MustParse(ReadSpecExample("portmap-add-config.json"));
  CHECK(portmap.runtime_config["portMappings"][0]["hostPort"] == 8080);
}

TEST_CASE("NetConf::Parse: every well-known key", "[types]") {
  NetConf conf = MustParse(R"({
    "cniVersion": "1.1.0",
    "cniVersions": ["1.0.0", "1.1.0"],
    "name": "net1",
    "type": "ptp",
    "capabilities": {"portMappings": true, "mac": false},
    "runtimeConfig": {"mac": "0a:58:00:00:00:01"},
    "args": {"cni": {"ips": ["10.0.0.5/24"]}},
    "ipam": {"type": "static", "addresses": []},
    "dns": {"nameservers": ["1.1.1.1"], "domain": "d", "search": ["s"], "options": ["o"]},
    "cni.dev/valid-attachments": [
      {"containerID": "c1", "ifname": "eth0"},
      {"containerID": "c2", "ifname": "net1"}
    ]
  })");
  CHECK(conf.cni_versions == std::vector<std::string>{"1.0.0", "1.1.0"});
  CHECK(conf.capabilities == std::map<std::string, bool>{{"mac", false}, {"portMappings", true}});
  CHECK(conf.args["cni"]["ips"][0] == "10.0.0.5/24");
  CHECK(conf.ipam_type == "static");
  REQUIRE(conf.dns.has_value());
  CHECK(*conf.dns == Dns{{"1.1.1.1"}, "d", {"s"}, {"o"}});
  CHECK(conf.valid_attachments ==
        std::vector<Attachment>{{"c1", "eth0"}, {"c2", "net1"}});
}

TEST_CASE("NetConf::Parse: missing keys take their defaults", "[types]") {
  NetConf conf = MustParse("{}");
  CHECK(conf.cni_version.empty());  // "" means 0.1.0; skel decides
  CHECK(conf.name.empty());
  CHECK(conf.type.empty());
  CHECK(conf.ipam == Json::object());
  CHECK(conf.ipam_type.empty());
  CHECK_FALSE(conf.dns.has_value());
  CHECK(conf.prev_result.is_null());
  CHECK(conf.raw == Json::object());
}

TEST_CASE("NetConf::Parse: null values count as absent, as in Go", "[types]") {
  NetConf conf = MustParse(R"({"cniVersion": null, "name": null, "ipam": null, "dns": null,
                               "prevResult": null, "runtimeConfig": null, "args": null,
                               "capabilities": null, "cni.dev/valid-attachments": null})");
  CHECK(conf.cni_version.empty());
  CHECK(conf.ipam == Json::object());
  CHECK_FALSE(conf.dns.has_value());
  CHECK(conf.prev_result.is_null());
  CHECK(conf.runtime_config == Json::object());
}

TEST_CASE("NetConf::Parse matches keys case-insensitively", "[types]") {
  NetConf conf = MustParse(R"({
    "CNIVERSION": "0.4.0", "Name": "n", "TYPE": "bridge",
    "Capabilities": {"portMappings": true},
    "RuntimeConfig": {"a": 1}, "ARGS": {"b": 2},
    "PrevResult": {"cniVersion": "0.4.0"},
    "IPAM": {"Type": "host-local"},
    "DNS": {"NameServers": ["8.8.8.8"], "DOMAIN": "x", "Search": ["y"], "OPTIONS": ["z"]},
    "CNI.dev/Valid-Attachments": [{"CONTAINERID": "c", "IfName": "eth0"}]
  })");
  CHECK(conf.cni_version == "0.4.0");
  CHECK(conf.name == "n");
  CHECK(conf.type == "bridge");
  CHECK(conf.capabilities.at("portMappings"));
  CHECK(conf.runtime_config["a"] == 1);
  CHECK(conf.args["b"] == 2);
  CHECK(conf.prev_result["cniVersion"] == "0.4.0");
  CHECK(conf.ipam_type == "host-local");
  REQUIRE(conf.dns.has_value());
  CHECK(*conf.dns == Dns{{"8.8.8.8"}, "x", {"y"}, {"z"}});
  CHECK(conf.valid_attachments == std::vector<Attachment>{{"c", "eth0"}});
}

TEST_CASE("NetConf::Parse prefers the exact key over a case-folded one", "[types]") {
  NetConf conf = MustParse(R"({"Name": "folded", "name": "exact"})");
  CHECK(conf.name == "exact");
}

TEST_CASE("NetConf::Parse preserves unknown keys exactly in raw", "[types]") {
  const std::string text = R"({
    "cniVersion": "1.0.0", "name": "n", "type": "bridge",
    "bridge": "br0", "isGateway": true, "mtu": 9000, "hairpinMode": false,
    "big": 18446744073709551615, "neg": -42, "ratio": 0.25,
    "nested": {"list": [1, "two", null, {"deep": [true]}], "empty": {}},
    "unicode": "caf\u00e9 \u2603", "escaped": "a\"b\\c\n",
    "cni.dev/future": {"x": 1}
  })";
  NetConf conf = MustParse(text);
  absl::StatusOr<Json> original = ParseJson(text);
  REQUIRE(original.ok());
  CHECK(conf.raw == *original);
  CHECK(conf.raw["big"].get<uint64_t>() == UINT64_MAX);
  CHECK(conf.raw["neg"] == -42);
  CHECK(conf.raw["unicode"] == "caf\u00e9 \u2603");
  CHECK(conf.raw["nested"]["list"][3]["deep"][0] == true);
  // Dumped and re-parsed, the document is unchanged.
  absl::StatusOr<Json> again = ParseJson(Dump(conf.raw));
  REQUIRE(again.ok());
  CHECK(*again == *original);
}

TEST_CASE("NetConf::Parse: wrong types are code 6 naming the key", "[types]") {
  RequireDecodingFailure(R"({"cniVersion": 1})", "cniVersion");
  RequireDecodingFailure(R"({"cniVersions": "1.0.0"})", "cniVersions");
  RequireDecodingFailure(R"({"cniVersions": ["1.0.0", 1]})", "cniVersions");
  RequireDecodingFailure(R"({"name": ["n"]})", "name");
  RequireDecodingFailure(R"({"type": true})", "type");
  RequireDecodingFailure(R"({"capabilities": []})", "capabilities");
  RequireDecodingFailure(R"({"capabilities": {"mac": "yes"}})", "capabilities");
  RequireDecodingFailure(R"({"runtimeConfig": "x"})", "runtimeConfig");
  RequireDecodingFailure(R"({"args": []})", "args");
  RequireDecodingFailure(R"({"prevResult": "x"})", "prevResult");
  RequireDecodingFailure(R"({"ipam": "host-local"})", "ipam");
  RequireDecodingFailure(R"({"ipam": {"type": 5}})", "type");
  RequireDecodingFailure(R"({"dns": []})", "dns");
  RequireDecodingFailure(R"({"dns": {"nameservers": "8.8.8.8"}})", "nameservers");
  RequireDecodingFailure(R"({"dns": {"domain": 1}})", "domain");
  RequireDecodingFailure(R"({"dns": {"search": [1]}})", "search");
  RequireDecodingFailure(R"({"dns": {"options": {}}})", "options");
  RequireDecodingFailure(R"({"cni.dev/valid-attachments": {}})", "cni.dev/valid-attachments");
  RequireDecodingFailure(R"({"cni.dev/valid-attachments": ["c1"]})", "cni.dev/valid-attachments[0]");
  RequireDecodingFailure(R"({"cni.dev/valid-attachments": [{"containerID": 1}]})", "containerID");
  RequireDecodingFailure(R"({"cni.dev/valid-attachments": [{"ifname": false}]})", "ifname");
}

TEST_CASE("NetConf::Parse: malformed JSON and non-objects are code 6", "[types]") {
  for (const char* bad : {"", "{", "not json", R"({"name": "n",})", "[]", "\"str\"", "42", "null"}) {
    absl::StatusOr<NetConf> conf = NetConf::Parse(bad);
    INFO("config: " << bad);
    REQUIRE_FALSE(conf.ok());
    CHECK(CodeOf(conf.status()) == 6);
  }
}

TEST_CASE("Dns::FromJson and ToJson", "[types]") {
  absl::StatusOr<Json> j = ParseJson(
      R"({"nameservers": ["10.0.0.1", "fd00::1"], "domain": "example.com",
          "search": ["a.example.com"], "options": ["ndots:5", "timeout:1"], "extra": 1})");
  REQUIRE(j.ok());
  absl::StatusOr<Dns> dns = Dns::FromJson(*j);
  REQUIRE(dns.ok());
  CHECK(dns->nameservers == std::vector<std::string>{"10.0.0.1", "fd00::1"});
  CHECK(dns->domain == "example.com");
  CHECK(dns->search == std::vector<std::string>{"a.example.com"});
  CHECK(dns->options == std::vector<std::string>{"ndots:5", "timeout:1"});
  CHECK_FALSE(dns->empty());
  // ToJson drops unknown keys and nothing else.
  Json expected = *j;
  expected.erase("extra");
  CHECK(dns->ToJson() == expected);

  absl::StatusOr<Dns> again = Dns::FromJson(dns->ToJson());
  REQUIRE(again.ok());
  CHECK(*again == *dns);
}

TEST_CASE("Dns::ToJson omits empty fields", "[types]") {
  CHECK(Dns{}.empty());
  CHECK(Dns{}.ToJson() == Json::object());
  Dns only_domain;
  only_domain.domain = "d";
  CHECK_FALSE(only_domain.empty());
  CHECK(only_domain.ToJson() == Json{{"domain", "d"}});
  Dns only_search;
  only_search.search = {"s"};
  CHECK(Dns::FromJson(Json::object())->empty());
  CHECK(only_search.ToJson().size() == 1);
}

TEST_CASE("Dns::FromJson rejects non-objects", "[types]") {
  for (const Json& bad : {Json::array(), Json("x"), Json(1)}) {
    absl::StatusOr<Dns> dns = Dns::FromJson(bad);
    REQUIRE_FALSE(dns.ok());
    CHECK(CodeOf(dns.status()) == 6);
  }
}

}  // namespace cni

namespace cni {

// The configuration's "dns" has upstream's meaning (bridge's and ptp's
// dnsConfSet) for every plugin: it counts only when it sets a field, and then
// it replaces IPAM's dns in the result.
TEST_CASE("Dns::FromConfig: only a dns that sets a field counts", "[unit][types]") {
  CHECK_FALSE(Dns::FromConfig(Json::object())->has_value());
  // An empty domain does not count; an empty list does (upstream: non-nil).
  CHECK_FALSE(Dns::FromConfig(Json{{"domain", ""}})->has_value());
  CHECK_FALSE(Dns::FromConfig(Json{{"search", nullptr}})->has_value());
  for (const char* list : {"nameservers", "search", "options"}) {
    absl::StatusOr<std::optional<Dns>> empty_list = Dns::FromConfig(Json{{list, Json::array()}});
    REQUIRE(empty_list.ok());
    CHECK(*empty_list == Dns());
  }
  absl::StatusOr<std::optional<Dns>> full =
      Dns::FromConfig(Json{{"Nameservers", {"10.0.0.53"}}, {"domain", "cluster.local"}});
  REQUIRE(full.ok());
  CHECK(*full == Dns{{"10.0.0.53"}, "cluster.local", {}, {}});
  CHECK(*Dns::FromConfig(Json{{"domain", "d"}}) == Dns{{}, "d", {}, {}});

  absl::StatusOr<std::optional<Dns>> bad = Dns::FromConfig(Json("8.8.8.8"));
  REQUIRE_FALSE(bad.ok());
  CHECK(cni::CodeOf(bad.status()) == 6);
  CHECK(cni::CodeOf(Dns::FromConfig(Json{{"search", "x"}}).status()) == 6);
}

TEST_CASE("NetConf::Parse: dns that sets no field is no dns", "[unit][types]") {
  CHECK_FALSE(MustParse(R"({"dns": {}})").dns.has_value());
  CHECK_FALSE(MustParse(R"({"dns": {"domain": ""}})").dns.has_value());
  CHECK(MustParse(R"({"dns": {"search": []}})").dns == Dns());
  CHECK(MustParse(R"({"dns": {"domain": "d"}})").dns == Dns{{}, "d", {}, {}});
}

}  // namespace cni

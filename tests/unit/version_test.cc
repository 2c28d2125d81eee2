// Versions, result parsing for every version's shape, and conversion between
// every pair of versions against the golden files in tests/testdata/results
// (see the README there for the layout and the expected-file rule).
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include "cni/base/error.h"
#include "cni/protocol/version.h"

namespace cni {
namespace {

Json ReadJson(const std::string& relative) {
  std::string path = std::string(CNI_TEST_DATA_DIR) + "/" + relative;
  INFO("file: " << path);
  std::ifstream in(path);
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  absl::StatusOr<Json> j = ParseJson(ss.str());
  REQUIRE(j.ok());
  return *j;
}

Json Golden(const std::string& relative) { return ReadJson("results/" + relative); }

Result MustParseResult(const Json& j, absl::string_view default_version = {}) {
  absl::StatusOr<Result> r = ParseResult(j, default_version);
  INFO("result: " << Dump(j) << "\nstatus: " << r.status());
  REQUIRE(r.ok());
  return *r;
}

Json MustPrint(const Result& r, absl::string_view version) {
  absl::StatusOr<Json> j = ResultToJson(r, version);
  INFO("version: " << std::string(version) << "\nstatus: " << j.status());
  REQUIRE(j.ok());
  return *j;
}

bool IsLegacy(const std::string& v) { return v == "0.1.0" || v == "0.2.0"; }

// The expected file for converting full/<from> to <to> (results/README.md).
std::string ExpectedGolden(const std::string& from, const std::string& to) {
  if (IsLegacy(to)) return "full/" + to + ".json";
  if (IsLegacy(from)) return "upconverted-from-0.2/" + to + ".json";
  if (to == "1.1.0" && from != "1.1.0") return "upconverted-from-1.0/1.1.0.json";
  return "full/" + to + ".json";
}

absl::Status ParseResultStatus(const std::string& text, absl::string_view default_version = {}) {
  return ParseResult(absl::string_view(text), default_version).status();
}

}  // namespace

// ---------------------------------------------------------------------------
// Versions

TEST_CASE("AllVersions lists every supported version, oldest first", "[version]") {
  CHECK(AllVersions() ==
        std::vector<std::string>{"0.1.0", "0.2.0", "0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"});
  CHECK(kCurrentVersion == "1.1.0");
  for (size_t i = 1; i < AllVersions().size(); ++i) {
    CHECK(CompareVersions(AllVersions()[i - 1], AllVersions()[i]) < 0);
  }
}

TEST_CASE("ParseVersion", "[version]") {
  CHECK(*ParseVersion("1.1.0") == SemVer{1, 1, 0});
  CHECK(*ParseVersion("0.3.1") == SemVer{0, 3, 1});
  CHECK(*ParseVersion("10.20.30") == SemVer{10, 20, 30});
  CHECK(*ParseVersion("") == SemVer{0, 1, 0});  // spec: no version means 0.1.0
  // Upstream's ParseVersion fills missing parts with zero.
  CHECK(*ParseVersion("1") == SemVer{1, 0, 0});
  CHECK(*ParseVersion("0.4") == SemVer{0, 4, 0});
  for (const char* bad : {"1.0.0.0", "a.b.c", "1..0", "1.0.", ".1.0", "v1.0.0", "-1.0.0", "1.0.0-rc1",
                          " 1.0.0", "99999999999.0.0"}) {
    INFO("version: " << bad);
    absl::StatusOr<SemVer> v = ParseVersion(bad);
    REQUIRE_FALSE(v.ok());
    CHECK(CodeOf(v.status()) == 1);
  }
}

TEST_CASE("CompareVersions and VersionAtLeast", "[version]") {
  CHECK(CompareVersions("0.3.1", "0.4.0") < 0);
  CHECK(CompareVersions("1.0.0", "0.4.0") > 0);
  CHECK(CompareVersions("1.0.0", "1.0.0") == 0);
  CHECK(CompareVersions("0.10.0", "0.9.0") > 0);  // numeric, not lexical
  CHECK(CompareVersions("", "0.1.0") == 0);
  CHECK(CompareVersions("bogus", "0.1.0") < 0);  // malformed sorts first
  CHECK(CompareVersions("0.1.0", "bogus") > 0);
  CHECK(CompareVersions("bogus", "bogus") == 0);

  CHECK(VersionAtLeast("0.4.0", "0.4.0"));
  CHECK(VersionAtLeast("1.1.0", "0.4.0"));
  CHECK_FALSE(VersionAtLeast("0.3.1", "0.4.0"));
  CHECK(VersionAtLeast("", "0.1.0"));
  CHECK_FALSE(VersionAtLeast("bogus", "0.1.0"));
  CHECK_FALSE(VersionAtLeast("1.0.0", "bogus"));
}

TEST_CASE("VersionInfoJson", "[version]") {
  Json j = VersionInfoJson("1.0.0", AllVersions());
  CHECK(j == Json{{"cniVersion", "1.0.0"},
                  {"supportedVersions",
                   {"0.1.0", "0.2.0", "0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"}}});
  CHECK(VersionInfoJson("", {"1.0.0"}) ==
        Json{{"cniVersion", "1.1.0"}, {"supportedVersions", {"1.0.0"}}});
}

// ---------------------------------------------------------------------------
// Parsing each shape

TEST_CASE("ParseResult reads the 1.1.0 model", "[version][result]") {
  Result r = MustParseResult(Golden("full/1.1.0.json"));
  CHECK(r.cni_version == "1.1.0");
  REQUIRE(r.interfaces.size() == 3);
  CHECK(r.interfaces[0] == Interface{"cni0", "00:11:22:33:44:55", std::nullopt, "", "", ""});
  CHECK(r.interfaces[1].mtu == 1500);
  CHECK(r.interfaces[2] == Interface{"eth0", "99:88:77:66:55:44", 1450, "/var/run/netns/blue",
                                     "/run/vhost/eth0.sock", "0000:03:00.1"});
  REQUIRE(r.ips.size() == 4);
  CHECK(r.ips[0].interface == 2);
  CHECK(r.ips[0].address.ToString() == "10.1.0.5/16");
  CHECK(r.ips[0].gateway->ToString() == "10.1.0.1");
  CHECK(r.ips[1].address.ToString() == "2001:db8:1::5/64");
  CHECK(r.ips[2].interface == 0);
  CHECK_FALSE(r.ips[2].gateway.has_value());
  CHECK_FALSE(r.ips[3].interface.has_value());
  REQUIRE(r.routes.size() == 4);
  CHECK(r.routes[0].dst.ToString() == "0.0.0.0/0");
  CHECK_FALSE(r.routes[0].gw.has_value());
  const Route& rich = r.routes[2];
  CHECK(rich.gw->ToString() == "10.1.0.254");
  CHECK(rich.mtu == 1400);
  CHECK(rich.advmss == 1360);
  CHECK(rich.priority == 100);
  CHECK(rich.table == 10);
  CHECK(rich.scope == 0);
  CHECK(r.routes[3].scope == 253);
  CHECK_FALSE(r.routes[3].table.has_value());
  CHECK(r.dns.nameservers == std::vector<std::string>{"10.1.0.1", "2001:db8:1::1"});
  CHECK(r.dns.domain == "example.com");
}

TEST_CASE("ParseResult reads the 0.2.0 ip4/ip6 shape", "[version][result]") {
  for (const char* v : {"0.1.0", "0.2.0"}) {
    INFO("version " << v);
    Result r = MustParseResult(Golden(std::string("full/") + v + ".json"));
    CHECK(r.cni_version == v);
    CHECK(r.interfaces.empty());
    REQUIRE(r.ips.size() == 2);
    CHECK(r.ips[0].address.ToString() == "10.1.0.5/16");
    CHECK_FALSE(r.ips[0].interface.has_value());
    CHECK(r.ips[1].gateway->ToString() == "2001:db8:1::1");
    // IPv4 routes first, then IPv6, as upstream's up-converter orders them.
    REQUIRE(r.routes.size() == 4);
    CHECK(r.routes[0].dst.ToString() == "0.0.0.0/0");
    CHECK(r.routes[1].dst.ToString() == "192.168.0.0/16");
    CHECK(r.routes[2].dst.ToString() == "::/0");
    CHECK(r.routes[3].dst.ToString() == "fd00::/8");
    CHECK(r.dns.options == std::vector<std::string>{"ndots:5"});
  }
}

TEST_CASE("ParseResult reads the 0.3.x/0.4.0 shape with per-IP version", "[version][result]") {
  for (const char* v : {"0.3.0", "0.3.1", "0.4.0"}) {
    INFO("version " << v);
    Result r = MustParseResult(Golden(std::string("full/") + v + ".json"));
    CHECK(r.cni_version == v);
    CHECK(r.interfaces.size() == 3);
    CHECK(r.ips.size() == 4);
    CHECK(r.routes.size() == 4);
    // The same content as the 1.0.0 file, apart from the version.
    Result modern = MustParseResult(Golden("full/1.0.0.json"));
    modern.cni_version = v;
    CHECK(r == modern);
  }
}

TEST_CASE("ParseResult: version from the document, else the default, else 0.1.0",
          "[version][result]") {
  Json no_version = Golden("full/1.0.0.json");
  no_version.erase("cniVersion");
  CHECK(MustParseResult(no_version, "1.0.0").cni_version == "1.0.0");
  CHECK(MustParseResult(no_version, "0.4.0").cni_version == "0.4.0");
  // An empty cniVersion counts as absent.
  no_version["cniVersion"] = "";
  CHECK(MustParseResult(no_version, "1.1.0").cni_version == "1.1.0");
  // The document's own version wins over the default.
  CHECK(MustParseResult(Golden("full/0.4.0.json"), "1.0.0").cni_version == "0.4.0");
  // No version anywhere: 0.1.0, so the ip4/ip6 shape.
  Json legacy = Golden("full/0.2.0.json");
  legacy.erase("cniVersion");
  Result r = MustParseResult(legacy);
  CHECK(r.cni_version == "0.1.0");
  CHECK(r.ips.size() == 2);
}

TEST_CASE("ParseResult matches keys case-insensitively", "[version][result]") {
  Result r = MustParseResult(Json::parse(R"({
    "CNIVersion": "1.1.0",
    "Interfaces": [{"NAME": "eth0", "Mac": "aa:bb:cc:dd:ee:ff", "MTU": 9000,
                    "SocketPath": "/s", "PCIID": "0000:00:01.0", "SANDBOX": "/ns"}],
    "IPs": [{"Interface": 0, "ADDRESS": "10.0.0.2/24", "Gateway": "10.0.0.1"}],
    "Routes": [{"DST": "0.0.0.0/0", "GW": "10.0.0.1", "AdvMSS": 1400, "Table": 5}],
    "DNS": {"Nameservers": ["10.0.0.53"]}
  })"));
  CHECK(r.interfaces.at(0) == Interface{"eth0", "aa:bb:cc:dd:ee:ff", 9000, "/ns", "/s", "0000:00:01.0"});
  CHECK(r.ips.at(0).address.ToString() == "10.0.0.2/24");
  CHECK(r.routes.at(0).advmss == 1400);
  CHECK(r.routes.at(0).table == 5);
  CHECK(r.dns.nameservers.at(0) == "10.0.0.53");

  Result legacy = MustParseResult(Json::parse(
      R"({"cniVersion": "0.2.0", "IP4": {"IP": "10.0.0.2/24", "Routes": [{"Dst": "0.0.0.0/0"}]}})"));
  CHECK(legacy.ips.size() == 1);
  CHECK(legacy.routes.size() == 1);
}

TEST_CASE("ParseResult: an empty gateway string is absent, as Go decodes it", "[version][result]") {
  Result r = MustParseResult(Json::parse(
      R"({"cniVersion": "1.0.0", "ips": [{"address": "10.0.0.2/24", "gateway": ""}],
          "routes": [{"dst": "0.0.0.0/0", "gw": ""}]})"));
  CHECK_FALSE(r.ips.at(0).gateway.has_value());
  CHECK_FALSE(r.routes.at(0).gw.has_value());
}

TEST_CASE("ParseResult: unsupported versions are code 1", "[version][result]") {
  for (const char* v : {"0.5.0", "2.0.0", "1.0", "bogus"}) {
    INFO("version " << v);
    absl::StatusOr<Result> r = ParseResult(Json{{"cniVersion", v}});
    REQUIRE_FALSE(r.ok());
    CHECK(CodeOf(r.status()) == 1);
    CHECK_THAT(std::string(r.status().message()), Catch::Contains(v));
  }
  CHECK(CodeOf(ParseResult(Json::object(), "9.9.9").status()) == 1);
}

TEST_CASE("ParseResult: malformed JSON and wrong types are code 6 naming the key",
          "[version][result]") {
  struct Case {
    const char* doc;
    const char* key;
  };
  for (const Case& c : {
           Case{R"(not json)", "invalid JSON"},
           Case{R"([])", "object"},
           Case{R"({"cniVersion": 1})", "cniVersion"},
           Case{R"({"cniVersion": "1.0.0", "interfaces": {}})", "interfaces"},
           Case{R"({"cniVersion": "1.0.0", "interfaces": ["eth0"]})", "interfaces[0]"},
           Case{R"({"cniVersion": "1.0.0", "interfaces": [{"name": 1}]})", "name"},
           Case{R"({"cniVersion": "1.1.0", "interfaces": [{"name": "e", "mtu": "1500"}]})", "mtu"},
           Case{R"({"cniVersion": "1.0.0", "ips": [{"address": 5}]})", "address"},
           Case{R"({"cniVersion": "1.0.0", "ips": [{"address": "10.0.0.1"}]})", "address"},
           Case{R"({"cniVersion": "1.0.0", "ips": [{}]})", "address"},
           Case{R"({"cniVersion": "1.0.0", "ips": [{"address": "10.0.0.1/24", "gateway": "x"}]})",
                "gateway"},
           Case{R"({"cniVersion": "1.0.0", "ips": [{"address": "10.0.0.1/24", "interface": "2"}]})",
                "interface"},
           Case{R"({"cniVersion": "1.0.0", "ips": [{"address": "10.0.0.1/24", "interface": 1.5}]})",
                "interface"},
           Case{R"({"cniVersion": "0.4.0", "ips": [{"version": 4, "address": "10.0.0.1/24"}]})",
                "version"},
           Case{R"({"cniVersion": "1.0.0", "routes": [{"gw": "10.0.0.1"}]})", "dst"},
           Case{R"({"cniVersion": "1.0.0", "routes": [{"dst": "0.0.0.0/0", "gw": "10.0.0"}]})", "gw"},
           Case{R"({"cniVersion": "1.1.0", "routes": [{"dst": "0.0.0.0/0", "table": 4294967296}]})",
                "table"},
           Case{R"({"cniVersion": "1.0.0", "dns": []})", "dns"},
           Case{R"({"cniVersion": "1.0.0", "dns": {"nameservers": [1]}})", "nameservers"},
           Case{R"({"cniVersion": "0.2.0", "ip4": "10.0.0.1/24"})", "ip4"},
           Case{R"({"cniVersion": "0.2.0", "ip4": {"gateway": "10.0.0.1"}})", "ip"},
           Case{R"({"cniVersion": "0.2.0", "ip6": {"ip": "fd00::1/64", "routes": {}}})", "routes"},
       }) {
    INFO("document: " << c.doc);
    absl::Status s = ParseResultStatus(c.doc);
    REQUIRE_FALSE(s.ok());
    CHECK(CodeOf(s) == 6);
    CHECK_THAT(std::string(s.message()), Catch::Contains(c.key));
  }
}

TEST_CASE("ParseResult ignores the other shapes' keys, like upstream", "[version][result]") {
  // A 1.0.0 result carrying 0.2.0 keys, and the reverse: unknown keys are skipped.
  Result modern = MustParseResult(Json::parse(
      R"({"cniVersion": "1.0.0", "ip4": {"ip": "10.0.0.1/24"}, "ips": [{"address": "10.0.0.2/24"}]})"));
  REQUIRE(modern.ips.size() == 1);
  CHECK(modern.ips[0].address.ToString() == "10.0.0.2/24");
  Result legacy = MustParseResult(Json::parse(
      R"({"cniVersion": "0.2.0", "ip4": {"ip": "10.0.0.1/24"}, "ips": [{"address": "10.0.0.2/24"}]})"));
  REQUIRE(legacy.ips.size() == 1);
  CHECK(legacy.ips[0].address.ToString() == "10.0.0.1/24");
}

// ---------------------------------------------------------------------------
// Conversion and round trips

TEST_CASE("every golden file prints back to itself at its own version", "[version][convert]") {
  for (const std::string& v : AllVersions()) {
    INFO("version " << v);
    Json golden = Golden("full/" + v + ".json");
    CHECK(MustPrint(MustParseResult(golden), v) == golden);
  }
}

TEST_CASE("conversion between every pair of versions matches the golden files",
          "[version][convert]") {
  for (const std::string& from : AllVersions()) {
    Json source = Golden("full/" + from + ".json");
    for (const std::string& to : AllVersions()) {
      std::string expected_file = ExpectedGolden(from, to);
      INFO(from << " -> " << to << ", expected " << expected_file);
      absl::StatusOr<Json> converted = ConvertResult(source, to);
      REQUIRE(converted.ok());
      CHECK(*converted == Golden(expected_file));
      // ResultToJson on the parsed model gives the same.
      CHECK(MustPrint(MustParseResult(source), to) == *converted);
    }
  }
}

TEST_CASE("round trips through another version keep what both can express",
          "[version][convert]") {
  // Down and back up: result(from) -> to -> from equals the golden file for
  // the information that survived the lower of the two versions.
  for (const std::string& from : AllVersions()) {
    for (const std::string& to : AllVersions()) {
      INFO(from << " -> " << to << " -> " << from);
      absl::StatusOr<Json> there = ConvertResult(Golden("full/" + from + ".json"), to);
      REQUIRE(there.ok());
      absl::StatusOr<Json> back = ConvertResult(*there, from);
      REQUIRE(back.ok());
      const std::string& lower = CompareVersions(from, to) <= 0 ? from : to;
      CHECK(*back == Golden(ExpectedGolden(lower, from)));
    }
  }
}

TEST_CASE("model round trip: Parse(ResultToJson(r, v)) == r at the richest versions",
          "[version][convert]") {
  Result r = MustParseResult(Golden("full/1.1.0.json"));
  Result again = MustParseResult(MustPrint(r, "1.1.0"));
  CHECK(again == r);
  Result r10 = MustParseResult(Golden("full/1.0.0.json"));
  for (const char* v : {"0.3.0", "0.3.1", "0.4.0", "1.0.0"}) {
    INFO("version " << v);
    Result back = MustParseResult(MustPrint(r10, v));
    back.cni_version = "1.0.0";
    CHECK(back == r10);
  }
}

TEST_CASE("converting to 0.1.0/0.2.0 takes the first IP of each family", "[version][convert]") {
  Json converted = MustPrint(MustParseResult(Golden("edge/ipv6-only-1.0.0.json")), "0.2.0");
  // No IPv4 address: the IPv4 default route has nowhere to go and is dropped.
  CHECK(converted == Golden("edge/ipv6-only-0.2.0.json"));
  CHECK_FALSE(converted.contains("ip4"));
}

TEST_CASE("converting to 0.1.0/0.2.0 without any IP fails with code 1", "[version][convert]") {
  Result r = MustParseResult(Golden("edge/no-ips-1.1.0.json"));
  for (const char* v : {"0.1.0", "0.2.0"}) {
    absl::StatusOr<Json> j = ResultToJson(r, v);
    REQUIRE_FALSE(j.ok());
    CHECK(CodeOf(j.status()) == 1);
    CHECK(j.status().message() == "cannot convert: no valid IP addresses");
  }
  // Every other version prints it fine.
  for (const char* v : {"0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"}) {
    CHECK(ResultToJson(r, v).ok());
  }
}

TEST_CASE("empty dns: omitted from 1.0.0 on, {} below as upstream prints it",
          "[version][convert]") {
  Result r = MustParseResult(Golden("edge/no-dns-1.0.0.json"));
  CHECK(MustPrint(r, "1.0.0") == Golden("edge/no-dns-1.0.0.json"));
  Json at11 = MustPrint(r, "1.1.0");
  CHECK_FALSE(at11.contains("dns"));
  CHECK(MustPrint(r, "0.4.0") == Golden("edge/no-dns-0.4.0.json"));
  CHECK(MustPrint(r, "0.2.0") == Golden("edge/no-dns-0.2.0.json"));
}

TEST_CASE("empty lists and unset fields are omitted", "[version][convert]") {
  Result r;
  IpConfig ip;
  ip.address = *net::IpPrefix::Parse("10.0.0.2/24");
  r.ips.push_back(ip);
  Interface intf;
  intf.name = "eth0";
  intf.mtu = 0;  // Go's omitempty drops a zero int
  r.interfaces.push_back(intf);
  Route route;
  route.dst = *net::IpPrefix::Parse("0.0.0.0/0");
  route.mtu = 0;
  route.table = 0;  // a pointer upstream: printed when set, even to 0
  r.routes.push_back(route);
  CHECK(MustPrint(r, "1.1.0") == Json::parse(R"({
    "cniVersion": "1.1.0",
    "interfaces": [{"name": "eth0"}],
    "ips": [{"address": "10.0.0.2/24"}],
    "routes": [{"dst": "0.0.0.0/0", "table": 0}]
  })"));
  CHECK(MustPrint(Result{}, "1.0.0") == Json{{"cniVersion", "1.0.0"}});
  CHECK(MustPrint(Result{}, "0.4.0") == Json{{"cniVersion", "0.4.0"}, {"dns", Json::object()}});
}

TEST_CASE("ResultToJson: unsupported versions are code 1, empty means 0.1.0", "[version][convert]") {
  Result r = MustParseResult(Golden("full/1.1.0.json"));
  for (const char* v : {"0.5.0", "2.0.0", "1.0"}) {
    absl::StatusOr<Json> j = ResultToJson(r, v);
    REQUIRE_FALSE(j.ok());
    CHECK(CodeOf(j.status()) == 1);
  }
  CHECK(MustPrint(r, "") == Golden("full/0.1.0.json"));
}

TEST_CASE("IPs print in Go's style", "[version][convert]") {
  Result r = MustParseResult(Json::parse(R"({
    "cniVersion": "1.0.0",
    "ips": [{"address": "2001:0DB8:0000:0000:0000:0000:0000:0005/64", "gateway": "2001:DB8::1"},
            {"address": "10.1.2.3/24"}],
    "routes": [{"dst": "FD00:0:0:0::/8", "gw": "fe80::0:1"}]
  })"),
                             {});
  Json j = MustPrint(r, "1.0.0");
  CHECK(j["ips"][0]["address"] == "2001:db8::5/64");
  CHECK(j["ips"][0]["gateway"] == "2001:db8::1");
  CHECK(j["routes"][0]["dst"] == "fd00::/8");
  CHECK(j["routes"][0]["gw"] == "fe80::1");
}

TEST_CASE("interface index 0 is printed, a missing index is not", "[version][convert]") {
  Json j = MustPrint(MustParseResult(Golden("full/1.0.0.json")), "0.4.0");
  CHECK(j["ips"][2]["interface"] == 0);
  CHECK_FALSE(j["ips"][3].contains("interface"));
  CHECK(j["ips"][1]["version"] == "6");
}

// ---------------------------------------------------------------------------
// The spec's appendix examples

TEST_CASE("the spec's appendix results parse and print back equivalently", "[version][spec]") {
  for (const char* name : {"host-local-result.json", "bridge-result.json", "tuning-result.json"}) {
    INFO("example " << name);
    Json example = ReadJson(std::string("spec-examples/") + name);
    // The examples carry no cniVersion: they are 1.0.0 results.
    Result r = MustParseResult(example, "1.0.0");
    Json printed = MustPrint(r, "1.0.0");
    Json expected = example;
    expected["cniVersion"] = "1.0.0";
    CHECK(printed == expected);
  }
}

TEST_CASE("the spec's appendix prevResults parse as the configuration's version",
          "[version][spec]") {
  struct Case {
    const char* file;
    const char* eth0_mac;  // tuning changes it; later steps see the new one
  };
  for (const Case& c : {Case{"tuning-add-config.json", "99:88:77:66:55:44"},
                        Case{"portmap-add-config.json", "00:11:22:33:44:66"},
                        Case{"bridge-check-config.json", "00:11:22:33:44:66"}}) {
    INFO("example " << c.file);
    absl::StatusOr<NetConf> conf =
        NetConf::Parse(Dump(ReadJson(std::string("spec-examples/") + c.file)));
    REQUIRE(conf.ok());
    Result prev = MustParseResult(conf->prev_result, conf->cni_version);
    CHECK(prev.cni_version == "1.0.0");
    CHECK(prev.interfaces.size() == 3);
    CHECK(prev.ips.at(0).interface == 2);
    CHECK(prev.interfaces.at(2).mac == c.eth0_mac);
    // Printed back at 1.0.0 it is the prevResult plus its version.
    Json expected = conf->prev_result;
    expected["cniVersion"] = "1.0.0";
    CHECK(MustPrint(prev, "1.0.0") == expected);
  }
}

TEST_CASE("the spec's appendix results convert to every version", "[version][spec]") {
  Json example = ReadJson("spec-examples/bridge-result.json");
  example["cniVersion"] = "1.0.0";
  for (const std::string& v : AllVersions()) {
    INFO("version " << v);
    absl::StatusOr<Json> j = ConvertResult(example, v);
    REQUIRE(j.ok());
    if (IsLegacy(v)) {
      CHECK(*j == Json::parse(R"({"cniVersion": ")" + v + R"(",
        "ip4": {"ip": "10.1.0.5/16", "gateway": "10.1.0.1", "routes": [{"dst": "0.0.0.0/0"}]},
        "dns": {"nameservers": ["10.1.0.1"]}})"));
    } else {
      CHECK((*j)["interfaces"].size() == 3);
      CHECK((*j)["ips"][0].contains("version") == (v.rfind("0.", 0) == 0));
    }
  }
}

}  // namespace cni

// The result checks of cni-conformance: the built-in schema validator and
// the spec rules beyond it. Each rule is shown to reject what it must.
#include <catch2/catch.hpp>

#include "schema.h"

using cni::Json;
using conformance::CarriedThrough;
using conformance::ResultSchema;
using conformance::ValidateAgainstSchema;
using conformance::ValidateResult;

namespace {

Json Good() {
  return Json::parse(R"({
    "cniVersion": "1.0.0",
    "interfaces": [{"name": "veth1", "mac": "0a:58:0a:f4:00:01"},
                   {"name": "eth0", "mac": "0a:58:0a:f4:00:02", "sandbox": "/run/netns/c", "mtu": 1500}],
    "ips": [{"address": "10.1.0.2/24", "gateway": "10.1.0.1", "interface": 1},
            {"address": "fd00::2/64", "interface": 1}],
    "routes": [{"dst": "0.0.0.0/0", "gw": "10.1.0.1"}, {"dst": "::/0"}],
    "dns": {"nameservers": ["10.1.0.1"], "search": ["example.test"]}
  })");
}

bool Mentions(const std::vector<std::string>& errors, const std::string& what) {
  for (const std::string& e : errors) {
    if (e.find(what) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("conformance schema: the schema's own examples are valid", "[conformance]") {
  REQUIRE(ResultSchema().contains("examples"));
  for (const Json& example : ResultSchema()["examples"]) {
    CHECK(ValidateAgainstSchema(ResultSchema(), example).empty());
  }
  CHECK(ValidateResult(Good(), {.version = "1.0.0"}).empty());
}

TEST_CASE("conformance schema: each rule of the schema rejects", "[conformance]") {
  auto errors_with = [](const std::function<void(Json&)>& edit) {
    Json doc = Good();
    edit(doc);
    return ValidateAgainstSchema(ResultSchema(), doc);
  };
  CHECK(Mentions(errors_with([](Json& d) { d.erase("cniVersion"); }), "missing required property \"cniVersion\""));
  CHECK(Mentions(errors_with([](Json& d) { d["cniVersion"] = "1.0"; }), "/cniVersion"));
  CHECK(Mentions(errors_with([](Json& d) { d["cniVersion"] = 1; }), "is not of type"));
  CHECK(Mentions(errors_with([](Json& d) { d["interfaces"][0]["mac"] = "0a:58"; }), "/interfaces/0/mac"));
  CHECK(Mentions(errors_with([](Json& d) { d["interfaces"][1]["mtu"] = 67; }), "below the minimum"));
  CHECK(Mentions(errors_with([](Json& d) { d["interfaces"][1]["mtu"] = 70000; }), "above the maximum"));
  CHECK(Mentions(errors_with([](Json& d) { d["interfaces"][1]["mtu"] = 1500.5; }), "is not of type"));
  CHECK(Mentions(errors_with([](Json& d) { d["interfaces"][0].erase("name"); }), "/interfaces/0: missing"));
  CHECK(Mentions(errors_with([](Json& d) { d["ips"][0].erase("address"); }), "/ips/0: missing"));
  CHECK(Mentions(errors_with([](Json& d) { d["ips"][0]["interface"] = -1; }), "/ips/0/interface"));
  CHECK(Mentions(errors_with([](Json& d) { d["routes"][0].erase("dst"); }), "/routes/0: missing"));
  CHECK(Mentions(errors_with([](Json& d) { d["dns"]["nameservers"] = "10.1.0.1"; }), "/dns/nameservers"));
  CHECK(Mentions(errors_with([](Json& d) { d["ips"] = Json::object(); }), "/ips"));
  CHECK(Mentions(errors_with([](Json& d) { d = Json::array(); }), "is not of type"));
}

TEST_CASE("conformance schema: a keyword the validator does not know fails loudly", "[conformance]") {
  Json schema = {{"type", "object"}, {"additionalProperties", false}};
  std::vector<std::string> errors = ValidateAgainstSchema(schema, Json::object());
  REQUIRE(errors.size() == 1);
  CHECK(Mentions(errors, "\"additionalProperties\" is not supported"));
  CHECK(Mentions(ValidateAgainstSchema({{"$ref", "#/$defs/None"}}, 1), "names nothing"));
}

TEST_CASE("conformance result: the spec's rules beyond the schema", "[conformance]") {
  auto errors_with = [](const std::function<void(Json&)>& edit, const std::string& version = "1.0.0") {
    Json doc = Good();
    edit(doc);
    return ValidateResult(doc, {.version = version});
  };
  CHECK(Mentions(errors_with([](Json&) {}, "1.1.0"), "not the version asked for"));
  CHECK(Mentions(errors_with([](Json& d) { d["ips"][0]["interface"] = 2; }), "not an index into \"interfaces\""));
  CHECK(Mentions(errors_with([](Json& d) { d["ips"][0]["address"] = "10.1.0.2"; }), "not in CIDR notation"));
  CHECK(Mentions(errors_with([](Json& d) { d["ips"][1]["gateway"] = "10.1.0.1"; }), "not of the family"));
  CHECK(Mentions(errors_with([](Json& d) { d["routes"][0]["gw"] = "fd00::1"; }), "not of the family"));
  CHECK(Mentions(errors_with([](Json& d) { d["routes"][1]["dst"] = "default"; }), "not in CIDR notation"));
  CHECK(Mentions(errors_with([](Json& d) { d["dns"]["nameservers"][0] = "dns.example"; }), "not an IP address"));
  // 0.3.x and 0.4.0 results name each address's family.
  CHECK(Mentions(errors_with([](Json& d) { d["cniVersion"] = "0.3.1"; }, "0.3.1"), "missing \"version\""));
  CHECK(errors_with([](Json& d) {
          d["cniVersion"] = "0.4.0";
          d["ips"][0]["version"] = "4";
          d["ips"][1]["version"] = "6";
        },
                    "0.4.0")
            .empty());
  CHECK(Mentions(errors_with([](Json& d) {
                   d["cniVersion"] = "0.4.0";
                   d["ips"][0]["version"] = "6";
                   d["ips"][1]["version"] = "6";
                 },
                             "0.4.0"),
                 "/ips/0/version"));
}

TEST_CASE("conformance result: the 0.1.0/0.2.0 shape", "[conformance]") {
  Json legacy = Json::parse(R"({"cniVersion": "0.2.0",
    "ip4": {"ip": "10.1.0.2/24", "gateway": "10.1.0.1", "routes": [{"dst": "0.0.0.0/0"}]},
    "ip6": {"ip": "fd00::2/64"}, "dns": {}})");
  CHECK(ValidateResult(legacy, {.version = "0.2.0"}).empty());
  Json wrong = legacy;
  wrong["ip4"]["ip"] = "fd00::3/64";
  CHECK(Mentions(ValidateResult(wrong, {.version = "0.2.0"}), "/ip4/ip: of the wrong family"));
  // A newer result stamped 0.2.0 is not one.
  Json newer = Good();
  newer["cniVersion"] = "0.2.0";
  CHECK(Mentions(ValidateResult(newer, {.version = "0.2.0"}), "/ips: not part of a result before 0.3.0"));
}

TEST_CASE("conformance chaining: what of prevResult must come through", "[conformance]") {
  Json prev = Good();
  CHECK(CarriedThrough(prev, prev).empty());
  Json extended = prev;
  extended["interfaces"].push_back({{"name", "net1"}, {"sandbox", "/run/netns/c"}});
  extended["ips"].push_back({{"address", "10.2.0.2/24"}, {"interface", 2}});
  extended["dns"]["search"].push_back("more.test");
  CHECK(CarriedThrough(prev, extended).empty());
  Json dropped = prev;
  dropped["interfaces"].erase(0);
  dropped["ips"][0]["interface"] = 0;  // still eth0, now first
  dropped["ips"][1]["interface"] = 0;
  std::vector<std::string> missing = CarriedThrough(prev, dropped);
  REQUIRE(missing.size() == 1);
  CHECK(Mentions(missing, "veth1"));
  Json moved = prev;
  moved["ips"][0]["interface"] = 0;
  CHECK(Mentions(CarriedThrough(prev, moved), "moved to another interface"));
  Json no_route = prev;
  no_route["routes"].erase(1);
  CHECK(Mentions(CarriedThrough(prev, no_route), "route"));
  Json no_dns = prev;
  no_dns.erase("dns");
  CHECK(Mentions(CarriedThrough(prev, no_dns), "dns \"nameservers\""));
}

// sbr's configuration: keys, gateways per family, and which prevResult
// addresses belong to the interface.
#include <string>

#include <catch2/catch.hpp>

#include "cni/base/error.h"
#include "cni/protocol/types.h"
#include "config.h"

namespace {

absl::StatusOr<cni::sbr::Config> Parse(const std::string& json) {
  absl::StatusOr<cni::NetConf> conf = cni::NetConf::Parse(json);
  REQUIRE(conf.ok());
  cni::CmdArgs args;
  args.conf = *conf;
  args.ifname = "eth1";
  return cni::sbr::Config::Parse(args);
}

std::string Conf(const std::string& keys) {
  return R"({"cniVersion":"1.0.0","name":"n","type":"sbr")" + keys + "}";
}

}  // namespace

TEST_CASE("sbr: keys, gateways one per family, codes", "[sbr]") {
  auto c = Parse(Conf(R"(,"table":5001,"gateways":["fd00::1","10.0.0.1"],"addSourceHints":true)"));
  REQUIRE(c.ok());
  CHECK(c->table == 5001u);
  CHECK(c->add_source_hints);
  CHECK(c->Gateway(cni::net::Family::kV4)->ToString() == "10.0.0.1");
  CHECK(c->Gateway(cni::net::Family::kV6)->ToString() == "fd00::1");
  CHECK(*c->prev_result == std::nullopt);

  auto plain = Parse(Conf(""));
  REQUIRE(plain.ok());
  CHECK_FALSE(plain->table.has_value());
  CHECK_FALSE(plain->Gateway(cni::net::Family::kV4).has_value());
  // JSON keys match case-insensitively, as upstream's decoder does.
  CHECK(Parse(Conf(R"(,"Table":7)"))->table == 7u);

  struct Bad {
    const char* keys;
    int code;
  };
  for (const Bad& b : {Bad{R"(,"table":"7")", 6}, Bad{R"(,"table":0)", 7}, Bad{R"(,"table":4294967296)", 7},
                       Bad{R"(,"gateways":"10.0.0.1")", 6}, Bad{R"(,"gateways":["x"])", 7},
                       Bad{R"(,"gateways":["10.0.0.1","10.0.0.2"])", 7},
                       Bad{R"(,"gateways":["fd00::1","fd00::2"])", 7},
                       Bad{R"(,"gateways":["10.0.0.1","fd00::1","10.0.0.3"])", 7},
                       Bad{R"(,"addSourceHints":1)", 6}}) {
    INFO(b.keys);
    auto r = Parse(Conf(b.keys));
    REQUIRE_FALSE(r.ok());
    CHECK(cni::CodeOf(r.status()) == b.code);
  }
}

TEST_CASE("sbr: the interface's addresses in prevResult", "[sbr]") {
  auto c = Parse(Conf(R"(,"prevResult":{"cniVersion":"1.0.0",
      "interfaces":[{"name":"eth0"},{"name":"eth1"}],
      "ips":[{"address":"10.0.0.2/24","interface":0},{"address":"10.1.0.2/24","interface":1},
             {"address":"10.2.0.2/24"},{"address":"10.3.0.2/24","interface":7}]})"));
  REQUIRE(c.ok());
  REQUIRE(c->prev_result.ok());
  REQUIRE(c->prev_result->has_value());
  std::vector<cni::IpConfig> ips = cni::sbr::AddressesOf(**c->prev_result, "eth1");
  // Its own, one with no interface and one whose index points nowhere, as upstream.
  REQUIRE(ips.size() == 3);
  CHECK(ips[0].address.ToString() == "10.1.0.2/24");
  CHECK(ips[1].address.ToString() == "10.2.0.2/24");
  CHECK(ips[2].address.ToString() == "10.3.0.2/24");
  CHECK(cni::sbr::AddressesOf(**c->prev_result, "eth0").size() == 3);
}

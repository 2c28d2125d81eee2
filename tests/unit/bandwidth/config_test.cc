// bandwidth's configuration and upstream's TBF arithmetic.
#include <string>

#include <catch2/catch.hpp>

#include "bandwidth.h"
#include "cni/base/error.h"
#include "cni/base/hash.h"
#include "cni/protocol/types.h"
#include "config.h"

namespace {

// Config::Parse of a parsed configuration.
absl::StatusOr<cni::bandwidth::Config> ParseConfig(const cni::NetConf& conf) {
  cni::CmdArgs args;
  args.conf = conf;
  return cni::bandwidth::Config::Parse(args);
}

int CodeOf(const std::string& json) {
  auto conf = cni::NetConf::Parse(json);
  REQUIRE(conf.ok());
  auto c = ParseConfig(*conf);
  return c.ok() ? 0 : cni::CodeOf(c.status());
}

}  // namespace

TEST_CASE("bandwidth: rate and burst come together, within upstream's limits", "[bandwidth]") {
  CHECK(CodeOf(R"({"name":"n","ingressRate":1000,"ingressBurst":1000})") == 0);
  CHECK(CodeOf(R"({"name":"n","ingressRate":1000})") == 7);
  CHECK(CodeOf(R"({"name":"n","egressBurst":1000})") == 7);
  CHECK(CodeOf(R"({"name":"n","egressRate":1000,"egressBurst":34359738360})") == 7);
  CHECK(CodeOf(R"({"name":"n","egressRate":4,"egressBurst":1000})") == 7);
  CHECK(CodeOf(R"({"name":"n","egressRate":-1,"egressBurst":1000})") == 6);
  CHECK(CodeOf(R"({"name":"n","runtimeConfig":{"bandwidth":{"ingressRate":5}}})") == 7);
}

TEST_CASE("bandwidth: the capability applies only without keys in the config", "[bandwidth]") {
  auto parse = [](const std::string& json) {
    auto conf = cni::NetConf::Parse(json);
    REQUIRE(conf.ok());
    auto c = ParseConfig(*conf);
    REQUIRE(c.ok());
    return c->limits;
  };
  auto rt = parse(R"({"name":"n","runtimeConfig":{"bandwidth":{"egressRate":800,"egressBurst":80}}})");
  CHECK(rt.HasEgress());
  CHECK_FALSE(rt.HasIngress());
  auto cfg = parse(R"({"name":"n","ingressRate":800,"ingressBurst":80,
                      "runtimeConfig":{"bandwidth":{"egressRate":800,"egressBurst":80}}})");
  CHECK(cfg.HasIngress());
  CHECK_FALSE(cfg.HasEgress());
  CHECK(parse(R"({"name":"n"})").IsZero());
}

TEST_CASE("bandwidth: TBF numbers as upstream computes them", "[bandwidth]") {
  // 10 Mbit/s, 80 kbit burst, 15.625 ticks/us: rate 1250000 B/s, burst
  // 10000 B -> 8000 us -> 125000 ticks; limit = 31250 + 10000.
  cni::net::TbfParams p = cni::bandwidth::TbfFor(10'000'000, 80'000, 15.625);
  CHECK(p.rate == 1'250'000);
  CHECK(p.buffer == 125'000);
  CHECK(p.limit == 41'250);
}

TEST_CASE("bandwidth: ifb names and aliases", "[bandwidth]") {
  std::string name = cni::bandwidth::IfbName("mynet", "abc");
  CHECK(name == "bwp" + cni::Sha512Hex("mynetabc").substr(0, 12));
  CHECK(cni::bandwidth::IfbAlias("mynet", "abc") == "cni-bandwidth mynet abc");
  CHECK(cni::bandwidth::SupportedVersions().front() == "0.3.0");
}

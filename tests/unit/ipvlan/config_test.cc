// ipvlan configuration parsing. No root.
#include <string>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "cni/base/error.h"
#include "cni/net/ipvlan.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"
#include "config.h"
#include "support/config_parse.h"

namespace {

using cni::ipvlan::Config;

absl::StatusOr<Config> Parse(const std::string& extra) { return cni::test::ParseConfig<Config>("ipvlan", extra); }

}  // namespace

TEST_CASE("ipvlan config: defaults", "[ipvlan]") {
  absl::StatusOr<Config> c = Parse("");
  REQUIRE(c.ok());
  CHECK(c->master.empty());
  CHECK(c->mode == cni::net::IpvlanMode::kL2);
  CHECK(c->mtu == 0);
  CHECK(c->ipam_type.empty());
  CHECK_FALSE(c->link_in_container);
  CHECK_FALSE(c->dns.has_value());
}

TEST_CASE("ipvlan config: keys", "[ipvlan]") {
  absl::StatusOr<Config> c = Parse(
      R"("master":"eth1","mode":"l3s","mtu":9000,"linkInContainer":true,"ipam":{"type":"static"},)"
      R"("dns":{"nameservers":["10.0.0.53"]})");
  REQUIRE(c.ok());
  CHECK(c->master == "eth1");
  CHECK(c->mode == cni::net::IpvlanMode::kL3s);
  CHECK(c->mtu == 9000);
  CHECK(c->link_in_container);
  CHECK(c->ipam_type == "static");
  REQUIRE(c->dns.has_value());
  CHECK(c->dns->nameservers.size() == 1);
  for (const char* m : {"l2", "l3", "l3s"}) {
    absl::StatusOr<Config> mc = Parse(std::string(R"("mode":")") + m + "\"");
    REQUIRE(mc.ok());
    CHECK(cni::net::IpvlanModeName(mc->mode) == m);
  }
  CHECK(Parse(R"("mode":"")")->mode == cni::net::IpvlanMode::kL2);
}

TEST_CASE("ipvlan config: bad values and types", "[ipvlan]") {
  absl::StatusOr<Config> bad = Parse(R"("mode":"bridge")");
  CHECK(cni::CodeOf(bad.status()) == 7);
  CHECK(absl::StrContains(bad.status().message(), "unknown ipvlan mode: \"bridge\""));
  CHECK(cni::CodeOf(Parse(R"("mtu":-1)").status()) == 7);
  CHECK(cni::CodeOf(Parse(R"("mtu":65536)").status()) == 7);
  CHECK(cni::CodeOf(Parse(R"("master":"0123456789abcdefg")").status()) == 7);
  CHECK(cni::CodeOf(Parse(R"("master":"a/b")").status()) == 7);
  CHECK(cni::CodeOf(Parse(R"("mode":3)").status()) == 6);
  CHECK(cni::CodeOf(Parse(R"("mtu":"1500")").status()) == 6);
  CHECK(cni::CodeOf(Parse(R"("master":1)").status()) == 6);
  CHECK(cni::CodeOf(Parse(R"("linkInContainer":"yes")").status()) == 6);
}

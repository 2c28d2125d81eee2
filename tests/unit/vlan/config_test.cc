// vlan configuration parsing. No root.
#include <string>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "cni/base/error.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"
#include "config.h"
#include "support/config_parse.h"

namespace {

using cni::vlan::Config;

absl::StatusOr<Config> Parse(const std::string& extra) { return cni::test::ParseConfig<Config>("vlan", extra); }

}  // namespace

TEST_CASE("vlan config: keys and defaults", "[vlan]") {
  absl::StatusOr<Config> c = Parse(R"("master":"eth0")");
  REQUIRE(c.ok());
  CHECK(c->master == "eth0");
  CHECK(c->vlan_id == 0);
  CHECK(c->mtu == 0);
  CHECK_FALSE(c->link_in_container);
  CHECK(c->ipam_type.empty());
  c = Parse(R"("master":"eth0","vlanId":4094,"mtu":1400,"linkInContainer":true,"ipam":{"type":"dhcp"})");
  REQUIRE(c.ok());
  CHECK(c->vlan_id == 4094);
  CHECK(c->mtu == 1400);
  CHECK(c->link_in_container);
  CHECK(c->ipam_type == "dhcp");
}

TEST_CASE("vlan config: bad values and types", "[vlan]") {
  absl::StatusOr<Config> none = Parse(R"("vlanId":5)");
  CHECK(cni::CodeOf(none.status()) == 7);
  CHECK(absl::StrContains(none.status().message(), "\"master\" field is required"));
  CHECK(cni::CodeOf(Parse(R"("master":"","vlanId":5)").status()) == 7);
  for (const char* id : {"4095", "-1", "65536"}) {
    absl::StatusOr<Config> c = Parse(std::string(R"("master":"eth0","vlanId":)") + id);
    CHECK(cni::CodeOf(c.status()) == 7);
    CHECK(absl::StrContains(c.status().message(), "must be between 0 and 4094"));
  }
  CHECK(cni::CodeOf(Parse(R"("master":"eth0","mtu":-1)").status()) == 7);
  CHECK(cni::CodeOf(Parse(R"("master":"0123456789abcdefg")").status()) == 7);
  CHECK(cni::CodeOf(Parse(R"("master":"eth0","vlanId":"5")").status()) == 6);
  CHECK(cni::CodeOf(Parse(R"("master":"eth0","vlanId":5.5)").status()) == 6);
  CHECK(cni::CodeOf(Parse(R"("master":"eth0","mtu":"9000")").status()) == 6);
  CHECK(cni::CodeOf(Parse(R"("master":"eth0","linkInContainer":1)").status()) == 6);
}

// macvlan configuration parsing. No root.
#include <string>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "cni/base/error.h"
#include "cni/net/macvlan.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"
#include "config.h"
#include "support/config_parse.h"

namespace {

using cni::macvlan::Config;

absl::StatusOr<Config> Parse(const std::string& extra, const std::string& cni_args = "") {
  return cni::test::ParseConfig<Config>("macvlan", extra, cni_args);
}

}  // namespace

TEST_CASE("macvlan config: defaults", "[macvlan]") {
  absl::StatusOr<Config> c = Parse(R"("ipam":{})");
  REQUIRE(c.ok());
  CHECK(c->master.empty());
  CHECK(c->mode == cni::net::MacvlanMode::kBridge);
  CHECK(c->mtu == 0);
  CHECK(c->ipam_type.empty());
  CHECK_FALSE(c->link_in_container);
}

TEST_CASE("macvlan config: modes", "[macvlan]") {
  for (const char* m : {"bridge", "private", "vepa", "passthru"}) {
    absl::StatusOr<Config> c = Parse(std::string(R"("mode":")") + m + "\"");
    REQUIRE(c.ok());
    CHECK(cni::net::MacvlanModeName(c->mode) == m);
  }
  absl::StatusOr<Config> bad = Parse(R"("mode":"l3")");
  CHECK(cni::CodeOf(bad.status()) == 7);
  CHECK(absl::StrContains(bad.status().message(), "unknown macvlan mode \"l3\""));
}

TEST_CASE("macvlan config: bad values", "[macvlan]") {
  CHECK(cni::CodeOf(Parse(R"("mtu":-1)").status()) == 7);
  CHECK(cni::CodeOf(Parse(R"("master":"0123456789abcdefg")").status()) == 7);
  CHECK(cni::CodeOf(Parse(R"("mac":"nope")").status()) == 7);
  CHECK(cni::CodeOf(Parse(R"("linkInContainer":"yes")").status()) == 6);
}

TEST_CASE("macvlan config: MAC sources, later wins", "[macvlan]") {
  CHECK(Parse(R"("mac":"02:00:00:00:00:01")")->mac->ToString() == "02:00:00:00:00:01");
  CHECK(Parse(R"("mac":"02:00:00:00:00:01")", "MAC=02:00:00:00:00:02")->mac->ToString() ==
        "02:00:00:00:00:02");
  CHECK(Parse(R"("mac":"02:00:00:00:00:01","runtimeConfig":{"mac":"02:00:00:00:00:03"})",
              "MAC=02:00:00:00:00:02")
            ->mac->ToString() == "02:00:00:00:00:03");
}

// ptp configuration parsing: defaults, validation, error codes. No root.
#include <string>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "cni/base/error.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"
#include "config.h"

namespace {

using cni::ptp::Config;

absl::StatusOr<Config> Parse(const std::string& extra, const std::string& ipam = R"({"type":"static"})") {
  std::string text = R"({"cniVersion":"1.0.0","name":"n","type":"ptp")";
  if (!ipam.empty()) text += R"(,"ipam":)" + ipam;
  if (!extra.empty()) text += "," + extra;
  text += "}";
  absl::StatusOr<cni::NetConf> conf = cni::NetConf::Parse(text);
  REQUIRE(conf.ok());
  cni::CmdArgs args;
  args.conf = *conf;
  return Config::Parse(args);
}

int Code(const absl::StatusOr<Config>& c) { return cni::CodeOf(c.status()); }

}  // namespace

TEST_CASE("ptp config: defaults", "[ptp]") {
  absl::StatusOr<Config> c = Parse("");
  REQUIRE(c.ok());
  CHECK_FALSE(c->ip_masq);
  CHECK(c->ip_masq_backend.empty());
  CHECK(c->mtu == 0);
  CHECK(c->ipam_type == "static");
  CHECK_FALSE(c->dns);
}

TEST_CASE("ptp config: keys are read case-insensitively", "[ptp]") {
  absl::StatusOr<Config> c = Parse(R"("MTU":1400,"ipmasq":false,"IPMasqBackend":"nftables")");
  REQUIRE(c.ok());
  CHECK(c->mtu == 1400);
  CHECK(c->ip_masq_backend == "nftables");
}

TEST_CASE("ptp config: ipMasq is supported (cni/fw), the masquerading is in netns/ipmasq_test", "[ptp]") {
  absl::StatusOr<Config> c = Parse(R"("ipMasq":true)");
  REQUIRE(c.ok());
  CHECK(c->ip_masq);
  c = Parse(R"("ipMasq":true,"ipMasqBackend":"nftables")");
  REQUIRE(c.ok());
  CHECK(c->ip_masq_backend == "nftables");
}

TEST_CASE("ptp config: invalid values are code 7, wrong types code 6", "[ptp]") {
  CHECK(Code(Parse(R"("mtu":70000)")) == 7);
  CHECK(Code(Parse(R"("mtu":67)")) == 7);
  CHECK(Code(Parse(R"("mtu":-1)")) == 7);
  CHECK(Parse(R"("mtu":68)").ok());
  CHECK(Parse(R"("mtu":65535)").ok());
  CHECK(Parse(R"("mtu":0)").ok());
  CHECK(Code(Parse(R"("mtu":"1500")")) == 6);
  CHECK(Code(Parse(R"("ipMasq":"yes")")) == 6);
  CHECK(Code(Parse(R"("ipMasqBackend":"pf")")) == 7);
  CHECK(Code(Parse("", "")) == 7);       // no ipam
  CHECK(Code(Parse("", "{}")) == 7);     // ipam without type
}

TEST_CASE("ptp config: dns replaces IPAM's only when it sets something", "[ptp]") {
  CHECK_FALSE(Parse(R"("dns":{})")->dns);
  CHECK_FALSE(Parse(R"("dns":{"domain":""})")->dns);
  absl::StatusOr<Config> c = Parse(R"("dns":{"nameservers":["10.0.0.53"],"search":["a.b"]})");
  REQUIRE(c.ok());
  REQUIRE(c->dns);
  CHECK(c->dns->nameservers == std::vector<std::string>{"10.0.0.53"});
  // Upstream: a present list counts, even an empty one.
  CHECK(Parse(R"("dns":{"nameservers":[]})")->dns);
}

// dhcp plugin configuration: request/provide options and CNI_ARGS. No root.
#include <string>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "cni/base/error.h"
#include "config.h"
#include "support/config_parse.h"

namespace {

using cni::dhcp::Config;

absl::StatusOr<Config> Parse(const std::string& ipam, const std::string& cni_args = "") {
  return cni::test::ParseConfig<Config>("macvlan", R"("ipam":{"type":"dhcp")" + ipam + "}", cni_args);
}

std::string Codes(std::initializer_list<int> b) {
  std::string s;
  for (int v : b) s.push_back(static_cast<char>(v));
  return s;
}

}  // namespace

TEST_CASE("dhcp config: defaults", "[dhcp]") {
  absl::StatusOr<Config> c = Parse("");
  REQUIRE(c.ok());
  CHECK(c->socket_path == "/run/cni/dhcp.sock");
  CHECK(c->parameter_list == Codes({3, 1, 6, 15, 33, 121}));
  CHECK(c->provide.empty());
  CHECK(c->priority == 0);
  // How long each command waits for the daemon.
  CHECK(c->add_budget == absl::Seconds(90));
  CHECK(c->DelBudget() == absl::Seconds(10));
  CHECK(c->GcBudget() == absl::Seconds(30));
}

TEST_CASE("dhcp config: timeout bounds every call to the daemon", "[dhcp]") {
  absl::StatusOr<Config> c = Parse(R"(,"timeout":20)");
  REQUIRE(c.ok());
  CHECK(c->add_budget == absl::Seconds(20));
  CHECK(c->DelBudget() == absl::Seconds(10));
  CHECK(c->GcBudget() == absl::Seconds(20));
  c = Parse(R"(,"timeout":3)");
  REQUIRE(c.ok());
  CHECK(c->DelBudget() == absl::Seconds(3));
  CHECK(c->GcBudget() == absl::Seconds(3));
  CHECK(cni::CodeOf(Parse(R"(,"timeout":0)").status()) == 7);
  CHECK(cni::CodeOf(Parse(R"(,"timeout":3601)").status()) == 7);
  CHECK(cni::CodeOf(Parse(R"(,"timeout":"10s")").status()) == 6);
  CHECK(cni::CodeOf(Parse(R"(,"timeout":1.5)").status()) == 6);
}

TEST_CASE("dhcp config: request, skipDefault and provide with fromArg", "[dhcp]") {
  absl::StatusOr<Config> c = Parse(
      R"(,"daemonSocketPath":"/tmp/d.sock","priority":7,)"
      R"("request":[{"option":"ntp-servers"},{"option":"routers"}],)"
      R"("provide":[{"option":"host-name","value":"fixed","fromArg":"K8S_POD_NAME"},{"option":"60","value":"cni"}])",
      "IgnoreUnknown=1;K8S_POD_NAME=web-1");
  REQUIRE(c.ok());
  CHECK(c->socket_path == "/tmp/d.sock");
  CHECK(c->priority == 7);
  CHECK(c->parameter_list == Codes({42, 3, 1, 6, 15, 33, 121}));
  REQUIRE(c->provide.size() == 3);
  CHECK(c->provide[0] == std::pair<uint8_t, std::string>{12, "fixed"});
  CHECK(c->provide[1] == std::pair<uint8_t, std::string>{12, "web-1"});  // later: replaces the value when sent
  CHECK(c->provide[2] == std::pair<uint8_t, std::string>{60, "cni"});

  c = Parse(R"(,"request":[{"skipDefault":true,"option":"subnet-mask"}])");
  REQUIRE(c.ok());
  CHECK(c->parameter_list == Codes({1}));
  c = Parse(R"(,"request":[{"skipDefault":true}])");
  REQUIRE(c.ok());
  CHECK(c->parameter_list.empty());
}

TEST_CASE("dhcp config: bad values", "[dhcp]") {
  CHECK(cni::CodeOf(Parse(R"(,"request":[{"option":"bogus"}])").status()) == 7);
  CHECK(cni::CodeOf(Parse(R"(,"provide":[{"option":"host-name","value":")" + std::string(256, 'a') + "\"}]").status()) == 7);
  CHECK(cni::CodeOf(Parse(R"(,"provide":[{"option":"host-name","fromArg":"X"}])", "X=" + std::string(256, 'a')).status()) == 7);
  CHECK(cni::CodeOf(Parse(R"(,"request":{"option":"routers"})").status()) == 6);
  CHECK(cni::CodeOf(Parse(R"(,"request":[{"option":3}])").status()) == 6);
  CHECK(cni::CodeOf(Parse(R"(,"priority":"high")").status()) == 6);
}

TEST_CASE("dhcp config: family chooses IPv4, IPv6 or both", "[dhcp]") {
  absl::StatusOr<Config> c = Parse("");
  REQUIRE(c.ok());
  CHECK(c->family == cni::dhcp::Family::kIpv4);
  CHECK((c->v4() && !c->v6()));
  c = Parse(R"(,"family":"ipv6")");
  REQUIRE(c.ok());
  CHECK((!c->v4() && c->v6()));
  c = Parse(R"(,"family":"dual")");
  REQUIRE(c.ok());
  CHECK((c->v4() && c->v6()));
  absl::Status bad = Parse(R"(,"family":"ipv5")").status();
  CHECK(cni::CodeOf(bad) == 7);
  CHECK(absl::StrContains(bad.message(), "\"family\" must be one of"));
  CHECK(cni::CodeOf(Parse(R"(,"family":6)").status()) == 6);
  CHECK(cni::CodeOf(Parse(R"(,"family":["ipv4","ipv6"])").status()) == 6);
}

TEST_CASE("dhcp config: DHCPv6 options in request and provide", "[dhcp]") {
  absl::StatusOr<Config> c = Parse(
      R"(,"family":"dual","request":[{"option":"dhcp6.sntp-servers"},{"option":"dhcp6.99"},{"option":"routers"}],)"
      R"("provide":[{"option":"dhcp6.fqdn","value":"fixed","fromArg":"K8S_POD_NAME"},)"
      R"({"option":"dhcp6.client-id","value":"00:03:00:01:02:00:00:00:00:42"},{"option":"dhcp6.user-class","value":"cni"}])",
      "K8S_POD_NAME=web-1");
  REQUIRE(c.ok());
  CHECK(c->request6 == std::vector<uint16_t>{31, 99});
  CHECK(c->parameter_list == Codes({3, 1, 6, 15, 33, 121}));  // DHCPv4's list is not touched by dhcp6.*
  CHECK(c->duid == Codes({0, 3, 0, 1, 2, 0, 0, 0, 0, 0x42}));
  REQUIRE(c->provide6.size() == 2);
  // FQDN (RFC 4704): flags 0, then the partial name in DNS labels; the argument wins.
  CHECK(c->provide6[0] == std::pair<uint16_t, std::string>{39, std::string("\0\5web-1", 7)});
  CHECK(c->provide6[1] == std::pair<uint16_t, std::string>{15, "cni"});
  CHECK(c->provide.empty());
  // A fully qualified name ends with the root label.
  c = Parse(R"(,"provide":[{"option":"dhcp6.fqdn","value":"a.lab."}])");
  REQUIRE(c.ok());
  CHECK(c->provide6.at(0).second == std::string("\0\1a\3lab\0", 8));

  CHECK(cni::CodeOf(Parse(R"(,"request":[{"option":"dhcp6.bogus"}])").status()) == 7);
  CHECK(cni::CodeOf(Parse(R"(,"request":[{"option":"dhcp6.0"}])").status()) == 7);
  CHECK(cni::CodeOf(Parse(R"(,"request":[{"option":"dhcp6.65536"}])").status()) == 7);
  CHECK(cni::CodeOf(Parse(R"(,"provide":[{"option":"dhcp6.client-id","value":"xyz"}])").status()) == 7);
  CHECK(cni::CodeOf(Parse(R"(,"provide":[{"option":"dhcp6.fqdn","value":"a..b"}])").status()) == 7);
}

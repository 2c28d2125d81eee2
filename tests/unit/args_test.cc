// CNI_ARGS parsing: pairs, IgnoreUnknown, errors, and args.cni precedence input.
#include <catch2/catch.hpp>

#include "cni/base/error.h"
#include "cni/protocol/args.h"

using cni::CniArgs;

TEST_CASE("CNI_ARGS: empty string has no pairs", "[args]") {
  auto a = CniArgs::Parse("");
  REQUIRE(a.ok());
  CHECK(a->pairs().empty());
  CHECK_FALSE(a->Ip());
}

TEST_CASE("CNI_ARGS: known keys are read", "[args]") {
  auto a = CniArgs::Parse("IP=10.0.0.5;MAC=0a:00:00:00:00:01;GATEWAY=10.0.0.1", {"IP", "MAC", "GATEWAY"});
  REQUIRE(a.ok());
  CHECK(*a->Ip() == "10.0.0.5");
  CHECK(*a->Mac() == "0a:00:00:00:00:01");
  CHECK(*a->Gateway() == "10.0.0.1");
}

TEST_CASE("CNI_ARGS: unknown keys are an error without IgnoreUnknown", "[args]") {
  auto a = CniArgs::Parse("FOO=bar", {"IP"});
  REQUIRE_FALSE(a.ok());
  CHECK(cni::CodeOf(a.status()) == 4);
  CHECK(std::string(a.status().message()).find("FOO=bar") != std::string::npos);
}

TEST_CASE("CNI_ARGS: IgnoreUnknown anywhere allows unknown keys", "[args]") {
  for (const char* text : {"FOO=bar;IgnoreUnknown=1", "IgnoreUnknown=true;FOO=bar",
                           "FOO=bar;IgnoreUnknown=TRUE;IP=1.2.3.4"}) {
    INFO(text);
    auto a = CniArgs::Parse(text, {"IP"});
    REQUIRE(a.ok());
    CHECK(a->ignore_unknown());
    CHECK(*a->Get("FOO") == "bar");
  }
}

TEST_CASE("CNI_ARGS: IgnoreUnknown=0 still rejects unknown keys", "[args]") {
  auto a = CniArgs::Parse("IgnoreUnknown=0;FOO=bar");
  REQUIRE_FALSE(a.ok());
  CHECK(cni::CodeOf(a.status()) == 4);
}

TEST_CASE("CNI_ARGS: IgnoreUnknown with a non-boolean is an error", "[args]") {
  auto a = CniArgs::Parse("IgnoreUnknown=yes");
  REQUIRE_FALSE(a.ok());
  CHECK(cni::CodeOf(a.status()) == 4);
}

TEST_CASE("CNI_ARGS: each pair needs exactly one '='", "[args]") {
  for (const char* text : {"IP", "IP=1=2", "IP=1.2.3.4;", ";IP=1.2.3.4", "=;"}) {
    INFO(text);
    auto a = CniArgs::Parse(text, {"IP"});
    REQUIRE_FALSE(a.ok());
    CHECK(cni::CodeOf(a.status()) == 4);
    CHECK(std::string(a.status().message()).find("invalid pair") != std::string::npos);
  }
}

TEST_CASE("CNI_ARGS: empty values are allowed", "[args]") {
  auto a = CniArgs::Parse("IP=", {"IP"});
  REQUIRE(a.ok());
  CHECK(*a->Ip() == "");
}

TEST_CASE("CNI_ARGS: the Kubernetes keys are always known", "[args]") {
  auto a = CniArgs::Parse(
      "K8S_POD_NAMESPACE=default;K8S_POD_NAME=web-0;K8S_POD_INFRA_CONTAINER_ID=abc;K8S_POD_UID=u1");
  REQUIRE(a.ok());
  CHECK(*a->PodNamespace() == "default");
  CHECK(*a->PodName() == "web-0");
  CHECK(*a->PodInfraContainerId() == "abc");
  CHECK(*a->PodUid() == "u1");
}

TEST_CASE("CNI_ARGS: keys are case-sensitive", "[args]") {
  auto a = CniArgs::Parse("ip=1.2.3.4", {"IP"});
  REQUIRE_FALSE(a.ok());
}

TEST_CASE("args.cni: extracted from the config's args, case-insensitively", "[args]") {
  auto j = cni::Json::parse(R"({"CNI": {"ips": ["10.0.0.2/24"]}})");
  cni::Json c = cni::ArgsCni(j);
  REQUIRE(c.is_object());
  CHECK(c["ips"][0] == "10.0.0.2/24");
  CHECK(cni::ArgsCni(cni::Json()).empty());
  CHECK(cni::ArgsCni(cni::Json::parse(R"({"cni": 5})")).empty());
}

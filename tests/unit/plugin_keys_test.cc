// cni/plugin/plugin_keys.h: the keys bridge, ptp and macvlan share, with upstream's
// semantics and the right error codes.
#include <catch2/catch.hpp>

#include "cni/base/error.h"
#include "cni/plugin/plugin_keys.h"

namespace {

using cni::Json;

int Code(const absl::Status& st) { return cni::CodeOf(st); }

}  // namespace

TEST_CASE("ParseDnsKey: only a dns that sets a field counts", "[unit][plugin_keys]") {
  CHECK_FALSE(cni::ParseDnsKey(Json::object(), "p")->has_value());
  CHECK_FALSE(cni::ParseDnsKey(Json{{"dns", nullptr}}, "p")->has_value());
  CHECK_FALSE(cni::ParseDnsKey(Json{{"dns", Json::object()}}, "p")->has_value());
  // An empty domain does not count; an empty list does (upstream: non-nil).
  CHECK_FALSE(cni::ParseDnsKey(Json{{"dns", {{"domain", ""}}}}, "p")->has_value());
  absl::StatusOr<std::optional<cni::Dns>> empty_list = cni::ParseDnsKey(Json{{"dns", {{"search", Json::array()}}}}, "p");
  REQUIRE(empty_list.ok());
  CHECK(empty_list->has_value());
  absl::StatusOr<std::optional<cni::Dns>> full =
      cni::ParseDnsKey(Json{{"DNS", {{"nameservers", {"10.0.0.53"}}, {"domain", "cluster.local"}}}}, "p");
  REQUIRE(full.ok());
  REQUIRE(full->has_value());
  CHECK((*full)->nameservers == std::vector<std::string>{"10.0.0.53"});
  CHECK((*full)->domain == "cluster.local");

  absl::StatusOr<std::optional<cni::Dns>> bad = cni::ParseDnsKey(Json{{"dns", "8.8.8.8"}}, "ptp");
  REQUIRE_FALSE(bad.ok());
  CHECK(Code(bad.status()) == 6);
  CHECK(bad.status().message() == "ptp: \"dns\" is not an object");
}

TEST_CASE("ParseVethMtuKey: 0 or veth's limits", "[unit][plugin_keys]") {
  CHECK(*cni::ParseVethMtuKey(Json::object(), "p") == 0);
  CHECK(*cni::ParseVethMtuKey(Json{{"mtu", nullptr}}, "p") == 0);
  CHECK(*cni::ParseVethMtuKey(Json{{"mtu", 0}}, "p") == 0);
  CHECK(*cni::ParseVethMtuKey(Json{{"mtu", 68}}, "p") == 68);
  CHECK(*cni::ParseVethMtuKey(Json{{"MTU", 9000}}, "p") == 9000);
  CHECK(*cni::ParseVethMtuKey(Json{{"mtu", 65535}}, "p") == 65535);
  for (int bad : {67, 65536, -1}) {
    absl::StatusOr<int> st = cni::ParseVethMtuKey(Json{{"mtu", bad}}, "bridge");
    REQUIRE_FALSE(st.ok());
    CHECK(Code(st.status()) == 7);
    CHECK(st.status().message().rfind("bridge: mtu ", 0) == 0);
  }
  absl::StatusOr<int> text = cni::ParseVethMtuKey(Json{{"mtu", "1500"}}, "p");
  REQUIRE_FALSE(text.ok());
  CHECK(Code(text.status()) == 6);
}

TEST_CASE("ParseIpMasqBackendKey: iptables, nftables or the default", "[unit][plugin_keys]") {
  CHECK(cni::ParseIpMasqBackendKey(Json::object(), "p")->empty());
  CHECK(cni::ParseIpMasqBackendKey(Json{{"ipMasqBackend", ""}}, "p")->empty());
  CHECK(*cni::ParseIpMasqBackendKey(Json{{"ipMasqBackend", "iptables"}}, "p") == "iptables");
  CHECK(*cni::ParseIpMasqBackendKey(Json{{"ipmasqbackend", "nftables"}}, "p") == "nftables");
  absl::StatusOr<std::string> other = cni::ParseIpMasqBackendKey(Json{{"ipMasqBackend", "ebtables"}}, "ptp");
  REQUIRE_FALSE(other.ok());
  CHECK(Code(other.status()) == 7);
  CHECK(other.status().message() == "ptp: ipMasqBackend must be \"iptables\" or \"nftables\", not \"ebtables\"");
  absl::StatusOr<std::string> number = cni::ParseIpMasqBackendKey(Json{{"ipMasqBackend", 1}}, "p");
  REQUIRE_FALSE(number.ok());
  CHECK(Code(number.status()) == 6);
}

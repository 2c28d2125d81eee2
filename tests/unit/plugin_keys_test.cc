// cni/plugin/plugin_keys.h: the keys bridge, ptp and macvlan share, with upstream's
// semantics and the right error codes.
#include <catch2/catch.hpp>

#include "cni/base/error.h"
#include "cni/plugin/plugin_keys.h"

namespace {

using cni::Json;
using cni::config::Field;

int Code(const absl::Status& st) { return cni::CodeOf(st); }

}  // namespace

TEST_CASE("ParseVethMtuKey: 0 or veth's limits", "[unit][plugin_keys]") {
  CHECK(*cni::ParseVethMtuKey(Field(Json::object(), "mtu"), "p") == 0);
  CHECK(*cni::ParseVethMtuKey(Field(Json{{"mtu", nullptr}}, "mtu"), "p") == 0);
  CHECK(*cni::ParseVethMtuKey(Field(Json{{"mtu", 0}}, "mtu"), "p") == 0);
  CHECK(*cni::ParseVethMtuKey(Field(Json{{"mtu", 68}}, "mtu"), "p") == 68);
  CHECK(*cni::ParseVethMtuKey(Field(Json{{"MTU", 9000}}, "mtu"), "p") == 9000);
  CHECK(*cni::ParseVethMtuKey(Field(Json{{"mtu", 65535}}, "mtu"), "p") == 65535);
  for (int bad : {67, 65536, -1}) {
    absl::StatusOr<int> st = cni::ParseVethMtuKey(Field(Json{{"mtu", bad}}, "mtu"), "bridge");
    REQUIRE_FALSE(st.ok());
    CHECK(Code(st.status()) == 7);
    CHECK(st.status().message().rfind("bridge: mtu ", 0) == 0);
  }
  absl::StatusOr<int> text = cni::ParseVethMtuKey(Field(Json{{"mtu", "1500"}}, "mtu"), "p");
  REQUIRE_FALSE(text.ok());
  CHECK(Code(text.status()) == 6);
}

TEST_CASE("ParseIpMasqBackendKey: iptables, nftables or the default", "[unit][plugin_keys]") {
  CHECK(cni::ParseIpMasqBackendKey(Field(Json::object(), "ipMasqBackend"), "p")->empty());
  CHECK(cni::ParseIpMasqBackendKey(Field(Json{{"ipMasqBackend", ""}}, "ipMasqBackend"), "p")->empty());
  CHECK(*cni::ParseIpMasqBackendKey(Field(Json{{"ipMasqBackend", "iptables"}}, "ipMasqBackend"), "p") == "iptables");
  CHECK(*cni::ParseIpMasqBackendKey(Field(Json{{"ipmasqbackend", "nftables"}}, "ipMasqBackend"), "p") == "nftables");
  absl::StatusOr<std::string> other = cni::ParseIpMasqBackendKey(Field(Json{{"ipMasqBackend", "ebtables"}}, "ipMasqBackend"), "ptp");
  REQUIRE_FALSE(other.ok());
  CHECK(Code(other.status()) == 7);
  CHECK(other.status().message() == "ptp: ipMasqBackend must be \"iptables\" or \"nftables\", not \"ebtables\"");
  absl::StatusOr<std::string> number = cni::ParseIpMasqBackendKey(Field(Json{{"ipMasqBackend", 1}}, "ipMasqBackend"), "p");
  REQUIRE_FALSE(number.ok());
  CHECK(Code(number.status()) == 6);
}

// cni/net/container_link.h against the real kernel, and the SDK naming links
// by name, not "dev #3", when a request about a link fails.
#include <catch2/catch.hpp>

#include <optional>
#include <string>

#include "cni/base/error.h"
#include "cni/net/addr.h"
#include "cni/net/bridge.h"
#include "cni/net/container_link.h"
#include "cni/net/ipvlan.h"
#include "cni/net/link.h"
#include "cni/net/macvlan.h"
#include "cni/net/qdisc.h"
#include "cni/net/route.h"
#include "cni/net/vlan.h"
#include "cni/net/vrf.h"
#include "support/netns_fixture.h"
#include "support/netns_tools.h"

namespace {

using cni::test::NetnsFixture;

template <typename T>
T Must(absl::StatusOr<T> v) {
  INFO(v.status().ToString());
  REQUIRE(v.ok());
  return *std::move(v);
}

}  // namespace

TEST_CASE("OpenContainerLink: namespace, socket and link in one call", "[netns]") {
  NetnsFixture fx;
  const std::string ns = fx.AddNetns("ctr");
  cni::test::MustExec(fx, ns, {"ip", "link", "add", "eth0", "type", "veth", "peer", "name", "peer0"});

  cni::net::ContainerLink target = Must(cni::net::OpenContainerLink(ns, "eth0"));
  CHECK(target.link.name == "eth0");
  CHECK(target.link.kind == "veth");
  CHECK(Must(cni::net::LinkByName(target.sock, "peer0")).index != 0);  // the socket is in the container

  absl::StatusOr<cni::net::ContainerLink> no_link = cni::net::OpenContainerLink(ns, "eth9");
  CHECK(absl::IsNotFound(no_link.status()));
  CHECK(no_link.status().message() == "looking up link \"eth9\": No such device");
  absl::StatusOr<cni::net::ContainerLink> no_ns = cni::net::OpenContainerLink("/run/netns/none", "eth0");
  CHECK(absl::IsNotFound(no_ns.status()));
  CHECK(cni::CodeOf(no_ns.status()) == 3);

  // Teardown: whatever is gone is nothing to undo.
  CHECK(Must(cni::net::OpenContainerLinkForTeardown(ns, "eth0")).has_value());
  CHECK_FALSE(Must(cni::net::OpenContainerLinkForTeardown(ns, "eth9")).has_value());
  CHECK_FALSE(Must(cni::net::OpenContainerLinkForTeardown("/run/netns/none", "eth0")).has_value());
  CHECK_FALSE(Must(cni::net::OpenContainerLinkForTeardown("", "eth0")).has_value());
}

TEST_CASE("route and address failures name the link by name", "[netns]") {
  NetnsFixture fx;
  const std::string ns = fx.AddNetns("ctr");
  cni::test::MustExec(fx, ns, {"ip", "link", "add", "eth0", "type", "veth", "peer", "name", "peer0"});
  cni::test::MustExec(fx, ns, {"ip", "link", "set", "eth0", "up"});
  cni::net::ContainerLink target = Must(cni::net::OpenContainerLink(ns, "eth0"));

  cni::net::RouteSpec unreachable;
  unreachable.dst = Must(cni::net::IpPrefix::Parse("203.0.113.0/24"));
  unreachable.gw = Must(cni::net::IpAddress::Parse("10.9.9.9"));
  unreachable.ifindex = target.link.index;
  absl::Status add = cni::net::AddRoute(target.sock, unreachable);
  REQUIRE_FALSE(add.ok());
  CHECK(add.message().rfind("adding route 203.0.113.0/24 via 10.9.9.9 dev eth0: ", 0) == 0);
  CHECK(cni::ErrnoOf(add) != 0);  // the kernel's errno is kept

  absl::Status del = cni::net::DeleteRoute(target.sock, unreachable);
  CHECK(absl::IsNotFound(del));
  CHECK(del.message().rfind("deleting route 203.0.113.0/24 via 10.9.9.9 dev eth0: ", 0) == 0);

  const cni::net::IpPrefix addr = Must(cni::net::IpPrefix::Parse("10.1.0.5/24"));
  REQUIRE(cni::net::AddAddress(target.sock, target.link.index, addr).ok());
  absl::Status again = cni::net::AddAddress(target.sock, target.link.index, addr);
  CHECK(absl::IsAlreadyExists(again));
  CHECK(again.message().rfind("adding address 10.1.0.5/24 to \"eth0\": File exists", 0) == 0);

  // Links, and traffic control, the same way.
  REQUIRE(cni::net::AddIngressQdisc(target.sock, target.link.index).ok());
  absl::Status qdisc = cni::net::AddIngressQdisc(target.sock, target.link.index);
  CHECK(absl::IsAlreadyExists(qdisc));
  CHECK(qdisc.message().rfind("adding ingress qdisc on \"eth0\": File exists", 0) == 0);
  cni::net::LinkInfo peer = Must(cni::net::LinkByName(target.sock, "peer0"));
  absl::Status master = cni::net::SetLinkMaster(target.sock, target.link, peer.index);  // a veth is no master
  REQUIRE_FALSE(master.ok());
  CHECK(master.message().rfind("setting the master of \"eth0\" to \"peer0\": ", 0) == 0);

  // A link that is gone by the time of the failure: by index, as before.
  absl::Status gone = cni::net::DeleteAddress(target.sock, 9999, addr);
  REQUIRE_FALSE(gone.ok());
  CHECK(gone.message().rfind("deleting address 10.1.0.5/24 from link #9999: ", 0) == 0);
}

TEST_CASE("link readers name the link by name when they fail", "[netns]") {
  NetnsFixture fx;
  const std::string ns = fx.AddNetns("ctr");
  // A veth: of none of the readers' kinds, and on every kernel (dummy is not).
  cni::test::MustExec(fx, ns, {"ip", "link", "add", "eth0", "type", "veth", "peer", "name", "peer0"});
  cni::test::MustExec(fx, ns, {"ip", "link", "add", "br0", "type", "bridge"});
  cni::net::ContainerLink target = Must(cni::net::OpenContainerLink(ns, "eth0"));
  cni::net::NetlinkSocket& sock = target.sock;
  const cni::net::LinkInfo& veth = target.link;
  auto message = [](const auto& result) { return std::string(result.status().message()); };

  // A link of another kind than the reader's (code 999: the caller passed it).
  CHECK(message(cni::net::MacvlanModeOf(sock, veth)) == "reading macvlan mode of \"eth0\": not a macvlan");
  CHECK(message(cni::net::IpvlanModeOf(sock, veth)) == "reading ipvlan mode of \"eth0\": not an ipvlan");
  CHECK(message(cni::net::VlanIdOf(sock, veth)) == "reading VLAN ID of \"eth0\": not a vlan");
  CHECK(message(cni::net::VrfTableOf(sock, veth)) == "reading the table of vrf \"eth0\": not a vrf");
  CHECK(message(cni::net::GetBridgePort(sock, veth)) == "reading bridge port \"eth0\": not a bridge port");
  CHECK(message(cni::net::GetBridgePortState(sock, veth)) ==
        "reading bridge port \"eth0\": not a bridge port");

  // A bridge gone by the time it is read.
  cni::net::LinkInfo bridge = Must(cni::net::LinkByName(sock, "br0"));
  CHECK_FALSE(Must(cni::net::BridgeVlanFiltering(sock, bridge)));
  cni::test::MustExec(fx, ns, {"ip", "link", "del", "br0"});
  absl::StatusOr<bool> gone = cni::net::BridgeVlanFiltering(sock, bridge);
  CHECK(absl::IsNotFound(gone.status()));
  CHECK(message(gone).rfind("reading vlan_filtering of \"br0\": ", 0) == 0);
}

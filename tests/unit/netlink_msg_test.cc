// The namespace/netlink layer without root: the exact requests it builds, its
// error mapping and its input checks. No message is sent to the kernel.
#include <linux/fib_rules.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>
#include <netlink/attr.h>
#include <netlink/errno.h>
#include <netlink/msg.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "cni/base/error.h"
#include "cni/net/link.h"
#include "cni/net/netlink.h"
#include "cni/net/netns.h"
#include "cni/net/route.h"
#include "cni/net/rule.h"
#include "cni/net/sysctl.h"
#include "cni/net/veth.h"
#include "support/run.h"

namespace {

using namespace cni::net;  // NOLINT: test brevity

template <typename T>
T Must(absl::StatusOr<T> v) {
  INFO(v.status().ToString());
  REQUIRE(v.ok());
  return std::move(*v);
}

IpPrefix P(const char* text) { return Must(IpPrefix::Parse(text)); }
IpAddress A(const char* text) { return Must(IpAddress::Parse(text)); }

// A view of the attributes after a fixed header of `hdrlen` bytes.
struct Attrs {
  nlattr* head;
  int len;
  nlattr* Find(int type) const { return nla_find(head, len, type); }
};

Attrs TopAttrs(nl_msg* msg, size_t hdrlen) {
  nlmsghdr* h = nlmsg_hdr(msg);
  return {nlmsg_attrdata(h, static_cast<int>(hdrlen)), nlmsg_attrlen(h, static_cast<int>(hdrlen))};
}

Attrs Nested(nlattr* a) { return {static_cast<nlattr*>(nla_data(a)), nla_len(a)}; }

std::string Str(nlattr* a) { return a ? std::string(nla_get_string(a)) : std::string("<absent>"); }

}  // namespace

TEST_CASE("veth request puts the peer, with its namespace fd, inside the link info", "[net]") {
  Netns here = Must(Netns::Current());  // any namespace fd will do; nothing is sent
  VethSpec spec;
  spec.name = "eth0";
  spec.peer_name = "veth0011aabb";
  spec.mtu = 1450;
  spec.mac = Must(MacAddress::Parse("0a:58:00:00:00:01"));
  spec.peer_netns = &here;
  NlMsgPtr msg = Must(BuildVethRequest(spec));

  nlmsghdr* h = nlmsg_hdr(msg.get());
  CHECK(h->nlmsg_type == RTM_NEWLINK);
  CHECK((h->nlmsg_flags & (NLM_F_CREATE | NLM_F_EXCL)) == (NLM_F_CREATE | NLM_F_EXCL));
  Attrs top = TopAttrs(msg.get(), sizeof(ifinfomsg));
  CHECK(Str(top.Find(IFLA_IFNAME)) == "eth0");
  REQUIRE(top.Find(IFLA_MTU) != nullptr);
  CHECK(nla_get_u32(top.Find(IFLA_MTU)) == 1450);
  REQUIRE(top.Find(IFLA_ADDRESS) != nullptr);
  CHECK(std::memcmp(nla_data(top.Find(IFLA_ADDRESS)), spec.mac->bytes().data(), 6) == 0);
  // The namespace fd belongs to the peer only: "eth0" stays where it is made.
  CHECK(top.Find(IFLA_NET_NS_FD) == nullptr);

  nlattr* linkinfo = top.Find(IFLA_LINKINFO);
  REQUIRE(linkinfo != nullptr);
  Attrs info = Nested(linkinfo);
  CHECK(Str(info.Find(IFLA_INFO_KIND)) == "veth");
  nlattr* data = info.Find(IFLA_INFO_DATA);
  REQUIRE(data != nullptr);
  nlattr* peer = Nested(data).Find(VETH_INFO_PEER);
  REQUIRE(peer != nullptr);
  // VETH_INFO_PEER holds a struct ifinfomsg followed by the peer's attributes.
  const int skip = NLMSG_ALIGN(sizeof(ifinfomsg));
  Attrs pa{reinterpret_cast<nlattr*>(static_cast<char*>(nla_data(peer)) + skip),
           nla_len(peer) - skip};
  CHECK(Str(pa.Find(IFLA_IFNAME)) == "veth0011aabb");
  REQUIRE(pa.Find(IFLA_NET_NS_FD) != nullptr);
  CHECK(nla_get_u32(pa.Find(IFLA_NET_NS_FD)) == static_cast<uint32_t>(here.fd()));
  REQUIRE(pa.Find(IFLA_MTU) != nullptr);
  CHECK(nla_get_u32(pa.Find(IFLA_MTU)) == 1450);
  CHECK(pa.Find(IFLA_ADDRESS) == nullptr);  // no peer MAC asked for
}

TEST_CASE("route requests: scope, protocol and table defaults", "[net]") {
  RouteSpec r;
  r.dst = P("10.1.0.0/24");
  r.ifindex = 7;

  SECTION("a device route is link scope, proto boot, main table") {
    NlMsgPtr msg = Must(BuildRouteRequest(r, RouteOp::kAdd));
    nlmsghdr* h = nlmsg_hdr(msg.get());
    CHECK(h->nlmsg_type == RTM_NEWROUTE);
    CHECK((h->nlmsg_flags & NLM_F_EXCL) != 0);
    auto* rtm = static_cast<rtmsg*>(nlmsg_data(h));
    CHECK(rtm->rtm_family == AF_INET);
    CHECK(rtm->rtm_dst_len == 24);
    CHECK(rtm->rtm_scope == RT_SCOPE_LINK);
    CHECK(rtm->rtm_protocol == RTPROT_BOOT);
    CHECK(rtm->rtm_type == RTN_UNICAST);
    Attrs a = TopAttrs(msg.get(), sizeof(rtmsg));
    REQUIRE(a.Find(RTA_TABLE) != nullptr);
    CHECK(nla_get_u32(a.Find(RTA_TABLE)) == RT_TABLE_MAIN);
    CHECK(nla_get_u32(a.Find(RTA_OIF)) == 7);
    CHECK(a.Find(RTA_GATEWAY) == nullptr);
  }
  SECTION("adding alongside sends CREATE without EXCL or REPLACE, as upstream's IPAM") {
    NlMsgPtr msg = Must(BuildRouteRequest(r, RouteOp::kAddAlongside));
    nlmsghdr* h = nlmsg_hdr(msg.get());
    CHECK(h->nlmsg_type == RTM_NEWROUTE);
    CHECK((h->nlmsg_flags & NLM_F_CREATE) != 0);
    CHECK((h->nlmsg_flags & (NLM_F_EXCL | NLM_F_REPLACE | NLM_F_APPEND)) == 0);
  }
  SECTION("host bits of the destination are cleared") {
    r.dst = P("10.1.0.9/24");
    NlMsgPtr msg = Must(BuildRouteRequest(r, RouteOp::kAdd));
    Attrs a = TopAttrs(msg.get(), sizeof(rtmsg));
    const uint8_t want[4] = {10, 1, 0, 0};
    CHECK(std::memcmp(nla_data(a.Find(RTA_DST)), want, 4) == 0);
  }
  SECTION("a gateway route is universe scope; table, metric and MTU are sent") {
    r.gw = A("10.1.0.1");
    r.table = 1000;
    r.priority = 20;
    r.mtu = 1400;
    NlMsgPtr msg = Must(BuildRouteRequest(r, RouteOp::kReplace));
    nlmsghdr* h = nlmsg_hdr(msg.get());
    CHECK((h->nlmsg_flags & NLM_F_REPLACE) != 0);
    auto* rtm = static_cast<rtmsg*>(nlmsg_data(h));
    CHECK(rtm->rtm_scope == RT_SCOPE_UNIVERSE);
    Attrs a = TopAttrs(msg.get(), sizeof(rtmsg));
    CHECK(nla_get_u32(a.Find(RTA_TABLE)) == 1000);  // > 255: only the attribute can say it
    CHECK(nla_get_u32(a.Find(RTA_PRIORITY)) == 20);
    REQUIRE(a.Find(RTA_GATEWAY) != nullptr);
    nlattr* metrics = a.Find(RTA_METRICS);
    REQUIRE(metrics != nullptr);
    CHECK(nla_get_u32(Nested(metrics).Find(RTAX_MTU)) == 1400);
  }
  SECTION("delete matches any scope and protocol unless told") {
    NlMsgPtr msg = Must(BuildRouteRequest(r, RouteOp::kDelete));
    nlmsghdr* h = nlmsg_hdr(msg.get());
    CHECK(h->nlmsg_type == RTM_DELROUTE);
    auto* rtm = static_cast<rtmsg*>(nlmsg_data(h));
    CHECK(rtm->rtm_scope == RT_SCOPE_NOWHERE);
    CHECK(rtm->rtm_protocol == RTPROT_UNSPEC);
  }
  SECTION("multipath carries one rtnexthop per path, weight - 1 in rtnh_hops") {
    RouteSpec m;
    m.dst = P("fd00::/64");
    m.multipath = {Nexthop{A("fd00:1::1"), 3, 1}, Nexthop{A("fd00:1::2"), 4, 5}};
    NlMsgPtr msg = Must(BuildRouteRequest(m, RouteOp::kAdd));
    Attrs a = TopAttrs(msg.get(), sizeof(rtmsg));
    nlattr* mp = a.Find(RTA_MULTIPATH);
    REQUIRE(mp != nullptr);
    auto* nh = static_cast<rtnexthop*>(nla_data(mp));
    CHECK(nh->rtnh_ifindex == 3);
    CHECK(nh->rtnh_hops == 0);
    nh = reinterpret_cast<rtnexthop*>(reinterpret_cast<char*>(nh) + RTNH_ALIGN(nh->rtnh_len));
    CHECK(nh->rtnh_ifindex == 4);
    CHECK(nh->rtnh_hops == 4);
  }
}

TEST_CASE("RouteSpec::ToString names the route", "[net]") {
  RouteSpec r;
  r.dst = P("10.2.0.0/16");
  r.gw = A("10.1.0.1");
  r.ifindex = 5;
  r.table = 100;
  r.priority = 7;
  CHECK(r.ToString() == "10.2.0.0/16 via 10.1.0.1 dev #5 table 100 metric 7");
}

TEST_CASE("kernel errors keep errno meaning in the status", "[net]") {
  absl::Status exists = KernelError(EEXIST, "creating veth \"veth1a2b3c4d\"");
  CHECK(absl::IsAlreadyExists(exists));
  CHECK(exists.message() == "creating veth \"veth1a2b3c4d\": File exists");
  CHECK(cni::CodeOf(exists) == 999);

  CHECK(absl::IsNotFound(KernelError(ENODEV, "x")));
  CHECK(absl::IsNotFound(KernelError(ESRCH, "x")));
  CHECK(absl::IsNotFound(KernelError(EADDRNOTAVAIL, "x")));
  CHECK(cni::CodeOf(KernelError(EAGAIN, "x")) == 11);
  CHECK(KernelError(EINVAL, "setting MTU", "MTU too small").message() ==
        "setting MTU: Invalid argument (MTU too small)");

  // libnl's own codes are mapped back to the errno they stand for.
  CHECK(absl::IsAlreadyExists(NlError(-NLE_EXIST, "x")));
  CHECK(NlError(-NLE_NODEV, "looking up link \"eth0\"").message() ==
        "looking up link \"eth0\": No such device");
  CHECK(absl::StrContains(NlError(-NLE_MSGSIZE, "x").message(), "x: "));
}

TEST_CASE("Netns::Open refuses what is not a network namespace", "[net]") {
  cni::test::TempDir dir;
  std::string file = dir.str() + "/not-a-netns";
  std::ofstream(file) << "x";
  absl::StatusOr<Netns> bad = Netns::Open(file);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message() ==
        "opening netns \"" + file + "\": not a network namespace (not a namespace file)");
  CHECK(cni::CodeOf(bad.status()) == 4);

  absl::StatusOr<Netns> missing = Netns::Open(dir.str() + "/nope");
  CHECK(absl::IsNotFound(missing.status()));
  CHECK(cni::CodeOf(missing.status()) == 3);

  CHECK_FALSE(Netns::Open("").ok());
  // Our own namespace opens fine and is the same as itself.
  Netns a = Must(Netns::Current());
  Netns b = Must(a.Dup());
  CHECK(Netns::Same(a, b));
  CHECK(a.fd() != b.fd());
}

TEST_CASE("sysctl keys must stay under net/", "[net]") {
  CHECK(cni::CodeOf(ReadSysctlHere("kernel.hostname").status()) == 7);
  CHECK(cni::CodeOf(ReadSysctlHere("net/../kernel/hostname").status()) == 7);
  CHECK(cni::CodeOf(ReadSysctlHere("net//ipv4").status()) == 7);
  CHECK(cni::CodeOf(WriteSysctlHere("net/ipv4/./ip_forward", "1")) == 7);
  // Readable without privileges, in our own namespace.
  absl::StatusOr<std::string> v = ReadSysctlHere("net.ipv4.ip_forward");
  REQUIRE(v.ok());
  CHECK((*v == "0" || *v == "1"));
}

TEST_CASE("host veth names are veth + 8 hex digits", "[net]") {
  std::string a = RandomVethName();
  std::string b = RandomVethName();
  CHECK(a.size() == 12);
  CHECK(absl::StartsWith(a, "veth"));
  CHECK(a.find_first_not_of("0123456789abcdef", 4) == std::string::npos);
  CHECK(a != b);
}

TEST_CASE("temporary link names belong to their attachment and never change", "[net]") {
  // Pinned: a DEL must find the link an ADD of an older build left.
  CHECK(TemporaryLinkName("tp", "ctr1", "eth0") == "tp3fc0e5fa");  // "tp" + sha512("ctr1/eth0")[:8]
  CHECK(TemporaryLinkName("tp", "ctr1", "eth0") == TemporaryLinkName("tp", "ctr1", "eth0"));
  CHECK(TemporaryLinkName("tp", "ctr1", "eth1") != TemporaryLinkName("tp", "ctr1", "eth0"));
  CHECK(TemporaryLinkName("tp", "ctr2", "eth0") != TemporaryLinkName("tp", "ctr1", "eth0"));
  CHECK(TemporaryLinkName("mv", "ctr1", "eth0").size() == 10);  // within IFNAMSIZ
}

TEST_CASE("rule requests: the table in the header below 256, always in FRA_TABLE, source prefix", "[net]") {
  RuleSpec small{.family = Family::kV4, .src = P("10.1.2.3/32"), .table = 100};
  NlMsgPtr add = Must(BuildRuleRequest(small, RuleOp::kAdd));
  nlmsghdr* h = nlmsg_hdr(add.get());
  CHECK(h->nlmsg_type == RTM_NEWRULE);
  CHECK((h->nlmsg_flags & (NLM_F_CREATE | NLM_F_EXCL)) == (NLM_F_CREATE | NLM_F_EXCL));
  const auto* frh = static_cast<const fib_rule_hdr*>(nlmsg_data(h));
  CHECK(frh->family == AF_INET);
  CHECK(frh->action == FR_ACT_TO_TBL);
  CHECK(frh->table == 100);
  CHECK(frh->src_len == 32);
  Attrs a = TopAttrs(add.get(), sizeof(fib_rule_hdr));
  REQUIRE(a.Find(FRA_TABLE) != nullptr);
  CHECK(nla_get_u32(a.Find(FRA_TABLE)) == 100u);
  REQUIRE(a.Find(FRA_SRC) != nullptr);
  CHECK(nla_len(a.Find(FRA_SRC)) == 4);
  CHECK(a.Find(FRA_PRIORITY) == nullptr);  // the kernel picks one
  CHECK(a.Find(FRA_PROTOCOL) == nullptr);  // unspec, as upstream's rules

  RuleSpec big{.family = Family::kV6, .src = P("fd00::5/128"), .table = 5001, .priority = 300};
  NlMsgPtr del = Must(BuildRuleRequest(big, RuleOp::kDelete));
  h = nlmsg_hdr(del.get());
  CHECK(h->nlmsg_type == RTM_DELRULE);
  frh = static_cast<const fib_rule_hdr*>(nlmsg_data(h));
  CHECK(frh->family == AF_INET6);
  CHECK(frh->table == RT_TABLE_UNSPEC);
  a = TopAttrs(del.get(), sizeof(fib_rule_hdr));
  CHECK(nla_get_u32(a.Find(FRA_TABLE)) == 5001u);
  CHECK(nla_get_u32(a.Find(FRA_PRIORITY)) == 300u);
  CHECK(nla_len(a.Find(FRA_SRC)) == 16);
  CHECK(big.ToString() == "from fd00::5/128 lookup 5001 pref 300");
}

// Router advertisements and the CNI result of a DHCPv6 lease (client6.h,
// lease6.h). No root.
#include <string>

#include <catch2/catch.hpp>

#include "client6.h"
#include "lease6.h"

namespace {

namespace v6 = cni::dhcp::v6;
using cni::dhcp::RouterAdvert;

std::string Bytes(std::initializer_list<int> b) {
  std::string s;
  for (int v : b) s.push_back(static_cast<char>(v));
  return s;
}

cni::net::IpAddress Ip(const char* s) { return *cni::net::IpAddress::Parse(s); }

// An RA (RFC 4861 4.2; bytes written out by hand): router lifetime 1800,
// a prefix information option 2001:db8:1::/64 (L and A set), and with
// `rio` an RFC 4191 route 2001:db8:99::/48 of lifetime 600.
std::string Advert(bool rio, int lifetime = 1800) {
  std::string ra = Bytes({134, 0, 0, 0, 64, 0x80, lifetime >> 8, lifetime & 0xff, 0, 0, 0, 0, 0, 0, 0, 0});
  ra += Bytes({3, 4, 64, 0xc0, 0, 0, 0x1c, 0x20, 0, 0, 0x0e, 0x10, 0, 0, 0, 0,  // PIO header, lifetimes
               0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  if (rio) ra += Bytes({24, 2, 48, 0, 0, 0, 2, 0x58, 0x20, 0x01, 0x0d, 0xb8, 0, 0x99, 0, 0});
  return ra;
}

v6::Message ReplyWithDns() {
  v6::Message m;
  m.type = v6::MessageType::kReply;
  m.Add(v6::opt::kDnsServers, std::string(reinterpret_cast<const char*>(Ip("2001:db8::53").data()), 16));
  m.Add(v6::opt::kDomainList, Bytes({3, 'l', 'a', 'b', 0}));
  return m;
}

}  // namespace

TEST_CASE("dhcpv6 RA: router lifetime, on-link prefix and RFC 4191 routes", "[dhcp]") {
  std::optional<RouterAdvert> ra = cni::dhcp::ParseRouterAdvert(Advert(true), Ip("fe80::1"));
  REQUIRE(ra.has_value());
  CHECK(ra->router == Ip("fe80::1"));
  CHECK(ra->router_lifetime == 1800);
  REQUIRE(ra->prefixes.size() == 1);
  CHECK(ra->prefixes[0].prefix.ToString() == "2001:db8:1::/64");
  CHECK(ra->prefixes[0].on_link);
  REQUIRE(ra->routes.size() == 1);
  CHECK(ra->routes[0].prefix.ToString() == "2001:db8:99::/48");
  CHECK(ra->routes[0].lifetime == 600);
  // Its state-file form reads back the same.
  absl::StatusOr<RouterAdvert> back = RouterAdvert::FromJson(ra->ToJson());
  REQUIRE(back.ok());
  CHECK(back->ToJson() == ra->ToJson());
}

TEST_CASE("dhcpv6 RA: malformed or other ICMPv6 messages are refused", "[dhcp]") {
  std::string ra = Advert(false);
  CHECK_FALSE(cni::dhcp::ParseRouterAdvert(ra.substr(0, 15), Ip("fe80::1")).has_value());
  CHECK_FALSE(cni::dhcp::ParseRouterAdvert(ra.substr(0, 40), Ip("fe80::1")).has_value());  // option cut short
  std::string zero = ra + Bytes({1, 0});  // a zero-length option
  CHECK_FALSE(cni::dhcp::ParseRouterAdvert(zero, Ip("fe80::1")).has_value());
  std::string other = ra;
  other[0] = static_cast<char>(133);
  CHECK_FALSE(cni::dhcp::ParseRouterAdvert(other, Ip("fe80::1")).has_value());
  for (size_t n = 0; n < ra.size(); ++n) (void)cni::dhcp::ParseRouterAdvert(ra.substr(0, n), Ip("fe80::1"));
}

TEST_CASE("dhcpv6 result: prefix length from the on-link prefix, routes from the RA", "[dhcp]") {
  RouterAdvert ra = *cni::dhcp::ParseRouterAdvert(Advert(true), Ip("fe80::1"));
  cni::Result r = cni::dhcp::ResultFromLease6(Ip("2001:db8:1::10"), ra, ReplyWithDns(), 0);
  REQUIRE(r.ips.size() == 1);
  CHECK(r.ips[0].address.ToString() == "2001:db8:1::10/64");
  CHECK(r.ips[0].gateway == Ip("fe80::1"));
  REQUIRE(r.routes.size() == 2);
  CHECK(r.routes[0].dst.ToString() == "::/0");
  CHECK(r.routes[0].gw == Ip("fe80::1"));
  CHECK(r.routes[1].dst.ToString() == "2001:db8:99::/48");
  CHECK(r.routes[1].gw == Ip("fe80::1"));
  CHECK(r.dns.nameservers == std::vector<std::string>{"2001:db8::53"});
  CHECK(r.dns.search == std::vector<std::string>{"lab"});
  // An address outside every on-link prefix is a /128; priority is every route's metric.
  r = cni::dhcp::ResultFromLease6(Ip("2001:db8:2::10"), ra, ReplyWithDns(), 50);
  CHECK(r.ips[0].address.ToString() == "2001:db8:2::10/128");
  CHECK(r.routes.at(0).priority == 50);
  // Not a default router (lifetime 0): no gateway, no default route, the RFC 4191 route stays.
  ra = *cni::dhcp::ParseRouterAdvert(Advert(true, 0), Ip("fe80::1"));
  r = cni::dhcp::ResultFromLease6(Ip("2001:db8:1::10"), ra, ReplyWithDns(), 0);
  CHECK_FALSE(r.ips[0].gateway.has_value());
  REQUIRE(r.routes.size() == 1);
  CHECK(r.routes[0].dst.ToString() == "2001:db8:99::/48");
}

TEST_CASE("dhcpv6 lease times: T1/T2 of the IA, or from the preferred lifetime", "[dhcp]") {
  absl::Time t0 = absl::FromUnixSeconds(1000);
  v6::IaAddress a{Ip("2001:db8::1"), 100, 200};
  cni::dhcp::LeaseTimes t = cni::dhcp::TimesOf6(30, 60, a, t0);
  CHECK(t.renew == t0 + absl::Seconds(30));
  CHECK(t.rebind == t0 + absl::Seconds(60));
  CHECK(t.expire == t0 + absl::Seconds(200));
  t = cni::dhcp::TimesOf6(0, 0, a, t0);
  CHECK(t.renew == t0 + absl::Seconds(50));
  CHECK(t.rebind == t0 + absl::Seconds(80));
  a.valid = 0xffffffff;
  CHECK(cni::dhcp::TimesOf6(0, 0, a, t0).expire > t0 + absl::Hours(24 * 365));
}

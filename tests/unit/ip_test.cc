// IP addresses, prefixes and MAC addresses (cni/base/ip.h).
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "cni/base/error.h"
#include "cni/base/ip.h"

namespace cni::net {
namespace {

IpAddress Ip(const std::string& text) {
  absl::StatusOr<IpAddress> ip = IpAddress::Parse(text);
  INFO("address: " << text);
  REQUIRE(ip.ok());
  return *ip;
}

IpPrefix Prefix(const std::string& text) {
  absl::StatusOr<IpPrefix> p = IpPrefix::Parse(text);
  INFO("prefix: " << text);
  REQUIRE(p.ok());
  return *p;
}

}  // namespace

TEST_CASE("IpAddress parses and prints IPv4 as a dotted quad", "[ip]") {
  IpAddress ip = Ip("10.1.2.3");
  CHECK(ip.is_v4());
  CHECK(ip.family() == Family::kV4);
  CHECK(ip.bit_length() == 32);
  CHECK(ip.byte_length() == 4);
  CHECK(ip.ToString() == "10.1.2.3");
  CHECK(ip == IpAddress::V4({10, 1, 2, 3}));
  CHECK(IpAddress().ToString() == "0.0.0.0");
  CHECK(Ip("255.255.255.255").ToString() == "255.255.255.255");
}

TEST_CASE("IpAddress prints IPv6 the way Go does (RFC 5952)", "[ip]") {
  struct Case {
    const char* in;
    const char* out;
  };
  for (const Case& c : {
           Case{"::", "::"},
           Case{"::1", "::1"},
           Case{"2001:0DB8:0000:0000:0000:0000:0000:0001", "2001:db8::1"},
           Case{"fe80::0:1", "fe80::1"},
           Case{"2001:db8:0:1:0:0:0:1", "2001:db8:0:1::1"},    // longest zero run
           Case{"2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"},  // first of equal runs
           Case{"2001:db8:1:1:1:1:0:1", "2001:db8:1:1:1:1:0:1"},  // a single 0 stays
           Case{"ff02::1:ff00:1", "ff02::1:ff00:1"},
       }) {
    INFO("address: " << c.in);
    IpAddress ip = Ip(c.in);
    CHECK(ip.is_v6());
    CHECK(ip.bit_length() == 128);
    CHECK(ip.ToString() == c.out);
  }
}

TEST_CASE("IpAddress keeps IPv4-mapped IPv6 as IPv6", "[ip]") {
  IpAddress ip = Ip("::ffff:1.2.3.4");
  CHECK(ip.is_v6());
  CHECK(ip != Ip("1.2.3.4"));
}

TEST_CASE("IpAddress rejects malformed text with code 7 naming it", "[ip]") {
  for (const char* bad : {"", "1.2.3", "1.2.3.4.5", "256.1.1.1", "1.2.3.-1", "a.b.c.d", "1.2.3.4 ",
                          " 1.2.3.4", "1:2:3:4:5:6:7:8:9", "2001:db8:::1", "gg::1", "10.0.0.1/24"}) {
    INFO("address: " << bad);
    absl::StatusOr<IpAddress> ip = IpAddress::Parse(bad);
    REQUIRE_FALSE(ip.ok());
    CHECK(CodeOf(ip.status()) == 7);
    CHECK_THAT(std::string(ip.status().message()), Catch::Contains(bad));
  }
}

TEST_CASE("IpAddress::IsUnspecified and IsMulticast", "[ip]") {
  CHECK(Ip("0.0.0.0").IsUnspecified());
  CHECK(Ip("::").IsUnspecified());
  CHECK_FALSE(Ip("0.0.0.1").IsUnspecified());
  CHECK(Ip("224.0.0.1").IsMulticast());
  CHECK(Ip("239.255.255.255").IsMulticast());
  CHECK_FALSE(Ip("223.255.255.255").IsMulticast());
  CHECK(Ip("ff02::1").IsMulticast());
  CHECK_FALSE(Ip("fe80::1").IsMulticast());
}

TEST_CASE("IpAddress ordering: IPv4 before IPv6, then numeric", "[ip]") {
  CHECK(Ip("10.0.0.1") < Ip("10.0.0.2"));
  CHECK(Ip("9.255.255.255") < Ip("10.0.0.0"));
  CHECK(Ip("255.255.255.255") < Ip("::"));
  CHECK(Ip("2001:db8::1") < Ip("2001:db8::1:0"));
  CHECK((Ip("10.0.0.1") <=> Ip("10.0.0.1")) == std::strong_ordering::equal);
}

TEST_CASE("IpAddress Next/Prev carry across bytes", "[ip]") {
  CHECK(Ip("10.0.0.1").Next() == Ip("10.0.0.2"));
  CHECK(Ip("10.0.0.255").Next() == Ip("10.0.1.0"));
  CHECK(Ip("10.0.255.255").Next() == Ip("10.1.0.0"));
  CHECK(Ip("10.1.0.0").Prev() == Ip("10.0.255.255"));
  CHECK(Ip("2001:db8::ffff").Next() == Ip("2001:db8::1:0"));
  CHECK(Ip("2001:db8::1:0").Prev() == Ip("2001:db8::ffff"));
}

TEST_CASE("IpAddress Next/Prev/Add wrap inside the family", "[ip]") {
  CHECK(Ip("255.255.255.255").Next() == Ip("0.0.0.0"));
  CHECK(Ip("0.0.0.0").Prev() == Ip("255.255.255.255"));
  CHECK(Ip("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff").Next() == Ip("::"));
  CHECK(Ip("::").Prev() == Ip("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"));
  // Wrapping never leaks into the bytes past an IPv4 address.
  IpAddress wrapped = Ip("255.255.255.255").Add(2);
  CHECK(wrapped.is_v4());
  CHECK(wrapped == Ip("0.0.0.1"));
  CHECK(Ip("0.0.0.1").Add(-2) == Ip("255.255.255.255"));
}

TEST_CASE("IpAddress::Add with large and negative steps", "[ip]") {
  CHECK(Ip("10.0.0.0").Add(0) == Ip("10.0.0.0"));
  CHECK(Ip("10.0.0.0").Add(256) == Ip("10.0.1.0"));
  CHECK(Ip("10.0.0.0").Add(65536 + 257) == Ip("10.1.1.1"));
  CHECK(Ip("10.1.1.1").Add(-(65536 + 257)) == Ip("10.0.0.0"));
  CHECK(Ip("10.0.0.0").Add(-1) == Ip("9.255.255.255"));
  // 2^32 is a full turn for IPv4.
  CHECK(Ip("10.0.0.7").Add(int64_t{1} << 32) == Ip("10.0.0.7"));
  CHECK(Ip("::").Add(INT64_MAX) == Ip("::7fff:ffff:ffff:ffff"));
  CHECK(Ip("::").Add(INT64_MIN) == Ip("ffff:ffff:ffff:ffff:8000::"));
  CHECK(Ip("2001:db8::").Add(int64_t{1} << 40) == Ip("2001:db8::100:0:0"));
}

TEST_CASE("IpPrefix parses and prints with host bits kept", "[ip]") {
  IpPrefix p = Prefix("10.1.2.3/24");
  CHECK(p.addr() == Ip("10.1.2.3"));
  CHECK(p.len() == 24);
  CHECK(p.is_v4());
  CHECK(p.ToString() == "10.1.2.3/24");
  CHECK(p.HasHostBits());
  CHECK_FALSE(Prefix("10.1.2.0/24").HasHostBits());
  CHECK(Prefix("2001:DB8:0::5/64").ToString() == "2001:db8::5/64");
  CHECK(Prefix("0.0.0.0/0").ToString() == "0.0.0.0/0");
  CHECK(Prefix("::/0").ToString() == "::/0");
  CHECK(IpPrefix::Host(Ip("10.0.0.1")).ToString() == "10.0.0.1/32");
  CHECK(IpPrefix::Host(Ip("fd00::1")).ToString() == "fd00::1/128");
}

TEST_CASE("IpPrefix rejects malformed text with code 7", "[ip]") {
  for (const char* bad : {"10.0.0.1", "10.0.0.1/", "10.0.0.1/33", "10.0.0.1/-1", "10.0.0.1/+8",
                          "10.0.0.1/ 8", "10.0.0.1/8 ", "10.0.0.1/0008", "fd00::/129", "/24",
                          "x/24", "10.0.0.1/24/1"}) {
    INFO("prefix: " << bad);
    absl::StatusOr<IpPrefix> p = IpPrefix::Parse(bad);
    REQUIRE_FALSE(p.ok());
    CHECK(CodeOf(p.status()) == 7);
  }
}

TEST_CASE("IpPrefix Network, LastAddress and Mask", "[ip]") {
  IpPrefix p = Prefix("10.1.2.3/24");
  CHECK(p.Network() == Prefix("10.1.2.0/24"));
  CHECK(p.LastAddress() == Ip("10.1.2.255"));
  CHECK(p.Mask() == Ip("255.255.255.0"));

  CHECK(Prefix("10.1.2.3/20").Network() == Prefix("10.1.0.0/20"));
  CHECK(Prefix("10.1.2.3/20").LastAddress() == Ip("10.1.15.255"));
  CHECK(Prefix("10.1.2.3/20").Mask() == Ip("255.255.240.0"));
  CHECK(Prefix("10.1.2.3/32").Network() == Prefix("10.1.2.3/32"));
  CHECK(Prefix("10.1.2.3/32").LastAddress() == Ip("10.1.2.3"));
  CHECK(Prefix("10.1.2.3/0").Network() == Prefix("0.0.0.0/0"));
  CHECK(Prefix("10.1.2.3/0").LastAddress() == Ip("255.255.255.255"));
  CHECK(Prefix("10.1.2.3/31").LastAddress() == Ip("10.1.2.3"));

  IpPrefix v6 = Prefix("2001:db8:1:2:3:4:5:6/64");
  CHECK(v6.Network() == Prefix("2001:db8:1:2::/64"));
  CHECK(v6.LastAddress() == Ip("2001:db8:1:2:ffff:ffff:ffff:ffff"));
  CHECK(v6.Mask() == Ip("ffff:ffff:ffff:ffff::"));
  CHECK(Prefix("fd00::1/128").Network() == Prefix("fd00::1/128"));
  CHECK(Prefix("fd00::1/0").LastAddress() == Ip("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"));
}

TEST_CASE("IpPrefix::Contains", "[ip]") {
  IpPrefix p = Prefix("10.1.0.0/16");
  CHECK(p.Contains(Ip("10.1.0.0")));
  CHECK(p.Contains(Ip("10.1.255.255")));
  CHECK_FALSE(p.Contains(Ip("10.2.0.0")));
  CHECK_FALSE(p.Contains(Ip("10.0.255.255")));
  // Host bits in the prefix itself do not matter.
  CHECK(Prefix("10.1.2.3/16").Contains(Ip("10.1.200.1")));
  CHECK(Prefix("0.0.0.0/0").Contains(Ip("1.2.3.4")));
  // Never across families.
  CHECK_FALSE(Prefix("0.0.0.0/0").Contains(Ip("::1")));
  CHECK_FALSE(Prefix("::/0").Contains(Ip("1.2.3.4")));
  CHECK(Prefix("fd00::/8").Contains(Ip("fdff::1")));
  CHECK_FALSE(Prefix("fd00::/8").Contains(Ip("fe00::1")));
}

TEST_CASE("IpPrefix::Overlaps", "[ip]") {
  CHECK(Prefix("10.0.0.0/8").Overlaps(Prefix("10.1.0.0/16")));
  CHECK(Prefix("10.1.0.0/16").Overlaps(Prefix("10.0.0.0/8")));
  CHECK(Prefix("10.1.0.0/16").Overlaps(Prefix("10.1.0.0/16")));
  CHECK_FALSE(Prefix("10.1.0.0/16").Overlaps(Prefix("10.2.0.0/16")));
  CHECK_FALSE(Prefix("10.0.0.0/25").Overlaps(Prefix("10.0.0.128/25")));
  CHECK(Prefix("10.0.0.5/24").Overlaps(Prefix("10.0.0.200/30")));
  CHECK_FALSE(Prefix("0.0.0.0/0").Overlaps(Prefix("::/0")));
  CHECK(Prefix("fd00::/8").Overlaps(Prefix("fd12:3456::/32")));
  CHECK_FALSE(Prefix("fd00::/16").Overlaps(Prefix("fd01::/16")));
}

TEST_CASE("MacAddress parses colon and dash forms, any case", "[ip]") {
  absl::StatusOr<MacAddress> mac = MacAddress::Parse("0A:58:0a:F4:00:01");
  REQUIRE(mac.ok());
  CHECK(mac->ToString() == "0a:58:0a:f4:00:01");
  CHECK(mac->bytes() == std::array<uint8_t, 6>{0x0a, 0x58, 0x0a, 0xf4, 0x00, 0x01});
  absl::StatusOr<MacAddress> dashed = MacAddress::Parse("0a-58-0a-f4-00-01");
  REQUIRE(dashed.ok());
  CHECK(*dashed == *mac);
  CHECK(MacAddress().ToString() == "00:00:00:00:00:00");
}

TEST_CASE("MacAddress rejects malformed text with code 7", "[ip]") {
  for (const char* bad : {"", "0a:58:0a:f4:00", "0a:58:0a:f4:00:01:02", "0a:58:0a:f4:00:1",
                          "0a:58:0a:f4:00:001", "0a:58:0a:f4:00:zz", "0a58.0af4.0001",
                          "0a:58:0a:f4:00:01 "}) {
    INFO("mac: " << bad);
    absl::StatusOr<MacAddress> mac = MacAddress::Parse(bad);
    REQUIRE_FALSE(mac.ok());
    CHECK(CodeOf(mac.status()) == 7);
  }
}

TEST_CASE("MacAddress::RandomLocal is unicast and locally administered", "[ip]") {
  std::set<std::string> seen;
  for (int i = 0; i < 64; ++i) {
    MacAddress mac = MacAddress::RandomLocal();
    uint8_t first = mac.bytes()[0];
    CHECK((first & 0x01) == 0);  // I/G bit clear: unicast
    CHECK((first & 0x02) == 2);  // U/L bit set: locally administered
    seen.insert(mac.ToString());
  }
  // 46 random bits: 64 draws practically never collide.
  CHECK(seen.size() > 60);
}

}  // namespace cni::net

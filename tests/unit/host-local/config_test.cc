// host-local configuration: defaults, precedence and validation.
#include "config.h"

#include <catch2/catch.hpp>

#include "cni/base/error.h"

using cni::Json;
using cni::hostlocal::Config;

namespace {

absl::StatusOr<Config> Parse(const std::string& text, const std::string& cni_args = "",
                             const std::string& version = "1.0.0",
                             const std::string& name = "net1") {
  cni::CmdArgs args;
  args.conf.raw = Json::parse(text);
  args.conf.cni_version = version;
  args.conf.name = name;
  args.args = cni_args;
  return Config::Parse(args);
}

std::string Ip(const cni::net::IpAddress& ip) { return ip.ToString(); }

}  // namespace

TEST_CASE("defaults of a range follow upstream", "[host-local][config]") {
  auto c = Parse(R"({"ipam":{"type":"host-local","ranges":[[{"subnet":"10.1.2.0/24"}]]}})");
  REQUIRE(c.ok());
  REQUIRE(c->ranges.size() == 1);
  const auto& r = c->ranges[0][0];
  CHECK(Ip(r.gateway) == "10.1.2.1");
  CHECK(Ip(r.range_start) == "10.1.2.1");  // the iterator skips the gateway
  CHECK(Ip(r.range_end) == "10.1.2.254");  // not the broadcast
  CHECK(c->data_dir == "/var/lib/cni/networks");
  CHECK(c->StoreDir() == "/var/lib/cni/networks/net1");

  auto v6 = Parse(R"({"ipam":{"ranges":[[{"subnet":"2001:db8::/64"}]]}})");
  REQUIRE(v6.ok());
  CHECK(Ip(v6->ranges[0][0].range_end) == "2001:db8::ffff:ffff:ffff:ffff");
  CHECK(Ip(v6->ranges[0][0].gateway) == "2001:db8::1");
}

TEST_CASE("explicit range bounds and gateway", "[host-local][config]") {
  auto c = Parse(R"({"ipam":{"ranges":[[{"subnet":"10.1.2.0/24","rangeStart":"10.1.2.10",
      "rangeEnd":"10.1.2.20","gateway":"10.1.2.254"}]],"dataDir":"/tmp/x","routes":[
      {"dst":"0.0.0.0/0"},{"dst":"192.168.0.0/16","gw":"10.1.2.1"}]}})");
  REQUIRE(c.ok());
  const auto& r = c->ranges[0][0];
  CHECK(Ip(r.range_start) == "10.1.2.10");
  CHECK(Ip(r.range_end) == "10.1.2.20");
  CHECK(Ip(r.gateway) == "10.1.2.254");
  CHECK(c->data_dir == "/tmp/x");
  REQUIRE(c->routes.size() == 2);
  CHECK(c->routes[0].dst.ToString() == "0.0.0.0/0");
  CHECK(!c->routes[0].gw.has_value());
  CHECK(Ip(*c->routes[1].gw) == "10.1.2.1");
}

TEST_CASE("ipRanges, the legacy range and ranges are stacked in upstream's order",
          "[host-local][config]") {
  auto c = Parse(R"({"runtimeConfig":{"ipRanges":[[{"subnet":"10.9.0.0/24"}]]},
      "ipam":{"subnet":"10.1.0.0/24","ranges":[[{"subnet":"10.2.0.0/24"}],[{"subnet":"2001:db8::/64"}]]}})");
  REQUIRE(c.ok());
  REQUIRE(c->ranges.size() == 4);
  CHECK(c->ranges[0][0].subnet.ToString() == "10.9.0.0/24");
  CHECK(c->ranges[1][0].subnet.ToString() == "10.1.0.0/24");
  CHECK(c->ranges[2][0].subnet.ToString() == "10.2.0.0/24");
  CHECK(c->ranges[3][0].subnet.ToString() == "2001:db8::/64");
}

TEST_CASE("keys match case-insensitively like Go's decoder", "[host-local][config]") {
  auto c = Parse(
      R"({"IPAM":{"Ranges":[[{"SUBNET":"10.1.0.0/24","rangestart":"10.1.0.5"}]],"datadir":"/d"}})");
  REQUIRE(c.ok());
  CHECK(Ip(c->ranges[0][0].range_start) == "10.1.0.5");
  CHECK(c->data_dir == "/d");
}

TEST_CASE("requested IPs: CNI_ARGS, args.cni.ips, runtimeConfig.ips in that order",
          "[host-local][config]") {
  auto c = Parse(R"({"args":{"cni":{"ips":["10.1.0.7/24","10.1.0.5"]}},
      "runtimeConfig":{"ips":["2001:db8::9/64","10.1.0.7"]},
      "ipam":{"ranges":[[{"subnet":"10.1.0.0/24"}],[{"subnet":"2001:db8::/64"}]]}})",
                 "IgnoreUnknown=1;IP=10.1.0.3;K8S_POD_NAME=x");
  REQUIRE(c.ok());
  std::vector<std::string> ips;
  for (const auto& ip : c->requested_ips) ips.push_back(ip.ToString());
  CHECK(ips == std::vector<std::string>{"10.1.0.3", "10.1.0.7", "10.1.0.5", "2001:db8::9"});

  auto bad = Parse(R"({"ipam":{"ranges":[[{"subnet":"10.1.0.0/24"}]]}})", "IP=10.1.0.300");
  CHECK(!bad.ok());
  auto unknown = Parse(R"({"ipam":{"ranges":[[{"subnet":"10.1.0.0/24"}]]}})", "FOO=bar");
  CHECK(!unknown.ok());
}

TEST_CASE("invalid configurations are code 7 with a clear message", "[host-local][config]") {
  struct Case {
    const char* name;
    const char* conf;
    const char* msg;
  } cases[] = {
      {"too small v4", R"({"ipam":{"ranges":[[{"subnet":"10.1.0.0/31"}]]}})", "too small"},
      {"too small v6", R"({"ipam":{"ranges":[[{"subnet":"2001:db8::/127"}]]}})", "too small"},
      {"host bits", R"({"ipam":{"ranges":[[{"subnet":"10.1.0.5/24"}]]}})", "host bits"},
      {"start outside",
       R"({"ipam":{"ranges":[[{"subnet":"10.1.0.0/24","rangeStart":"10.2.0.1"}]]}})",
       "RangeStart 10.2.0.1 not in network"},
      {"end outside", R"({"ipam":{"ranges":[[{"subnet":"10.1.0.0/24","rangeEnd":"10.1.1.1"}]]}})",
       "RangeEnd"},
      {"gateway outside",
       R"({"ipam":{"ranges":[[{"subnet":"10.1.0.0/24","gateway":"10.2.0.1"}]]}})",
       "gateway 10.2.0.1 not in network 10.1.0.0/24"},
      {"gateway of the other family",
       R"({"ipam":{"ranges":[[{"subnet":"10.1.0.0/24","gateway":"2001:db8::1"}]]}})",
       "gateway 2001:db8::1 not in network 10.1.0.0/24"},
      {"legacy gateway outside",
       R"({"ipam":{"subnet":"2001:db8::/64","gateway":"2001:db9::1"}})",
       "gateway 2001:db9::1 not in network 2001:db8::/64"},
      {"overlapping sets",
       R"({"ipam":{"ranges":[[{"subnet":"10.1.0.0/24"}],[{"subnet":"10.1.0.0/16"}]]}})",
       "overlaps"},
      {"overlap in a set",
       R"({"ipam":{"ranges":[[{"subnet":"10.1.0.0/24"},{"subnet":"10.1.0.0/25"}]]}})", "overlap"},
      {"mixed families",
       R"({"ipam":{"ranges":[[{"subnet":"10.1.0.0/24"},{"subnet":"2001:db8::/64"}]]}})", "mixed"},
      {"no ranges", R"({"ipam":{"type":"host-local"}})", "no IP ranges"},
      {"no ipam", R"({"type":"x"})", "ipam"},
      {"bad subnet", R"({"ipam":{"ranges":[[{"subnet":"10.1.0.0/33"}]]}})", "invalid"},
      {"empty set", R"({"ipam":{"ranges":[[]]}})", "empty range set"},
      {"dataDir escape",
       R"({"ipam":{"dataDir":"/tmp/a/../../etc","ranges":[[{"subnet":"10.1.0.0/24"}]]}})",
       "dataDir"},
  };
  for (const Case& tc : cases) {
    INFO(tc.name);
    auto c = Parse(tc.conf);
    REQUIRE(!c.ok());
    CHECK(cni::CodeOf(c.status()) == 7);
    CHECK_THAT(std::string(c.status().message()), Catch::Contains(tc.msg));
  }
}

TEST_CASE("network names that are not one path component are rejected", "[host-local][config]") {
  for (const char* name : {"..", ".", "a/b", "../etc", ""}) {
    INFO(name);
    auto c = Parse(R"({"ipam":{"ranges":[[{"subnet":"10.1.0.0/24"}]]}})", "", "1.0.0", name);
    REQUIRE(!c.ok());
    CHECK(cni::CodeOf(c.status()) == 7);
  }
}

TEST_CASE("old versions allow one address per family", "[host-local][config]") {
  const char* two =
      R"({"ipam":{"ranges":[[{"subnet":"10.1.0.0/24"}],[{"subnet":"10.2.0.0/24"}]]}})";
  CHECK(!Parse(two, "", "0.2.0").ok());
  CHECK(Parse(two, "", "0.3.0").ok());
  const char* dual =
      R"({"ipam":{"ranges":[[{"subnet":"10.1.0.0/24"}],[{"subnet":"2001:db8::/64"}]]}})";
  CHECK(Parse(dual, "", "0.2.0").ok());
}

TEST_CASE("range helpers", "[host-local][config]") {
  auto c = Parse(
      R"({"ipam":{"ranges":[[{"subnet":"10.1.0.0/24","rangeStart":"10.1.0.10","rangeEnd":"10.1.0.20"},
      {"subnet":"10.2.0.0/24"}]]}})");
  REQUIRE(c.ok());
  const auto& set = c->ranges[0];
  auto ip = [](const char* s) { return *cni::net::IpAddress::Parse(s); };
  CHECK(cni::hostlocal::RangeSetContains(set, ip("10.1.0.10")));
  CHECK(!cni::hostlocal::RangeSetContains(set, ip("10.1.0.9")));
  CHECK(!cni::hostlocal::RangeSetContains(set, ip("10.1.0.21")));
  CHECK(cni::hostlocal::RangeFor(set, ip("10.2.0.77")) == &set[1]);
  CHECK(cni::hostlocal::RangeSetToString(set) == "10.1.0.10-10.1.0.20,10.2.0.1-10.2.0.254");
}

TEST_CASE("resolv.conf parsing", "[host-local][config]") {
  cni::Dns dns = cni::hostlocal::ParseResolvConf(
      "# comment\n; other\nnameserver 10.0.0.1\nnameserver   10.0.0.2\ndomain example.com\n"
      "search a.example b.example\noptions ndots:5 rotate\nbogus\n");
  CHECK(dns.nameservers == std::vector<std::string>{"10.0.0.1", "10.0.0.2"});
  CHECK(dns.domain == "example.com");
  CHECK(dns.search == std::vector<std::string>{"a.example", "b.example"});
  CHECK(dns.options == std::vector<std::string>{"ndots:5", "rotate"});
}

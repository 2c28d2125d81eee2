// Allocation order (upstream's round robin), requested IPs, duplicates and
// exhaustion, against a real store in a scratch directory.
#include "allocator.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "support/run.h"

namespace fs = std::filesystem;
using cni::Json;
using cni::hostlocal::Allocator;
using cni::hostlocal::RangeIter;
using cni::hostlocal::RangeSet;
using cni::hostlocal::Store;

namespace {

cni::net::IpAddress Ip(const char* s) { return *cni::net::IpAddress::Parse(s); }

RangeSet Set(const std::string& ranges_json) {
  cni::CmdArgs args;
  args.conf.raw = Json::parse(R"({"ipam":{"ranges":[)" + ranges_json + "]}}");
  args.conf.cni_version = "1.0.0";
  args.conf.name = "n";
  auto c = cni::hostlocal::Config::Parse(args);
  REQUIRE(c.ok());
  return c->ranges[0];
}

std::vector<std::string> Walk(const RangeSet& set, std::optional<cni::net::IpAddress> last,
                              size_t max = 100) {
  RangeIter it(set, last);
  std::vector<std::string> out;
  while (auto c = it.Next()) {
    out.push_back(c->first.ToString());
    if (out.size() >= max) break;
  }
  return out;
}

struct Fixture {
  cni::test::TempDir tmp;
  std::string dir = tmp.str() + "/net";
  std::unique_ptr<Store> store;
  Fixture() {
    auto s = Store::Open(dir);
    REQUIRE(s.ok());
    store = *std::move(s);
    REQUIRE(store->Lock().ok());
  }
  ~Fixture() { (void)store->Unlock(); }
};

}  // namespace

TEST_CASE("iteration starts at rangeStart and skips the gateway", "[host-local][allocator]") {
  RangeSet set = Set(R"([{"subnet":"10.0.0.0/29"}])");
  CHECK(Walk(set, std::nullopt) ==
        std::vector<std::string>{"10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.5", "10.0.0.6"});
}

TEST_CASE("iteration resumes after the last reserved IP and wraps", "[host-local][allocator]") {
  RangeSet set = Set(R"([{"subnet":"10.0.0.0/29"}])");
  CHECK(Walk(set, Ip("10.0.0.4")) ==
        std::vector<std::string>{"10.0.0.5", "10.0.0.6", "10.0.0.2", "10.0.0.3", "10.0.0.4"});
  // A last reserved IP outside the set: start from the beginning.
  CHECK(Walk(set, Ip("192.168.0.1")).front() == "10.0.0.2");
}

TEST_CASE("iteration crosses the ranges of a set", "[host-local][allocator]") {
  RangeSet set = Set(R"([{"subnet":"10.0.0.0/30"},{"subnet":"10.0.1.0/24","rangeStart":"10.0.1.10",
      "rangeEnd":"10.0.1.11"}])");
  CHECK(Walk(set, std::nullopt) == std::vector<std::string>{"10.0.0.2", "10.0.1.10", "10.0.1.11"});
  CHECK(Walk(set, Ip("10.0.1.10")) ==
        std::vector<std::string>{"10.0.1.11", "10.0.0.2", "10.0.1.10"});
}

TEST_CASE("allocation is round robin", "[host-local][allocator]") {
  Fixture f;
  RangeSet set = Set(R"([{"subnet":"10.0.0.0/29"}])");
  Allocator alloc(set, *f.store, 0);
  auto a = alloc.Get("a", "eth0", std::nullopt);
  REQUIRE(a.ok());
  CHECK(a->address.ToString() == "10.0.0.2/29");
  CHECK(a->gateway->ToString() == "10.0.0.1");
  auto b = alloc.Get("b", "eth0", std::nullopt);
  REQUIRE(b.ok());
  CHECK(b->address.ToString() == "10.0.0.3/29");
  REQUIRE(f.store->ReleaseByAttachment("a", "eth0").ok());
  // .2 is free again, but round robin continues after .3.
  auto c = alloc.Get("c", "eth0", std::nullopt);
  REQUIRE(c.ok());
  CHECK(c->address.ToString() == "10.0.0.4/29");
}

TEST_CASE("duplicate allocation in one range set is refused", "[host-local][allocator]") {
  Fixture f;
  RangeSet set = Set(R"([{"subnet":"10.0.0.0/29"}])");
  Allocator alloc(set, *f.store, 0);
  REQUIRE(alloc.Get("a", "eth0", std::nullopt).ok());
  auto again = alloc.Get("a", "eth0", std::nullopt);
  REQUIRE(!again.ok());
  CHECK_THAT(
      std::string(again.status().message()),
      Catch::Contains("10.0.0.2 has been allocated to a, duplicate allocation is not allowed"));
  CHECK(alloc.Get("a", "eth1", std::nullopt).ok());  // another interface is another attachment
}

TEST_CASE("requested IPs", "[host-local][allocator]") {
  Fixture f;
  RangeSet set = Set(R"([{"subnet":"10.0.0.0/24"}])");
  Allocator alloc(set, *f.store, 0);
  auto a = alloc.Get("a", "eth0", Ip("10.0.0.77"));
  REQUIRE(a.ok());
  CHECK(a->address.ToString() == "10.0.0.77/24");
  auto taken = alloc.Get("b", "eth0", Ip("10.0.0.77"));
  REQUIRE(!taken.ok());
  CHECK_THAT(std::string(taken.status().message()),
             Catch::Contains("requested IP address 10.0.0.77 is not available in range set"));
  auto gw = alloc.Get("b", "eth0", Ip("10.0.0.1"));
  REQUIRE(!gw.ok());
  CHECK_THAT(std::string(gw.status().message()), Catch::Contains("is subnet's gateway"));
  // Round robin continues after the requested address.
  auto next = alloc.Get("c", "eth0", std::nullopt);
  REQUIRE(next.ok());
  CHECK(next->address.ToString() == "10.0.0.78/24");
}

TEST_CASE("an exhausted pool reports upstream's message", "[host-local][allocator]") {
  Fixture f;
  RangeSet set = Set(R"([{"subnet":"10.0.0.0/30"}])");  // only .2 is allocatable
  Allocator alloc(set, *f.store, 0);
  REQUIRE(alloc.Get("a", "eth0", std::nullopt).ok());
  auto full = alloc.Get("b", "eth0", std::nullopt);
  REQUIRE(!full.ok());
  CHECK(std::string(full.status().message()) ==
        "no IP addresses available in range set: 10.0.0.1-10.0.0.2");
}

TEST_CASE("a nearly full pool falls back to one directory listing", "[host-local][allocator]") {
  Fixture f;
  RangeSet set = Set(R"([{"subnet":"10.0.0.0/22"}])");
  // Everything but 10.0.3.200 is taken, written directly as upstream would.
  RangeIter it(set, std::nullopt);
  while (auto c = it.Next()) {
    std::string name = c->first.ToString();
    if (name == "10.0.3.200") continue;
    std::ofstream(f.dir + "/" + name) << "other\r\neth0";
  }
  REQUIRE(f.store->Unlock().ok());
  REQUIRE(f.store->Lock().ok());  // the directory changed behind our back: rebuild
  Allocator alloc(set, *f.store, 0);
  auto got = alloc.Get("a", "eth0", std::nullopt);
  REQUIRE(got.ok());
  CHECK(got->address.ToString() == "10.0.3.200/22");
  auto none = alloc.Get("b", "eth0", std::nullopt);
  CHECK(!none.ok());
}

// cni/fw/rule_record.h, the file side: each store sees only its own
// network's records, GC forgets the stale ones and a killed write's
// temporary file but not a valid key's, and an unreadable record counts as
// none. (Replace, Delete and Collect run against the kernel in the netns
// tests of ipMasq, portmap and firewall.)
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cni/fw/names.h"
#include "cni/fw/rule_record.h"
#include "cni/net/netns.h"
#include "support/run.h"

namespace {

constexpr const char* kRecord = R"({"tables":{"ip":7},"rules":[{"family":"ip","table":"t","chain":"c","handle":3}]})";

std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace

TEST_CASE("fw: rule records are scoped to their network, and GC forgets only the stale ones", "[unit][fw]") {
  absl::StatusOr<uint64_t> cookie = cni::net::CurrentNetnsCookie();
  if (!cookie.ok()) {
    WARN("no netns cookies on this kernel: records are disabled");
    return;
  }
  cni::test::TempDir tmp;
  const std::string dir = tmp.str();
  auto file = [&](const std::string& network, const std::string& key) {
    return absl::StrCat(dir, "/", *cookie, "-", cni::fw::NetworkHash(network), "-", key);
  };
  for (const char* key : {"a1", "a2", "a3"}) std::ofstream(file("neta", key)) << kRecord;
  std::ofstream(file("neta", "a4") + "~") << "{";  // a killed write of a4
  std::ofstream(file("neta", "a2") + "~") << "{";  // a2's ADD writing now
  std::ofstream(file("netb", "b1")) << kRecord;
  std::ofstream(file("netb", "b2") + "~") << "{";
  std::ofstream(file("neta", "bad")) << "not json";

  const cni::fw::RuleRecords a(dir, "t", "neta");
  const cni::fw::RuleRecords b(dir, "t", "netb");
  CHECK(a.Has("a1"));
  CHECK_FALSE(a.Has("b1"));  // another network's
  CHECK(b.Has("b1"));
  CHECK_FALSE(a.Has("bad"));  // unreadable: no record, the caller lists
  CHECK_FALSE(a.Has("a4"));   // only a temporary file
  CHECK(Sorted(a.StaleKeys({"a2"})) == std::vector<std::string>{"a1", "a3", "bad"});
  CHECK(b.StaleKeys({"b1"}).empty());

  a.ForgetAllBut({"a2", "a3"});
  CHECK_FALSE(std::filesystem::exists(file("neta", "a1")));
  CHECK_FALSE(std::filesystem::exists(file("neta", "bad")));
  CHECK_FALSE(std::filesystem::exists(file("neta", "a4") + "~"));
  CHECK(std::filesystem::exists(file("neta", "a2")));
  CHECK(std::filesystem::exists(file("neta", "a2") + "~"));  // a valid key's write in flight stays
  CHECK(std::filesystem::exists(file("neta", "a3")));
  // Network B's files, record and temporary, are untouched.
  CHECK(std::filesystem::exists(file("netb", "b1")));
  CHECK(std::filesystem::exists(file("netb", "b2") + "~"));

  a.Forget("a2");
  CHECK_FALSE(std::filesystem::exists(file("neta", "a2")));
  CHECK_FALSE(std::filesystem::exists(file("neta", "a2") + "~"));
  b.ForgetAllBut({});
  CHECK_FALSE(std::filesystem::exists(file("netb", "b1")));
  CHECK_FALSE(std::filesystem::exists(file("netb", "b2") + "~"));
  CHECK(std::filesystem::exists(file("neta", "a3")));
}

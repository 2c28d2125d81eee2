// cni/fw against the kernel: rules and chains listed by the netlink dump
// (ListRules, ListChains) are exactly what libnftables itself lists, comments
// and handles included. Runs in the fixture's private namespace (the test
// thread is in it), so the tables are private too. And the cheap iptables
// chain probe.
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"

#include "cni/base/json.h"
#include "cni/fw/iptables.h"
#include "cni/fw/nft.h"
#include "support/libnftables.h"
#include "support/netns_fixture.h"

namespace {

using cni::fw::NftFamily;
using Key = std::tuple<std::string, std::string, uint64_t, std::string>;  // table, chain, handle, comment

// The rules of a table as libnftables' own JSON listing has them.
std::vector<Key> JsonRules(cni::test::Nft& nft, const std::string& family, const std::string& table) {
  absl::StatusOr<cni::Json> doc = nft.ListJson("list table " + family + " " + table);
  REQUIRE(doc.ok());
  std::vector<Key> keys;
  for (const cni::Json& item : (*doc)["nftables"]) {
    if (!item.contains("rule")) continue;
    const cni::Json& r = item["rule"];
    keys.emplace_back(r["table"], r["chain"], r["handle"], r.value("comment", ""));
  }
  return keys;
}

std::vector<Key> DumpedRules(const std::string& family, const std::string& table) {
  absl::StatusOr<NftFamily> fam = cni::fw::ParseNftFamily(family);
  REQUIRE(fam.ok());
  absl::StatusOr<std::vector<cni::fw::NftRule>> rules =
      cni::fw::nft::ListRules(*cni::test::NetfilterSocket(), *fam, table);
  REQUIRE(rules.ok());
  std::vector<Key> keys;
  for (const cni::fw::NftRule& r : *rules) {
    CHECK(r.family == *fam);
    keys.emplace_back(r.table, r.chain, r.handle, r.comment);
  }
  return keys;
}

}  // namespace

TEST_CASE("nft: ListRules and ListChains match libnftables' own listing", "[netns][fw]") {
  cni::test::NetnsFixture fx;
  absl::StatusOr<cni::test::Nft> nft = cni::test::Nft::Open();
  REQUIRE(nft.ok());
  std::string long_comment(120, 'c');
  // Two tables of the same name in different families, and a third table in
  // the same family: the listing must keep them apart.
  std::string batch =
      "add table ip t1\n"
      "add chain ip t1 a\n"
      "add chain ip t1 b { type nat hook postrouting priority 100 ; }\n"
      "add rule ip t1 a tcp dport 80 dnat to 10.0.0.2:8080 comment \"ctr-1\"\n"
      "add rule ip t1 a tcp dport 81 accept\n"
      "add rule ip t1 b ip saddr 10.0.0.2 masquerade comment \"" + long_comment + "\"\n"
      "add rule ip t1 b ip saddr 10.0.0.3 counter comment \"ctr 2, net: x\"\n"
      "add table ip t2\n"
      "add chain ip t2 a\n"
      "add rule ip t2 a tcp dport 90 accept comment \"other\"\n"
      "add table ip6 t1\n"
      "add chain ip6 t1 c\n"
      "add rule ip6 t1 c tcp dport 80 accept comment \"v6\"\n";
  absl::Status made = nft->Run(batch);
  INFO(made.message());
  REQUIRE(made.ok());

  for (const auto& [family, table] : std::vector<std::pair<std::string, std::string>>{
           {"ip", "t1"}, {"ip", "t2"}, {"ip6", "t1"}}) {
    INFO(family << " " << table);
    std::vector<Key> dumped = DumpedRules(family, table);
    CHECK_FALSE(dumped.empty());
    CHECK(dumped == JsonRules(*nft, family, table));
  }
  std::vector<Key> t1 = DumpedRules("ip", "t1");
  REQUIRE(t1.size() == 4);
  CHECK(std::get<3>(t1[0]) == "ctr-1");
  CHECK(std::get<3>(t1[1]).empty());
  CHECK(std::get<3>(t1[2]) == long_comment);

  absl::StatusOr<std::vector<std::string>> chains =
      cni::fw::nft::ListChains(*cni::test::NetfilterSocket(), NftFamily::kIp, "t1");
  REQUIRE(chains.ok());
  CHECK(std::set<std::string>(chains->begin(), chains->end()) == std::set<std::string>{"a", "b"});

  // A table that does not exist lists as empty, in both.
  absl::StatusOr<std::vector<cni::fw::NftRule>> none =
      cni::fw::nft::ListRules(*cni::test::NetfilterSocket(), NftFamily::kInet, "t1");
  REQUIRE(none.ok());
  CHECK(none->empty());
  absl::StatusOr<std::vector<std::string>> no_chains =
      cni::fw::nft::ListChains(*cni::test::NetfilterSocket(), NftFamily::kBridge, "nope");
  REQUIRE(no_chains.ok());
  CHECK(no_chains->empty());
  // An unknown family cannot be listed: its name is refused where it is parsed.
  CHECK_FALSE(cni::fw::ParseNftFamily("nosuchfamily").ok());

  REQUIRE(nft->Run("delete table ip t1\ndelete table ip t2\ndelete table ip6 t1\n").ok());
  CHECK(DumpedRules("ip", "t1").empty());
}

// With iptables-nft (this machine's) the answer comes from a netlink dump:
// each answer is also checked against `iptables -S` itself.
TEST_CASE("iptables: IptablesHasChain tells an existing chain from a missing one", "[netns][fw]") {
  cni::test::NetnsFixture fx;
  for (bool v6 : {false, true}) {
    INFO((v6 ? "ip6tables" : "iptables"));
    // iptables-nft says so in its version line.
    bool nft_variant = absl::StrContains(fx.Exec("", {v6 ? "ip6tables" : "iptables", "--version"}).out, "nf_tables");
    CHECK(cni::fw::IptablesIsNft(v6) == nft_variant);
    auto iptables_says = [&](const std::string& chain) {
      return fx.Exec("", {v6 ? "ip6tables" : "iptables", "-t", "nat", "-S", chain}).exit_code == 0;
    };
    // Before the nat table exists, and after.
    absl::StatusOr<bool> before = cni::fw::IptablesHasChain(v6, "nat", "CNI-DN-probe");
    REQUIRE(before.ok());
    CHECK_FALSE(*before);
    CHECK_FALSE(iptables_says("CNI-DN-probe"));
    REQUIRE(cni::fw::IptablesRestore(v6, "nat", ":CNI-DN-probe - [0:0]\n").ok());
    absl::StatusOr<bool> made = cni::fw::IptablesHasChain(v6, "nat", "CNI-DN-probe");
    REQUIRE(made.ok());
    CHECK(*made);
    CHECK(iptables_says("CNI-DN-probe"));
    absl::StatusOr<bool> other = cni::fw::IptablesHasChain(v6, "nat", "CNI-DN-other");
    REQUIRE(other.ok());
    CHECK_FALSE(*other);
    CHECK_FALSE(iptables_says("CNI-DN-other"));
    // A chain of that name in another nft table of the family is not it.
    fx.Exec("", {"nft", "add", "table", v6 ? "ip6" : "ip", "other"});
    fx.Exec("", {"nft", "add", "chain", v6 ? "ip6" : "ip", "other", "CNI-DN-elsewhere"});
    CHECK_FALSE(*cni::fw::IptablesHasChain(v6, "nat", "CNI-DN-elsewhere"));
    fx.Exec("", {"nft", "delete", "table", v6 ? "ip6" : "ip", "other"});
    REQUIRE(cni::fw::IptablesRestore(v6, "nat", "-X CNI-DN-probe\n").ok());
    CHECK_FALSE(*cni::fw::IptablesHasChain(v6, "nat", "CNI-DN-probe"));
  }
}

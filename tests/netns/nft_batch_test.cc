// NftBatch against the kernel: every kind of piece, committed over netlink,
// lists in nft exactly as the same batch's text run through libnftables; and
// nft's listing reads as the text we meant (so both are not wrong alike).
// Transactions are atomic, failures name the command, big batches fit.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <netlink/socket.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/json.h"
#include "cni/fw/nft.h"
#include "cni/fw/nft_batch.h"
#include "support/libnftables.h"
#include "support/netns_fixture.h"
#include "support/netns_tools.h"

using namespace cni::test;
using cni::fw::L4Protocol;
using cni::fw::NftBatch;
using cni::fw::NftFamily;
using cni::fw::NftHook;
using cni::fw::NftRuleSpec;

namespace {

// The families and protocols of the batches below.
constexpr NftFamily kIp = NftFamily::kIp, kIp6 = NftFamily::kIp6, kInet = NftFamily::kInet,
                    kBridge = NftFamily::kBridge;
constexpr L4Protocol kTcp = L4Protocol::kTcp, kUdp = L4Protocol::kUdp, kSctp = L4Protocol::kSctp;

cni::net::IpPrefix P(const std::string& text) { return *cni::net::IpPrefix::Parse(text); }
cni::net::IpAddress A(const std::string& text) { return *cni::net::IpAddress::Parse(text); }

// Every piece NftRuleSpec has, in each family our plugins use, with prefixes
// that are hosts, byte-aligned, not byte-aligned and /0.
NftBatch EveryKind() {
  NftBatch b;
  b.AddTable(kIp, "t", "CNI portmap plugin");
  b.AddChain(kIp, "t", "hostports");
  b.AddChain(kIp, "t", "pre", NftHook{"nat", "prerouting", -100});
  b.AddChain(kIp, "t", "post", NftHook{"nat", "postrouting", 100}, "a base chain's comment");
  b.AddRule(kIp, "t", "pre", NftRuleSpec().Jump("hostports"));
  b.AddRule(kIp, "t", "pre", NftRuleSpec().DestIsLocal().Jump("hostports"));
  for (L4Protocol proto : {kTcp, kUdp, kSctp}) {
    b.AddRule(kIp, "t", "hostports",
              NftRuleSpec().DestPort(proto, 8080).Dnat(A("10.99.0.2"), 80).Comment("ctr-1"));
  }
  b.AddRule(kIp, "t", "hostports",
            NftRuleSpec().DestAddress(P("1.2.3.4/32")).DestPort(kTcp, 1).Dnat(A("10.99.0.2"), 65535).Comment("c"));
  b.AddRule(kIp, "t", "post",
            NftRuleSpec().SourceAddress(P("127.0.0.1/32")).DestAddress(P("10.99.0.2/32")).Masquerade().Comment("c"));
  // iptables-nft's shape of "-p udp -j chain", put at the top.
  b.InsertRule(kIp, "t", "pre", NftRuleSpec().L4Proto(kUdp).Counter().Jump("hostports"));
  b.AddRule(kIp, "t", "hostports",
            NftRuleSpec().L4Proto(kTcp).SourceAddress(P("10.99.0.0/16")).ThDestPort(8080).Counter().Drop());
  b.AddTable(kIp6, "t");
  b.AddChain(kIp6, "t", "hostports");
  b.AddRule(kIp6, "t", "hostports",
            NftRuleSpec().DestAddress(P("2001:db8::1/128")).DestPort(kTcp, 8080).Dnat(A("2001:db8::2"), 80));
  b.AddTable(kInet, "m", "a table's comment");
  b.AddChain(kInet, "m", "checks", std::nullopt, "a chain's comment");
  b.AddChain(kInet, "m", "post", NftHook{"nat", "postrouting", 100});
  b.AddRule(kInet, "m", "post", NftRuleSpec().DestAddress(P("224.0.0.0/4")).Return());
  b.AddRule(kInet, "m", "post", NftRuleSpec().DestAddress(P("ff00::/8")).Return());
  b.AddRule(kInet, "m", "post", NftRuleSpec().Goto("checks"));
  b.AddRule(kInet, "m", "checks",
            NftRuleSpec().SourceAddress(P("10.1.0.2/32")).DestAddress(P("10.1.0.0/16"), false).Masquerade().Comment(
                "abc, net: x"));
  b.AddRule(kInet, "m", "checks",
            NftRuleSpec().SourceAddress(P("10.1.16.5/32")).DestAddress(P("10.1.16.0/20"), false).Masquerade());
  b.AddRule(kInet, "m", "checks",
            NftRuleSpec().SourceAddress(P("2001:db8::2/128")).DestAddress(P("2001:db8::/64"), false).Masquerade());
  b.AddRule(kInet, "m", "checks",
            NftRuleSpec().SourceAddress(P("2001:db8:0:10::5/128")).DestAddress(P("2001:db8:0:10::/60"), false)
                .Masquerade());
  b.AddRule(kInet, "m", "checks", NftRuleSpec().DestAddress(P("0.0.0.0/0")).DestPort(kUdp, 53).Drop());
  b.AddTable(kBridge, "nat");
  b.AddChain(kBridge, "nat", "PREROUTING", NftHook{"filter", "prerouting", -300});
  b.AddChain(kBridge, "nat", "iface");
  b.AddRule(kBridge, "nat", "PREROUTING", NftRuleSpec().InInterface("veth1234").Jump("iface").Comment("m"));
  b.AddRule(kBridge, "nat", "iface",
            NftRuleSpec().EtherSource(*cni::net::MacAddress::Parse("0a:0b:0c:0d:0e:0f")).Return().Comment("m"));
  b.AddRule(kBridge, "nat", "iface", NftRuleSpec().Drop().Comment("m"));
  return b;
}

// A batch that starts with "add table ip t" and "add chain ip t a".
NftBatch WithTableT() {
  NftBatch b;
  b.AddTable(kIp, "t");
  b.AddChain(kIp, "t", "a");
  return b;
}

// libnftables' JSON listing of the ruleset without handles (the two ways of
// making it run at different times, so table handles differ).
cni::Json RulesetWithoutHandles(cni::test::Nft& nft) {
  absl::StatusOr<cni::Json> doc = nft.ListJson("list ruleset");
  REQUIRE(doc.ok());
  cni::Json items = cni::Json::array();
  for (cni::Json item : (*doc)["nftables"]) {
    if (item.contains("metainfo")) continue;
    for (auto& [kind, obj] : item.items()) obj.erase("handle");
    items.push_back(item);
  }
  return items;
}

}  // namespace

TEST_CASE("NftBatch: committed over netlink, nft lists it as the same text through libnftables", "[netns][fw]") {
  NetnsFixture fx;
  absl::StatusOr<cni::test::Nft> nft = cni::test::Nft::Open();
  REQUIRE(nft.ok());
  NftBatch batch = EveryKind();

  absl::Status over_netlink = batch.Commit();
  INFO(over_netlink.message());
  REQUIRE(over_netlink.ok());
  cni::Json ours = RulesetWithoutHandles(*nft);
  std::string listing = MustExec(fx, "", {"nft", "list", "ruleset"});
  REQUIRE(nft->Run("flush ruleset").ok());

  absl::Status text = nft->Run(batch.ToText());
  INFO(batch.ToText() << text.message());
  REQUIRE(text.ok());
  cni::Json theirs = RulesetWithoutHandles(*nft);
  CHECK(ours.dump(1) == theirs.dump(1));
  REQUIRE(nft->Run("flush ruleset").ok());

  // And nft reads our bytes as the rules we meant.
  INFO(listing);
  for (const char* rule : {
           "fib daddr type local jump hostports",
           "meta l4proto udp counter packets 0 bytes 0 jump hostports",
           "tcp dport 8080 dnat to 10.99.0.2:80 comment \"ctr-1\"",
           "sctp dport 8080 dnat to 10.99.0.2:80 comment \"ctr-1\"",
           "ip daddr 1.2.3.4 tcp dport 1 dnat to 10.99.0.2:65535 comment \"c\"",
           "ip saddr 127.0.0.1 ip daddr 10.99.0.2 masquerade comment \"c\"",
           "ip6 daddr 2001:db8::1 tcp dport 8080 dnat to [2001:db8::2]:80",
           "ip daddr 224.0.0.0/4 return",
           "ip6 daddr ff00::/8 return",
           "goto checks",
           "ip saddr 10.1.0.2 ip daddr != 10.1.0.0/16 masquerade comment \"abc, net: x\"",
           "ip saddr 10.1.16.5 ip daddr != 10.1.16.0/20 masquerade",
           "ip6 saddr 2001:db8::2 ip6 daddr != 2001:db8::/64 masquerade",
           "ip6 saddr 2001:db8:0:10::5 ip6 daddr != 2001:db8:0:10::/60 masquerade",
           "iifname \"veth1234\" jump iface comment \"m\"",
           "ether saddr 0a:0b:0c:0d:0e:0f return comment \"m\"",
           "drop comment \"m\"",
           "comment \"a table's comment\"",
           "type nat hook prerouting priority dstnat; policy accept;",
           "type filter hook prerouting priority dstnat; policy accept;",  // bridge: -300
       }) {
    CHECK(absl::StrContains(listing, rule));
  }
}

TEST_CASE("NftBatch: flush, delete by handle and delete chain", "[netns][fw]") {
  NetnsFixture fx;
  NftBatch make = WithTableT();
  make.AddChain(kIp, "t", "b");
  make.AddRule(kIp, "t", "a", NftRuleSpec().DestPort(kTcp, 1).Drop().Comment("one"));
  make.AddRule(kIp, "t", "a", NftRuleSpec().DestPort(kTcp, 2).Drop().Comment("two"));
  make.AddRule(kIp, "t", "b", NftRuleSpec().DestPort(kTcp, 3).Drop().Comment("three"));
  REQUIRE(make.Commit().ok());
  absl::StatusOr<std::vector<cni::fw::NftRule>> rules = cni::fw::nft::ListRules(*cni::test::NetfilterSocket(), kIp, "t");
  REQUIRE(rules.ok());
  REQUIRE(rules->size() == 3);

  NftBatch change;
  change.DeleteRule((*rules)[0]);  // "one"
  change.FlushChain(kIp, "t", "b");
  change.DeleteChain(kIp, "t", "b");
  absl::Status st = change.Commit();
  INFO(st.message());
  REQUIRE(st.ok());
  rules = cni::fw::nft::ListRules(*cni::test::NetfilterSocket(), kIp, "t");
  REQUIRE(rules.ok());
  REQUIRE(rules->size() == 1);
  CHECK((*rules)[0].comment == "two");
  CHECK(*cni::fw::nft::ListChains(*cni::test::NetfilterSocket(), kIp, "t") == std::vector<std::string>{"a"});
  MustExec(fx, "", {"nft", "delete", "table", "ip", "t"});
}

TEST_CASE("NftBatch: a failing command fails the whole transaction and is named", "[netns][fw]") {
  NetnsFixture fx;
  NftBatch b = WithTableT();
  b.AddRule(kIp, "t", "a", NftRuleSpec().Drop());
  b.AddRule(kIp, "t", "missing", NftRuleSpec().DestPort(kTcp, 9).Drop());
  absl::Status st = b.Commit();
  REQUIRE_FALSE(st.ok());
  CHECK(absl::StrContains(st.message(), "add rule ip t missing tcp dport 9 drop"));
  CHECK(absl::StrContains(st.message(), "No such file or directory"));
  // Nothing of it was applied: not even the table that came first.
  CHECK(MustExec(fx, "", {"nft", "list", "tables"}).empty());

  // What nft refuses, we refuse before sending anything.
  NftBatch bad = WithTableT();
  bad.AddRule(kIp, "t", "a", NftRuleSpec().Drop().Comment(std::string(129, 'x')));
  st = bad.Commit();
  CHECK(absl::StrContains(st.message(), "comment longer than 128 bytes"));
  NftBatch wrong_family = WithTableT();
  wrong_family.AddRule(kIp, "t", "a", NftRuleSpec().SourceAddress(P("2001:db8::1/128")).Drop());
  CHECK(absl::StrContains(wrong_family.Commit().message(), "address match of another family"));
  // A batch cannot name an unknown family at all: the name is refused where
  // it is parsed (code 7), before any batch exists.
  absl::StatusOr<NftFamily> no_family = cni::fw::ParseNftFamily("ipx");
  REQUIRE_FALSE(no_family.ok());
  CHECK(absl::StrContains(no_family.status().message(), "unknown family \"ipx\""));
  CHECK(cni::CodeOf(no_family.status()) == 7);
  CHECK(MustExec(fx, "", {"nft", "list", "tables"}).empty());
}

TEST_CASE("NftBatch: a rule with raw nft text goes through the nft program (nft::Apply), in the same transaction",
          "[netns][fw]") {
  NetnsFixture fx;
  NftBatch b = WithTableT();
  b.AddRule(kIp, "t", "a", NftRuleSpec().Text("ip saddr != 192.0.2.0/24").DestPort(kTcp, 7).Drop().Comment("x"));
  CHECK(b.HasText());
  // Commit cannot encode it, and says so before sending anything.
  absl::Status netlink_only = b.Commit();
  CHECK(absl::StrContains(netlink_only.message(), "raw nft text cannot be encoded"));
  CHECK(MustExec(fx, "", {"nft", "list", "tables"}).empty());
  absl::Status st = cni::fw::nft::Apply(*cni::test::NetfilterSocket(), b);
  INFO(st.message());
  REQUIRE(st.ok());
  CHECK(absl::StrContains(MustExec(fx, "", {"nft", "list", "table", "ip", "t"}),
                          "ip saddr != 192.0.2.0/24 tcp dport 7 drop comment \"x\""));
  MustExec(fx, "", {"nft", "delete", "table", "ip", "t"});
  // Text nft rejects: its message, and nothing of the batch applied.
  NftBatch bad = WithTableT();
  bad.AddRule(kIp, "t", "a", NftRuleSpec().Text("ip saddr nonsense").Drop());
  absl::Status refused = cni::fw::nft::Apply(*cni::test::NetfilterSocket(), bad);
  CHECK(absl::StrContains(refused.message(), "nftables transaction failed"));
  CHECK(absl::StrContains(refused.message(), "nonsense"));
  CHECK(MustExec(fx, "", {"nft", "list", "tables"}).empty());
}

TEST_CASE("NftBatch: thousands of rules in one transaction", "[netns][fw]") {
  NetnsFixture fx;
  NftBatch make = WithTableT();
  for (int i = 0; i < 5000; ++i) {
    make.AddRule(kIp, "t", "a", NftRuleSpec().DestPort(kTcp, 10000 + i).Dnat(A("10.0.0.2"), 80).Comment(
                                     absl::StrCat("container-", i)));
  }
  // Echoed too: 5,000 echoes need a receive buffer several times the default.
  std::vector<cni::fw::NftRule> added;
  absl::Status st = make.Commit(&added);
  INFO(st.message());
  REQUIRE(st.ok());
  absl::StatusOr<std::vector<cni::fw::NftRule>> rules = cni::fw::nft::ListRules(*cni::test::NetfilterSocket(), kIp, "t");
  REQUIRE(rules.ok());
  REQUIRE(rules->size() == 5000);
  CHECK(rules->back().comment == "container-4999");
  REQUIRE(added.size() == 5000);
  CHECK(added.back().handle == rules->back().handle);
  CHECK(added.back().comment == "container-4999");
  NftBatch remove;
  for (const cni::fw::NftRule& r : *rules) remove.DeleteRule(r);
  REQUIRE(remove.Commit().ok());
  CHECK(cni::fw::nft::ListRules(*cni::test::NetfilterSocket(), kIp, "t")->empty());
  MustExec(fx, "", {"nft", "delete", "table", "ip", "t"});
}

namespace {
// Rules compare equal when every listed field does.
bool SameRule(const cni::fw::NftRule& a, const cni::fw::NftRule& b) {
  return a.family == b.family && a.table == b.table && a.chain == b.chain && a.handle == b.handle &&
         a.comment == b.comment && a.jump == b.jump;
}
}  // namespace

TEST_CASE("NftBatch: Commit echoes the rules it added, with the handles the kernel gave them", "[netns][fw]") {
  NetnsFixture fx;
  NftBatch b = WithTableT();
  b.AddTable(kIp6, "t");
  b.AddChain(kIp6, "t", "z");
  b.AddRule(kIp, "t", "a", NftRuleSpec().DestPort(kTcp, 1).Drop().Comment("one"));
  b.AddRule(kIp6, "t", "z", NftRuleSpec().DestPort(kUdp, 2).Drop().Comment("two"));
  b.AddRule(kIp, "t", "a", NftRuleSpec().DestPort(kTcp, 3).Drop());
  b.AddChain(kIp, "t", "b");
  b.AddRule(kIp, "t", "a", NftRuleSpec().DestPort(kTcp, 4).Jump("b"));
  b.AddRule(kIp, "t", "b", NftRuleSpec().Goto("a").Comment("to a"));
  std::vector<cni::fw::NftRule> added;
  absl::Status st = b.Commit(&added);
  INFO(st.message());
  REQUIRE(st.ok());
  // In batch order, each as the listing has it.
  absl::StatusOr<std::vector<cni::fw::NftRule>> v4 = cni::fw::nft::ListRules(*cni::test::NetfilterSocket(), kIp, "t");
  absl::StatusOr<std::vector<cni::fw::NftRule>> v6 = cni::fw::nft::ListRules(*cni::test::NetfilterSocket(), kIp6, "t");
  REQUIRE((v4.ok() && v6.ok()));
  REQUIRE(v4->size() == 4);
  REQUIRE(v6->size() == 1);
  REQUIRE(added.size() == 5);
  CHECK(SameRule(added[0], (*v4)[0]));
  CHECK(SameRule(added[1], (*v6)[0]));
  CHECK(SameRule(added[2], (*v4)[1]));
  CHECK(SameRule(added[3], (*v4)[2]));
  CHECK(SameRule(added[4], (*v4)[3]));
  CHECK(added[1].family == kIp6);
  CHECK(added[0].comment == "one");
  // The verdict's chain, for jumps and gotos only.
  CHECK(added[0].jump.empty());
  CHECK(added[3].jump == "b");
  CHECK(added[4].jump == "a");
  // One chain's rules only.
  absl::StatusOr<std::vector<cni::fw::NftRule>> only_b = cni::fw::nft::ListRules(*cni::test::NetfilterSocket(), kIp, "t", "b");
  REQUIRE(only_b.ok());
  REQUIRE(only_b->size() == 1);
  CHECK(SameRule(only_b->front(), added[4]));
  CHECK(cni::fw::nft::ListRules(*cni::test::NetfilterSocket(), kIp, "t", "nope")->empty());
  MustExec(fx, "", {"nft", "flush", "chain", "ip", "t", "b"});

  // A batch that adds no rule echoes none; a failed one leaves nothing.
  NftBatch flush;
  flush.FlushChain(kIp, "t", "a");
  REQUIRE(flush.Commit(&added).ok());
  CHECK(added.empty());
  NftBatch failing;
  failing.AddRule(kIp, "t", "a", NftRuleSpec().Drop());
  failing.AddRule(kIp, "t", "missing", NftRuleSpec().Drop());
  added.push_back(cni::fw::NftRule{});
  CHECK_FALSE(failing.Commit(&added).ok());
  CHECK(added.empty());
  CHECK(cni::fw::nft::ListRules(*cni::test::NetfilterSocket(), kIp, "t")->empty());
  MustExec(fx, "", {"nft", "delete", "table", "ip", "t"});
  MustExec(fx, "", {"nft", "delete", "table", "ip6", "t"});
}

TEST_CASE("Nft: TableHandle changes when a table is made again, HasChain looks up one chain", "[netns][fw]") {
  NetnsFixture fx;
  absl::StatusOr<std::optional<uint64_t>> none = cni::fw::nft::TableHandle(*cni::test::NetfilterSocket(), kIp, "t");
  REQUIRE(none.ok());
  CHECK_FALSE(none->has_value());
  CHECK_FALSE(*cni::fw::nft::HasChain(*cni::test::NetfilterSocket(), kIp, "t", "a"));  // no table: no chain

  REQUIRE(WithTableT().Commit().ok());
  absl::StatusOr<std::optional<uint64_t>> first = cni::fw::nft::TableHandle(*cni::test::NetfilterSocket(), kIp, "t");
  REQUIRE(first.ok());
  REQUIRE(first->has_value());
  // Listed by nft with the same number.
  CHECK(absl::StrContains(MustExec(fx, "", {"nft", "-a", "list", "table", "ip", "t"}),
                          absl::StrCat("table ip t { # handle ", **first, "\n")));
  CHECK(*cni::fw::nft::HasChain(*cni::test::NetfilterSocket(), kIp, "t", "a"));
  CHECK_FALSE(*cni::fw::nft::HasChain(*cni::test::NetfilterSocket(), kIp, "t", "b"));
  CHECK_FALSE(*cni::fw::nft::HasChain(*cni::test::NetfilterSocket(), kIp6, "t", "a"));  // another family's table

  MustExec(fx, "", {"nft", "delete", "table", "ip", "t"});
  REQUIRE(WithTableT().Commit().ok());
  absl::StatusOr<std::optional<uint64_t>> second = cni::fw::nft::TableHandle(*cni::test::NetfilterSocket(), kIp, "t");
  REQUIRE((second.ok() && second->has_value()));
  CHECK(**second != **first);
  MustExec(fx, "", {"nft", "delete", "table", "ip", "t"});
}

// A dump the caller stops early (ListFirstRules) leaves the rest of the
// listing on the socket. When that rest is only the listing's end, it is
// read and the socket kept; when more objects follow (a long chain), the
// socket is replaced. Either way the next requests get their own answers.
TEST_CASE("NetlinkSocket: a dump stopped early keeps its socket only when nothing but the dump's end is left",
          "[netns][fw]") {
  NetnsFixture fx;
  NftBatch b = WithTableT();
  b.AddChain(kIp, "t", "short");
  b.AddChain(kIp, "t", "long");
  for (int port = 1; port <= 2; ++port) b.AddRule(kIp, "t", "short", NftRuleSpec().DestPort(kTcp, port).Drop());
  // Far more than one datagram of answers (the kernel fills at most 32 KiB).
  constexpr int kLong = 600;
  for (int port = 1; port <= kLong; ++port) {
    b.AddRule(kIp, "t", "long", NftRuleSpec().DestPort(kTcp, port).Drop().Comment(absl::StrCat("rule ", port)));
  }
  REQUIRE(b.Commit().ok());
  std::unique_ptr<cni::net::NetlinkSocket> nl = cni::test::NetfilterSocket();
  const uint32_t first_port = nl_socket_get_local_port(nl->get());

  absl::StatusOr<std::vector<cni::fw::NftRule>> one = cni::fw::nft::ListFirstRules(*nl, kIp, "t", "short", 1);
  REQUIRE(one.ok());
  REQUIRE(one->size() == 1);
  absl::StatusOr<std::vector<cni::fw::NftRule>> both = cni::fw::nft::ListRules(*nl, kIp, "t", "short");
  REQUIRE(both.ok());
  CHECK(both->size() == 2);
  CHECK(SameRule(one->front(), both->front()));
  CHECK(nl_socket_get_local_port(nl->get()) == first_port);  // the same socket

  absl::StatusOr<std::vector<cni::fw::NftRule>> head = cni::fw::nft::ListFirstRules(*nl, kIp, "t", "long", 3);
  REQUIRE(head.ok());
  REQUIRE(head->size() == 3);
  CHECK((*head)[2].comment == "rule 3");
  // The long listing's rest never reaches these answers.
  CHECK(*cni::fw::nft::HasChain(*nl, kIp, "t", "short"));
  absl::StatusOr<std::vector<cni::fw::NftRule>> all = cni::fw::nft::ListRules(*nl, kIp, "t", "long");
  REQUIRE(all.ok());
  REQUIRE(all->size() == kLong);
  CHECK(all->back().comment == absl::StrCat("rule ", kLong));
  CHECK(nl_socket_get_local_port(nl->get()) != first_port);  // a new socket

  MustExec(fx, "", {"nft", "delete", "table", "ip", "t"});
}

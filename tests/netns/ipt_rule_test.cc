// The one iptables rule model (cni/fw/ipt_rule.h) against the real iptables:
// every rule shape that ipMasq, portmap and firewall make, written once as
// the rendered restore line through iptables-restore and once as the
// rendered iptables-nft encoding over netlink, lists the same either way in
// iptables-save (and as the rendered line itself) and as the same nf_tables
// expressions (`nft --debug=netlink`). The shapes without an encoding (a
// user's free arguments, -m mark) say so, and go through iptables-restore.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cni/fw/ipmasq.h"
#include "cni/fw/iptables.h"
#include "cni/fw/ipt_rule.h"
#include "cni/fw/names.h"
#include "cni/fw/nft_batch.h"
#include "support/netns_fixture.h"
#include "support/netns_tools.h"

using namespace cni::test;
using cni::fw::IptRule;
using cni::fw::L4Protocol;
using cni::net::IpAddress;
using cni::net::IpPrefix;

namespace {

IpPrefix P(const std::string& text) { return *IpPrefix::Parse(text); }
IpAddress A(const std::string& text) { return *IpAddress::Parse(text); }

// One table of one family: the chains the rules need and the rules, in the
// shapes the plugins make them (their files named).
struct TableCase {
  std::string table;
  std::vector<std::string> builtins;  // base chains, declared first (iptables-nft makes them on demand)
  std::vector<std::string> chains;    // user chains
  std::vector<IptRule> rules;         // every one has an encoding
  std::vector<IptRule> restore_only;  // none has one: written through iptables-restore either way
};

TableCase Nat(bool v6) {
  const std::string host = v6 ? "fd00:90::3/128" : "10.90.0.3/32";
  const std::string net = v6 ? "fd00:90::/64" : "10.90.0.0/24";
  TableCase t{.table = "nat",
              .builtins = {"PREROUTING", "INPUT", "OUTPUT", "POSTROUTING"},
              .chains = {"CNI-HOSTPORT-DNAT", "CNI-DN-1", "CNI-HOSTPORT-SETMARK", "CNI-HOSTPORT-MASQ",
                         "FREE"}};
  auto& r = t.rules;
  // ipMasq's own rules (cni/fw/ipmasq.h): the container's chain and
  // POSTROUTING's jump to it.
  const cni::fw::MasqRules masq = cni::fw::IptMasqRules(v6, {P(v6 ? "fd00:90::3/64" : "10.90.0.3/24")},
                                                        {.network = "pmnet", .ifname = "eth0", .container_id = "c1"});
  t.chains.push_back(masq.chain);
  r.insert(r.end(), masq.own.begin(), masq.own.end());
  r.insert(r.end(), masq.jumps.begin(), masq.jumps.end());
  // portmap/iptables.cc: the entries, the container's chain (with and
  // without a host IP, masqAll's /0 source), the shared chains and jumps.
  for (L4Protocol p : {L4Protocol::kSctp, L4Protocol::kTcp, L4Protocol::kUdp}) {
    r.push_back(IptRule("CNI-HOSTPORT-DNAT").Protocol(p).Comment("dnat name: \"pmnet\" id: \"c1\"")
                    .DestPorts({8080, 9090}).Jump("CNI-DN-1"));
    r.push_back(IptRule("CNI-DN-1").Source(P(net)).Protocol(p).DestPort(8080).Jump("CNI-HOSTPORT-SETMARK"));
    r.push_back(IptRule("CNI-DN-1").Protocol(p).DestPort(8080).Dnat(A(v6 ? "fd00:90::3" : "10.90.0.3"), 80));
  }
  if (!v6) {
    r.push_back(IptRule("CNI-DN-1").Source(P("127.0.0.1/32")).Protocol(L4Protocol::kTcp).DestPort(53)
                    .Jump("CNI-HOSTPORT-SETMARK"));
  }
  r.push_back(IptRule("CNI-DN-1").Source(P(v6 ? "::/0" : "0.0.0.0/0")).Dest(P(host)).Protocol(L4Protocol::kUdp)
                  .DestPort(53).Jump("CNI-HOSTPORT-SETMARK"));
  r.push_back(IptRule("CNI-DN-1").Dest(P(host)).Protocol(L4Protocol::kUdp).DestPort(53)
                  .Dnat(A(v6 ? "fd00:90::3" : "10.90.0.3"), 5353));
  r.push_back(IptRule("CNI-HOSTPORT-SETMARK").Comment("CNI portfwd masquerade mark").SetXMark(0x2000, 0x2000));
  // iptables-nft writes "-m mark" as native meta mark expressions, which
  // have no encoding here: the rule goes through iptables-restore.
  t.restore_only.push_back(IptRule("CNI-HOSTPORT-MASQ").Mark(0x2000, 0x2000).Masquerade());
  r.push_back(IptRule("POSTROUTING").Comment("CNI portfwd requiring masquerade").Jump("CNI-HOSTPORT-MASQ"));
  r.push_back(IptRule("PREROUTING").DestTypeLocal().Jump("CNI-HOSTPORT-DNAT"));
  r.push_back(IptRule("OUTPUT").DestTypeLocal().Jump("CNI-HOSTPORT-DNAT"));
  // portmap's conditionsV4/V6 on an entry.
  t.restore_only.push_back(IptRule("FREE").Protocol(L4Protocol::kTcp).Comment("dnat name: \"pmnet\" id: \"c1\"")
                    .DestPorts({8080}).FreeArgs({"-s", net}).Jump("CNI-DN-1"));
  return t;
}

TableCase Filter(bool v6) {
  const std::string host = v6 ? "fd00:90::3/128" : "10.90.0.3/32";
  const std::string same = "CNI firewall plugin rules (ingressPolicy: same-bridge)";
  const std::string shared = "CNI firewall plugin rules (ingressPolicy: same-bridge|isolated)";
  TableCase t{.table = "filter",
              .builtins = {"INPUT", "FORWARD", "OUTPUT"},
              .chains = {"CNI-FORWARD", "CNI-ADMIN", "CNI-ISOLATION-STAGE-1", "CNI-ISOLATION-STAGE-2", "FREE"}};
  auto& r = t.rules;
  // firewall/iptables_rules.cc: the shared jumps, an address's two rules.
  r.push_back(IptRule("FORWARD").Comment("CNI firewall plugin rules").Jump("CNI-FORWARD"));
  r.push_back(IptRule("CNI-FORWARD").Comment("CNI firewall plugin admin overrides").Jump("CNI-ADMIN"));
  r.push_back(IptRule("CNI-FORWARD").Dest(P(host)).CtRelatedEstablished().Accept());
  r.push_back(IptRule("CNI-FORWARD").Source(P(host)).Accept());
  // firewall/isolation.cc: the ingress policy's chains.
  r.push_back(IptRule("FORWARD").Comment(shared).Jump("CNI-ISOLATION-STAGE-1"));
  r.push_back(IptRule("CNI-ISOLATION-STAGE-1").InInterface("cni0").OutInterface("cni0").Comment(same).Drop());
  r.push_back(IptRule("CNI-ISOLATION-STAGE-1").InInterface("cni0").OutInterface("cni0", true).Comment(same)
                  .Jump("CNI-ISOLATION-STAGE-2"));
  r.push_back(IptRule("CNI-ISOLATION-STAGE-1").Comment(shared).Return());
  r.push_back(IptRule("CNI-ISOLATION-STAGE-2").OutInterface("cni0").Comment(shared).Drop());
  r.push_back(IptRule("CNI-ISOLATION-STAGE-2").Comment(shared).Return());
  t.restore_only.push_back(IptRule("FREE").FreeArgs({"-m", "comment", "--comment", "a b"}).Accept());
  return t;
}

std::string Declarations(const TableCase& t) {
  std::string b;
  for (const std::string& c : t.builtins) absl::StrAppend(&b, ":", c, " ACCEPT [0:0]\n");
  for (const std::string& c : t.chains) absl::StrAppend(&b, ":", c, " - [0:0]\n");
  return b;
}

// iptables-save's lines of the table but its comments (a time stamp), and
// nft's expressions of it (handles and counters removed).
struct Listing {
  std::vector<std::string> saved;
  std::vector<std::string> exprs;
};
Listing List(NetnsFixture& fx, bool v6, const TableCase& t) {
  Listing l;
  const std::string save = MustExec(fx, "", {v6 ? "ip6tables-save" : "iptables-save", "-t", t.table});
  for (absl::string_view line : absl::StrSplit(save, '\n')) {
    if (!line.empty() && line[0] != '#') l.saved.emplace_back(line);
  }
  l.exprs = LinesWith(MustExec(fx, "", {"nft", "--debug=netlink", "list", "table", v6 ? "ip6" : "ip", t.table}), "[ ");
  return l;
}

}  // namespace

TEST_CASE("IptRule: every plugin rule, restored or sent over netlink, lists the same in iptables-save",
          "[netns][fw]") {
  NetnsFixture fx;
  if (!IptablesNft(fx)) return;
  for (bool v6 : {false, true}) {
    for (const TableCase& t : {Nat(v6), Filter(v6)}) {
      INFO((v6 ? "ip6 " : "ip ") << t.table);
      // Through iptables-restore, from the rendered lines.
      std::string body = Declarations(t);
      for (const IptRule& r : t.rules) body += r.AppendLine();
      for (const IptRule& r : t.restore_only) body += r.AppendLine();
      REQUIRE(cni::fw::IptablesRestore(v6, t.table, body).ok());
      const Listing restored = List(fx, v6, t);
      // The rendered line is what iptables-save prints.
      for (const IptRule& r : t.rules) {
        INFO(r.Saved());
        CHECK(std::count(restored.saved.begin(), restored.saved.end(), r.Saved()) == 1);
      }
      MustExec(fx, "", {"nft", "delete", "table", v6 ? "ip6" : "ip", t.table});

      // The same rules over netlink (the chains declared by iptables-restore,
      // as the plugins' first ADD does); the free arguments have no encoding.
      REQUIRE(cni::fw::IptablesRestore(v6, t.table, Declarations(t)).ok());
      cni::fw::NftBatch b;
      for (const IptRule& r : t.rules) {
        std::optional<cni::fw::NftRuleSpec> spec = r.ToNft(v6);
        REQUIRE(spec.has_value());
        b.AddRule(cni::fw::IpFamily(v6), t.table, r.chain(), *spec);
      }
      absl::Status committed = b.Commit();
      INFO(committed.message());
      REQUIRE(committed.ok());
      std::string rest;
      for (const IptRule& r : t.restore_only) {
        CHECK_FALSE(r.ToNft(v6).has_value());
        CHECK_FALSE(cni::fw::ToNft({t.rules.front(), r}, v6).has_value());
        rest += r.AppendLine();
      }
      REQUIRE(cni::fw::IptablesRestore(v6, t.table, rest).ok());
      const Listing sent = List(fx, v6, t);
      CHECK(sent.saved == restored.saved);
      CHECK(sent.exprs == restored.exprs);
      CHECK(restored.exprs.size() > 3 * t.rules.size());
      MustExec(fx, "", {"nft", "delete", "table", v6 ? "ip6" : "ip", t.table});
    }
  }
}

// The one iptables rule model (cni/fw/ipt_rule.h): its restore lines are
// spelled as iptables-save prints the rule (tests/netns/ipt_rule_test.cc
// checks that against iptables itself, and the netlink encoding).
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "cni/fw/ipt_rule.h"

using cni::fw::IptRule;
using cni::fw::L4Protocol;

namespace {
cni::net::IpPrefix P(const std::string& text) { return *cni::net::IpPrefix::Parse(text); }
cni::net::IpAddress A(const std::string& text) { return *cni::net::IpAddress::Parse(text); }
}  // namespace

TEST_CASE("IptRule: the restore line is iptables-save's spelling", "[fw]") {
  IptRule masq("CNI-MASQ");
  masq.Dest(P("224.0.0.0/4"), true).Comment("name: \"n\" id: \"c\"").Masquerade();
  CHECK(masq.Saved() ==
        "-A CNI-MASQ ! -d 224.0.0.0/4 -m comment --comment \"name: \\\"n\\\" id: \\\"c\\\"\" -j MASQUERADE");
  IptRule dn("CNI-DN-1");
  dn.Source(P("0.0.0.0/0")).Dest(P("10.0.0.7/24")).Protocol(L4Protocol::kUdp).DestPort(53).Dnat(A("fd00::2"), 53);
  CHECK(dn.InsertFirstLine() ==
        "-I CNI-DN-1 1 -d 10.0.0.0/24 -p udp -m udp --dport 53 -j DNAT --to-destination [fd00::2]:53\n");
  IptRule plain("X");
  plain.Comment("plain_word-1").FreeArgs({"-s", "a b"}).Return();
  CHECK(plain.Saved() == "-A X -m comment --comment plain_word-1 -s \"a b\" -j RETURN");
  CHECK(IptRule("Y").Comment(std::string(300, 'x')).Args()[3].size() == 255);
}

TEST_CASE("IptRule: restore lines quote arguments that are not plain words", "[fw]") {
  CHECK(IptRule("X").Comment("name: \"n\" id: \"c\"").Accept().AppendLine() ==
        "-A X -m comment --comment \"name: \\\"n\\\" id: \\\"c\\\"\" -j ACCEPT\n");
  CHECK(IptRule("POSTROUTING").Jump("Y").InsertFirstLine() == "-I POSTROUTING 1 -j Y\n");
  CHECK(IptRule("X").FreeArgs({"it's", "\\"}).Args() == std::vector<std::string>{"it's", "\\"});
  CHECK(IptRule("X").FreeArgs({"it's", "\\"}).Saved() == "-A X \"it's\" \"\\\\\"");
}

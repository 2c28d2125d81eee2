// cni/fw names, comments and input checks (no privileges).
#include <string>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>

#include "cni/base/error.h"
#include "cni/base/hash.h"
#include "cni/fw/backend.h"
#include "cni/fw/ipmasq.h"
#include "cni/fw/names.h"
#include "cni/fw/protocols.h"
#include "cni/fw/validate.h"

TEST_CASE("fw: chain names are upstream's CNI-<prefix><sha512> cut to 28", "[fw]") {
  std::string c = cni::fw::ChainName("mynet", "ctr1");
  CHECK(c.size() == 28);
  CHECK(c == "CNI-" + cni::Sha512Hex("mynetctr1").substr(0, 24));
  std::string dn = cni::fw::ChainName("mynet", "ctr1", "DN-");
  CHECK(dn == "CNI-DN-" + cni::Sha512Hex("mynetctr1").substr(0, 21));
}

TEST_CASE("fw: comments quote like Go's %q", "[fw]") {
  CHECK(cni::fw::Comment("net", "id1") == "name: \"net\" id: \"id1\"");
  CHECK(cni::fw::Comment("a\"b", "c\\d") == "name: \"a\\\"b\" id: \"c\\\\d\"");
}

TEST_CASE("fw: nftables ipMasq comment starts with the instance hash, at most 128 chars", "[fw]") {
  std::string c = cni::fw::MasqNftComment("net", "eth0", "ctr");
  CHECK(c.rfind(cni::Sha512Hex("net").substr(0, 16) + "-" + cni::Sha512Hex("eth0:ctr").substr(0, 16), 0) == 0);
  CHECK(c.find(", net: net, if: eth0, id: ctr") != std::string::npos);
  CHECK(cni::fw::MasqNftComment("n\"et", std::string(200, 'x'), "c").size() == 128);
}

TEST_CASE("fw: native nftables comments lead with the network's and the attachment's hashes", "[fw]") {
  const std::string hash = cni::fw::AttachmentHash("netA", "ctr");
  CHECK(hash == cni::fw::NetworkHash("netA") + "-" + cni::Sha512Hex("ctr").substr(0, 16));
  CHECK(hash.size() == 33);
  CHECK(cni::fw::NetworkHash("netA") != cni::fw::NetworkHash("netB"));
  CHECK(cni::fw::NativeComment(hash, {{"net", "n\"e\\t\n"}, {"id", "ctr"}}) == hash + ", net: net, id: ctr");
  // Cut to 128 bytes, the hash always whole.
  std::string longer = cni::fw::NativeComment(hash, {{"id", std::string(300, 'x')}});
  CHECK(longer.size() == 128);
  CHECK(longer.rfind(hash + ", id: x", 0) == 0);
}

TEST_CASE("fw: rule text that could inject commands is refused with code 7", "[fw]") {
  using cni::fw::ValidateRuleText;
  CHECK(ValidateRuleText("c", "ip saddr 10.0.0.0/8").ok());
  CHECK(ValidateRuleText("c", "-m").ok());
  CHECK(ValidateRuleText("c", "!").ok());
  for (const char* bad : {"a\nb", "a;b", "a#b", "a\"b", "a'b", "a\\b", "a`b", "a\rb", ""}) {
    INFO(bad);
    absl::Status st = ValidateRuleText("c", bad);
    CHECK(cni::CodeOf(st) == 7);
  }
  CHECK(cni::fw::ValidateChainName("x", "CNI-HOSTPORT-SETMARK").ok());
  CHECK_FALSE(cni::fw::ValidateChainName("x", "bad chain").ok());
  CHECK_FALSE(cni::fw::ValidateChainName("x", std::string(29, 'A')).ok());
}

TEST_CASE("fw: backend selection", "[fw]") {
  CHECK(*cni::fw::SelectBackend("iptables") == cni::fw::Backend::kIptables);
  CHECK(*cni::fw::SelectBackend("nftables") == cni::fw::Backend::kNftables);
  CHECK(*cni::fw::SelectBackend("") == cni::fw::DefaultBackend());
  CHECK(cni::CodeOf(cni::fw::SelectBackend("pf").status()) == 7);
}

TEST_CASE("fw: families and protocols map to nft's names and kernel numbers and refuse other names with code 7", "[fw]") {
  using cni::fw::L4Protocol;
  using cni::fw::NftFamily;
  // NFPROTO_* and IPPROTO_* values, spelled out.
  const std::vector<std::tuple<NftFamily, std::string, int>> families = {
      {NftFamily::kIp, "ip", 2},        {NftFamily::kIp6, "ip6", 10},   {NftFamily::kInet, "inet", 1},
      {NftFamily::kBridge, "bridge", 7}, {NftFamily::kArp, "arp", 3}, {NftFamily::kNetdev, "netdev", 5}};
  for (const auto& [family, name, number] : families) {
    CHECK(cni::fw::NftFamilyName(family) == name);
    CHECK(cni::fw::NftFamilyNumber(family) == number);
    CHECK(*cni::fw::ParseNftFamily(name) == family);
  }
  const std::vector<std::tuple<L4Protocol, std::string, int>> protocols = {
      {L4Protocol::kTcp, "tcp", 6}, {L4Protocol::kUdp, "udp", 17}, {L4Protocol::kSctp, "sctp", 132}};
  for (const auto& [protocol, name, number] : protocols) {
    CHECK(cni::fw::L4ProtocolName(protocol) == name);
    CHECK(cni::fw::L4ProtocolNumber(protocol) == number);
    CHECK(*cni::fw::ParseL4Protocol(name) == protocol);
  }
  CHECK(cni::fw::IpFamily(false) == NftFamily::kIp);
  CHECK(cni::fw::IpFamily(true) == NftFamily::kIp6);
  for (const char* bad : {"", "IP", "ipv4", "inet6"}) CHECK(cni::CodeOf(cni::fw::ParseNftFamily(bad).status()) == 7);
  for (const char* bad : {"", "TCP", "icmp", "dccp"}) CHECK(cni::CodeOf(cni::fw::ParseL4Protocol(bad).status()) == 7);
  CHECK(cni::fw::ParseL4Protocol("icmp").status().message() == "unknown protocol \"icmp\" (want tcp, udp or sctp)");
}

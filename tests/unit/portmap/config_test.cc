// portmap configuration parsing and the rules each backend would build.
#include <string>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "cni/base/error.h"
#include "cni/base/json.h"
#include "cni/fw/names.h"
#include "config.h"
#include "portmap.h"

namespace {

using cni::Json;

Json Prev() {
  return Json::parse(R"({"cniVersion":"1.0.0",
    "interfaces":[{"name":"cni0"},{"name":"veth1"},{"name":"eth0","sandbox":"/run/netns/x"}],
    "ips":[{"address":"10.88.0.5/24","interface":2},{"address":"fd00::5/64","interface":2},
           {"address":"192.0.2.9/24","interface":0}]})");
}

absl::StatusOr<cni::portmap::Config> Parse(const Json& maps, const Json& extra = Json::object()) {
  Json c = {{"cniVersion", "1.0.0"}, {"name", "net"}, {"type", "portmap"}, {"backend", "iptables"},
            {"runtimeConfig", {{"portMappings", maps}}}, {"prevResult", Prev()}};
  for (const auto& [k, v] : extra.items()) c[k] = v;
  absl::StatusOr<cni::NetConf> nc = cni::NetConf::Parse(c.dump());
  REQUIRE(nc.ok());
  cni::CmdArgs args;
  args.conf = *nc;
  args.ifname = "eth0";
  return cni::portmap::Config::Parse(args);
}

Json M(int host, int cont, const char* proto, const char* host_ip = nullptr) {
  Json m = {{"hostPort", host}, {"containerPort", cont}, {"protocol", proto}};
  if (host_ip) m["hostIP"] = host_ip;
  return m;
}

}  // namespace

TEST_CASE("portmap config: defaults and container addresses", "[portmap]") {
  auto c = Parse(Json::array({M(80, 8080, "TCP")}));
  REQUIRE(c.ok());
  CHECK(c->snat);
  CHECK(c->mark_masq_bit == 13);
  CHECK(c->mappings[0].protocol == cni::fw::L4Protocol::kTcp);
  REQUIRE(c->cont_v4.has_value());
  CHECK(c->cont_v4->ToString() == "10.88.0.5/24");  // not the host interface's 192.0.2.9
  REQUIRE(c->cont_v6.has_value());
}

TEST_CASE("portmap config: bad values are code 7, wrong types code 6", "[portmap]") {
  CHECK(cni::CodeOf(Parse(Json::array({M(0, 80, "tcp")})).status()) == 7);
  CHECK(cni::CodeOf(Parse(Json::array({M(70000, 80, "tcp")})).status()) == 7);
  CHECK(cni::CodeOf(Parse(Json::array({M(80, 0, "tcp")})).status()) == 7);
  CHECK(cni::CodeOf(Parse(Json::array({M(80, 80, "icmp")})).status()) == 7);
  CHECK(cni::CodeOf(Parse(Json::array({M(80, 80, "tcp", "nope")})).status()) == 7);
  CHECK(cni::CodeOf(Parse(Json::array(), {{"markMasqBit", 40}}).status()) == 7);
  CHECK(cni::CodeOf(Parse(Json::array(), {{"markMasqBit", 1}, {"externalSetMarkChain", "X"}}).status()) == 7);
  CHECK(cni::CodeOf(Parse(Json::array(), {{"externalSetMarkChain", "X;Y"}}).status()) == 7);
  CHECK(cni::CodeOf(Parse(Json::array(), {{"conditionsV4", {"a\nb"}}}).status()) == 7);
  CHECK(cni::CodeOf(Parse(Json::array(), {{"conditionsV6", {"x ; flush ruleset"}}}).status()) == 7);
  CHECK(cni::CodeOf(Parse(Json::array(), {{"backend", "ebpf"}}).status()) == 7);
  CHECK(cni::CodeOf(Parse(Json::array({{{"hostPort", "80"}, {"containerPort", 80}, {"protocol", "tcp"}}})).status()) == 6);
}

TEST_CASE("portmap iptables: upstream's DNAT chain layout", "[portmap]") {
  auto c = Parse(Json::array({M(8080, 80, "tcp"), M(53, 53, "udp", "10.0.0.1"), M(9090, 90, "tcp", "fd00::1")}));
  REQUIRE(c.ok());
  auto d = cni::portmap::ipt::BuildDnatRules(*c, "ctr", *c->cont_v4);
  CHECK(d.chain.rfind("CNI-DN-", 0) == 0);
  CHECK(d.chain.size() == 28);
  // Entry rules: tcp (8080,9090) and udp (53), each jumping to the chain.
  REQUIRE(d.entries.size() == 2);
  CHECK(d.entries[0].Args()[9] == "8080,9090");
  CHECK(d.entries[0].Args().back() == d.chain);
  // Rules: 8080 (hairpin, localhost, DNAT) + 53 (three); 9090 is IPv6-only.
  REQUIRE(d.rules.size() == 6);
  CHECK(d.rules[0].Args() == std::vector<std::string>{"-s", "10.88.0.0/24", "-p", "tcp", "-m", "tcp", "--dport",
                                                      "8080", "-j", "CNI-HOSTPORT-SETMARK"});
  CHECK(d.rules[2].Args().back() == "10.88.0.5:80");
  CHECK(d.rules[5].Args() == std::vector<std::string>{"-d", "10.0.0.1/32", "-p", "udp", "-m", "udp", "--dport", "53",
                                                      "-j", "DNAT", "--to-destination", "10.88.0.5:53"});
  // Every rule has an iptables-nft encoding (no conditions).
  CHECK(cni::fw::ToNft(d.entries, false).has_value());
  CHECK(cni::fw::ToNft(d.rules, false).has_value());
  auto d6 = cni::portmap::ipt::BuildDnatRules(*c, "ctr", *c->cont_v6);
  REQUIRE(d6.rules.size() == 4);  // 8080 and 9090: hairpin + DNAT, no localhost for IPv6
  CHECK(d6.rules[1].Args().back() == "[fd00::5]:80");
}

TEST_CASE("portmap iptables: 16 ports make two multiport entries, conditions appended", "[portmap]") {
  Json maps = Json::array();
  for (int i = 0; i < 16; ++i) maps.push_back(M(1000 + i, 80, "tcp"));
  auto c = Parse(maps, {{"conditionsV4", {"-s", "10.0.0.0/8"}}});
  REQUIRE(c.ok());
  auto d = cni::portmap::ipt::BuildDnatRules(*c, "ctr", *c->cont_v4);
  REQUIRE(d.entries.size() == 2);
  CHECK(d.entries[1].Args()[9] == "1015");
  CHECK(d.entries[0].Args()[10] == "-s");
  // Conditions are free iptables arguments: only iptables-restore takes them.
  CHECK_FALSE(d.entries[0].ToNft(false).has_value());
}

TEST_CASE("portmap nftables: one batch with upstream's tables, chains and comments", "[portmap]") {
  auto c = Parse(Json::array({M(8080, 80, "tcp"), M(53, 53, "udp", "10.0.0.1")}),
                 {{"backend", "nftables"}, {"conditionsV4", {"ip saddr 10.0.0.0/8"}}});
  REQUIRE(c.ok());
  cni::fw::NftBatch batch;
  cni::portmap::nft::AppendForward(batch, *c, "ctr", {*c->cont_v4, *c->cont_v6});
  std::string b = batch.ToText();
  CHECK(absl::StrContains(b, "add table ip cni_hostport"));
  CHECK(absl::StrContains(b, "add table ip6 cni_hostport"));
  // Upstream 1.9's layout: the hooks reach hostports_all for local
  // destinations only; every DNAT in hostports.
  CHECK(absl::StrContains(
      b, "add rule ip cni_hostport prerouting ip saddr 10.0.0.0/8 fib daddr type local jump hostports_all"));
  CHECK(absl::StrContains(b, "add rule ip cni_hostport hostports_all jump hostip_hostports\n"
                             "add rule ip cni_hostport hostports_all jump hostports\n"));
  // The comment names the network and the container.
  const std::string comment = cni::fw::NativeComment(cni::fw::AttachmentHash(c->name, "ctr"),
                                                     {{"net", c->name}, {"id", "ctr"}});
  CHECK(absl::StrContains(
      b, "add rule ip cni_hostport hostports tcp dport 8080 dnat to 10.88.0.5:80 comment \"" + comment + "\""));
  CHECK(absl::StrContains(b, "add rule ip cni_hostport hostports ip daddr 10.0.0.1 udp dport 53 dnat to 10.88.0.5:53"));
  CHECK_FALSE(absl::StrContains(b, "add rule ip cni_hostport hostip_hostports"));
  CHECK(absl::StrContains(b, "add rule ip6 cni_hostport hostports tcp dport 8080 dnat to [fd00::5]:80"));
  CHECK_FALSE(absl::StrContains(b, "ip6 daddr 10.0.0.1"));
  CHECK(absl::StrContains(b, "ip saddr 127.0.0.1 ip daddr 10.88.0.5 masquerade"));
}

TEST_CASE("portmap teardown config: DEL and GC judge no values, only JSON types", "[portmap]") {
  auto teardown = [](const Json& maps, const Json& extra = Json::object()) {
    Json c = {{"cniVersion", "1.0.0"}, {"name", "net"}, {"type", "portmap"}, {"runtimeConfig", {{"portMappings", maps}}}};
    for (const auto& [k, v] : extra.items()) c[k] = v;
    absl::StatusOr<cni::NetConf> nc = cni::NetConf::Parse(c.dump());
    REQUIRE(nc.ok());
    cni::CmdArgs args;
    args.conf = *nc;
    return cni::portmap::TeardownConfig::Parse(args);
  };
  // What ADD refuses (upstream's portmap may have set it up) still tears down.
  auto t = teardown(Json::array({M(80, 80, "dccp", "nope"), M(53, 53, "UDP"), M(70000, 1, "udp")}),
                    {{"markMasqBit", 40}, {"conditionsV4", {"a\nb"}}, {"backend", "nftables"}});
  REQUIRE(t.ok());
  CHECK(t->name == "net");
  CHECK(t->has_mappings);
  CHECK(t->nftables_configured);
  CHECK(t->udp_host_ports == std::vector<int>{53});
  CHECK_FALSE(teardown(Json::array())->has_mappings);
  CHECK(cni::CodeOf(teardown(Json::array({M(80, 80, "tcp")}), {{"backend", 1}}).status()) == 6);
  CHECK(cni::CodeOf(teardown(Json::array({{{"hostPort", "80"}}})).status()) == 6);
  CHECK(cni::CodeOf(teardown(Json::array({1})).status()) == 6);
  CHECK(cni::CodeOf(teardown(Json::object()).status()) == 6);
}

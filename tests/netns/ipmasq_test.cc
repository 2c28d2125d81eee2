// ipMasq of ptp and bridge, both backends: a container reaches a server in a
// namespace playing "outside" that has no route back to the container subnet,
// and the server sees the host's address. All firewall work happens in the
// fixture's private namespace.
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cni/base/ip.h"
#include "cni/base/json.h"
#include "cni/fw/ipmasq.h"
#include "support/cni_call.h"
#include "support/netns_fixture.h"
#include "support/netns_tools.h"
#include "support/run.h"

namespace {

using cni::Json;
using namespace cni::test;  // NOLINT: test brevity

// What the server answered (it prints its environment: SOCAT_PEERADDR is
// the client address it saw), retried while it starts.
std::string Ask(const std::string& netns, const std::string& addr) {
  std::string out;
  for (int i = 0; i < 12 && out.empty(); ++i) {
    out = SocatExchange(netns, addr);
    if (out.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  return out;
}

std::string Conf(const std::string& type, const std::string& backend, const TempDir& dir,
                 const std::string& version = "1.0.0") {
  Json c = {{"cniVersion", version}, {"name", "masqnet"}, {"type", type}, {"ipMasq", true},
            {"ipam", HostLocalIpam(dir, {"10.77.0.0/24"}, Json::array({{{"dst", "0.0.0.0/0"}}}))}};
  if (type == "bridge") {
    c["bridge"] = "cni0";
    c["isGateway"] = true;
  }
  if (!backend.empty()) c["ipMasqBackend"] = backend;
  return c.dump();
}

std::string Firewall(const NetnsFixture& fx) {
  return fx.Exec("", {"iptables-save", "-t", "nat"}).out + fx.Exec("", {"nft", "list", "ruleset"}).out;
}

// The ipMasq records of this namespace (/run is the fixture's own), of the
// iptables backend or of the nftables one.
size_t Records(const std::string& backend = "iptables") {
  std::error_code ec;
  size_t n = 0;
  for (auto it = std::filesystem::directory_iterator("/run/cni/ipmasq/" + backend, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++n;
  }
  return n;
}

// The "outside": 203.0.113.2 behind the host's 203.0.113.1, no route back.
std::string MakeOutside(NetnsFixture& fx) {
  std::string out = fx.AddNetns("outside");
  MustSucceed(fx.Exec("", {"ip", "link", "add", "uplink", "type", "veth", "peer", "name", "eth0", "netns", "outside"}),
              "veth");
  MustSucceed(fx.Exec("", {"ip", "addr", "add", "203.0.113.1/24", "dev", "uplink"}), "addr");
  MustSucceed(fx.Exec("", {"ip", "link", "set", "uplink", "up"}), "up");
  MustSucceed(fx.Exec(out, {"ip", "addr", "add", "203.0.113.2/24", "dev", "eth0"}), "addr");
  MustSucceed(fx.Exec(out, {"ip", "link", "set", "eth0", "up"}), "up");
  return out;
}

}  // namespace

TEST_CASE("ipmasq: the outside sees the host's address and DEL removes the rules", "[netns][ipmasq]") {
  NetnsFixture fx;
  std::string type = GENERATE(as<std::string>{}, "ptp", "bridge");
  std::string backend = GENERATE(as<std::string>{}, "iptables", "nftables");
  INFO(type << " with " << backend);
  TempDir dir;
  std::string outside = MakeOutside(fx);
  BackgroundProcess server(outside, {"/usr/bin/socat", "TCP-LISTEN:7000,reuseaddr,fork", "EXEC:/usr/bin/env"});
  std::string ctr = fx.AddNetns("ctr");
  std::string conf = Conf(type, backend, dir);
  MustSucceed(CallPlugin(type, "ADD", conf, ctr, "ctr-m"), "ADD");

  std::string seen = Ask(ctr, "TCP:203.0.113.2:7000,connect-timeout=2");
  CHECK(absl::StrContains(seen, "SOCAT_PEERADDR=203.0.113.1"));
  CHECK_FALSE(absl::StrContains(seen, "10.77.0."));
  std::string fw = Firewall(fx);
  if (backend == "iptables") {
    CHECK(absl::StrContains(fw, "id: \\\"ctr-m\\\""));
  } else {
    CHECK(absl::StrContains(fw, "table inet cni_plugins_masquerade"));
    CHECK(absl::StrContains(fw, "id: ctr-m"));
  }

  MustSucceed(CallPlugin(type, "DEL", conf, ctr, "ctr-m"), "DEL");
  CHECK_FALSE(absl::StrContains(Firewall(fx), "ctr-m"));
  MustSucceed(CallPlugin(type, "DEL", conf, ctr, "ctr-m"), "DEL again");
}

TEST_CASE("ipmasq: nftables GC removes only unlisted attachments", "[netns][ipmasq]") {
  NetnsFixture fx;
  TempDir dir;
  std::string a = fx.AddNetns("a");
  std::string b = fx.AddNetns("b");
  std::string conf = Conf("ptp", "nftables", dir, "1.1.0");
  MustSucceed(CallPlugin("ptp", "ADD", conf, a, "ctr-a"), "ADD a");
  MustSucceed(CallPlugin("ptp", "ADD", conf, b, "ctr-b"), "ADD b");
  CHECK(Records("nftables") == 2);
  Json gc = Json::parse(conf);
  gc["cni.dev/valid-attachments"] = Json::array({{{"containerID", "ctr-b"}, {"ifname", "eth0"}}});
  MustSucceed(CallPlugin("ptp", "GC", gc.dump(), "", ""), "GC");
  std::string fw = Firewall(fx);
  CHECK_FALSE(absl::StrContains(fw, "id: ctr-a"));
  CHECK(absl::StrContains(fw, "id: ctr-b"));
  CHECK(Records("nftables") == 1);  // a's record went with its rule
  MustSucceed(CallPlugin("ptp", "DEL", conf, b, "ctr-b"), "DEL b");
  MustSucceed(CallPlugin("ptp", "DEL", conf, a, "ctr-a"), "DEL a");
  CHECK(Records("nftables") == 0);
}

TEST_CASE("ipmasq: GC of one network keeps another network's records, temporary files too", "[netns][ipmasq]") {
  // A record being written is "<record>~" until renamed: GC of network A
  // must not take network B's, whose ADD may be writing it.
  NetnsFixture fx;
  std::string backend = GENERATE(as<std::string>{}, "iptables", "nftables");
  if (backend == "iptables" && !IptablesNft(fx)) return;  // records only with iptables-nft
  TempDir dir;
  std::string b = fx.AddNetns("b");
  Json conf_b = Json::parse(Conf("ptp", backend, dir, "1.1.0"));
  conf_b["name"] = "othernet";
  // The node's first ADD makes the nat table with iptables-restore, unrecorded.
  MustSucceed(CallPlugin("ptp", "ADD", conf_b.dump(), b, "ctr-w"), "ADD warm-up");
  MustSucceed(CallPlugin("ptp", "DEL", conf_b.dump(), b, "ctr-w"), "DEL warm-up");
  MustSucceed(CallPlugin("ptp", "ADD", conf_b.dump(), b, "ctr-b"), "ADD b");
  const std::string records = "/run/cni/ipmasq/" + backend;
  REQUIRE(Records(backend) == 1);
  std::string record = std::filesystem::directory_iterator(records)->path().string();
  std::filesystem::copy_file(record, record + "~");
  Json gc = Json::parse(Conf("ptp", backend, dir, "1.1.0"));  // network masqnet
  gc["cni.dev/valid-attachments"] = Json::array();
  MustSucceed(CallPlugin("ptp", "GC", gc.dump(), "", ""), "GC of masqnet");
  CHECK(std::filesystem::exists(record));
  CHECK(std::filesystem::exists(record + "~"));
  CHECK(absl::StrContains(Firewall(fx), "ctr-b"));
  // B's own GC with nothing valid takes both.
  conf_b["cni.dev/valid-attachments"] = Json::array();
  MustSucceed(CallPlugin("ptp", "GC", conf_b.dump(), "", ""), "GC of othernet");
  CHECK(Records(backend) == 0);
  MustSucceed(CallPlugin("ptp", "DEL", conf_b.dump(), b, "ctr-b"), "DEL b");
}

TEST_CASE("ipmasq: upstream ptp adds and ours deletes and the reverse", "[netns][ipmasq][differential]") {
  NetnsFixture fx;
  bool upstream_adds = GENERATE(true, false);
  TempDir dir;
  std::string ctr = fx.AddNetns("ctr");
  // Upstream 1.1.1 knows only iptables (no ipMasqBackend key).
  std::string conf = Conf("ptp", "", dir);
  MustSucceed(CallPlugin("ptp", "ADD", conf, ctr, "ctr-u", {.dir = upstream_adds ? kUpstreamDir : ""}), "ADD");
  CHECK(absl::StrContains(Firewall(fx), "id: \\\"ctr-u\\\""));
  MustSucceed(CallPlugin("ptp", "DEL", conf, ctr, "ctr-u", {.dir = upstream_adds ? "" : kUpstreamDir}), "DEL");
  std::string fw = Firewall(fx);
  CHECK_FALSE(absl::StrContains(fw, "ctr-u"));
  CHECK_FALSE(absl::StrContains(fw, ":CNI-"));
}

namespace {
// A bridge network with ipMasq (iptables, the only backend upstream 1.1.1
// knows), one fixed dual-stack address per container.
std::string StaticDualStackConf(int host) {
  Json c = {{"cniVersion", "1.0.0"}, {"name", "masqnet"}, {"type", "bridge"}, {"bridge", "cni0"},
            {"isGateway", true}, {"ipMasq", true},
            {"ipam", {{"type", "static"},
                      {"addresses", Json::array({{{"address", absl::StrCat("10.77.0.", host, "/24")}},
                                                 {{"address", absl::StrCat("fd00:77::", host, "/64")}}})}}}};
  return c.dump();
}

std::string SaveNat(const NetnsFixture& fx) {
  return MustExec(fx, "", {"iptables-save", "-t", "nat"}) + MustExec(fx, "", {"ip6tables-save", "-t", "nat"});
}

// The expressions of `chain` and of POSTROUTING in both families, as nft
// shows the kernel's rules, handles and counters left out.
std::vector<std::string> Expressions(const NetnsFixture& fx, const std::string& chain) {
  std::string out;
  for (const char* family : {"ip", "ip6"}) {
    for (const std::string& c : {std::string("POSTROUTING"), chain}) {
      out += MustExec(fx, "", {"nft", "--debug=netlink", "list", "chain", family, "nat", c});
    }
  }
  return LinesWith(out, "[ ");
}

}  // namespace

TEST_CASE("ipmasq: with iptables-nft the rules written over netlink are exactly upstream's",
          "[netns][ipmasq]") {
  NetnsFixture fx;
  if (!IptablesNft(fx)) return;
  std::string conf = StaticDualStackConf(3);
  std::string first = fx.AddNetns("first"), ctr = fx.AddNetns("ctr");
  // The first ADD makes the nat tables (iptables-restore); the next one
  // writes over netlink and records its jumps. Then upstream's bridge, which
  // always runs iptables, makes the same attachment again: the same lines
  // and the same expressions, in the same order.
  MustSucceed(CallPlugin("bridge", "ADD", StaticDualStackConf(2), first, "ctr-first"), "ADD first");
  CHECK(Records() == 0);
  MustSucceed(CallPlugin("bridge", "ADD", conf, ctr, "ctr-nl"), "ADD over netlink");
  CHECK(Records() == 1);
  std::string save_netlink = SaveNat(fx);
  std::vector<std::string> rules = LinesWith(save_netlink, "id: \\\"ctr-nl\\\"");
  // Per family: the subnet's ACCEPT, the MASQUERADE and the POSTROUTING jump.
  REQUIRE(rules.size() == 6);
  std::string chain = rules.front().substr(rules.front().find(" -j CNI-") + 4);
  std::vector<std::string> exprs_netlink = Expressions(fx, chain);
  MustSucceed(CallPlugin("bridge", "DEL", conf, ctr, "ctr-nl"), "DEL");
  CHECK(Records() == 0);
  CHECK_FALSE(absl::StrContains(SaveNat(fx), "ctr-nl"));
  MustSucceed(CallPlugin("bridge", "ADD", conf, ctr, "ctr-nl", {.dir = kUpstreamDir}), "upstream ADD");
  std::string save_upstream = SaveNat(fx);
  CHECK(LinesWith(save_upstream, "id: \\\"ctr-nl\\\"") == rules);
  CHECK(Expressions(fx, chain) == exprs_netlink);
  CHECK(absl::StrContains(save_netlink, "-A " + chain + " ! -d 224.0.0.0/4 -m comment --comment \"name: \\\"masqnet\\\" id: \\\"ctr-nl\\\"\" -j MASQUERADE"));
  CHECK(absl::StrContains(save_netlink, "-A " + chain + " ! -d ff00::/8 -m comment"));
  CHECK(absl::StrContains(save_netlink, "-A POSTROUTING -s 10.77.0.3/32 -m comment"));
  MustSucceed(CallPlugin("bridge", "DEL", conf, ctr, "ctr-nl"), "DEL of upstream's");
  MustSucceed(CallPlugin("bridge", "DEL", StaticDualStackConf(2), first, "ctr-first"), "DEL first");
  CHECK_FALSE(absl::StrContains(SaveNat(fx), ":CNI-"));
  CHECK(Records() == 0);
}

TEST_CASE("ipmasq: rules written over netlink masquerade, and either side's DEL removes the other's",
          "[netns][ipmasq][differential]") {
  NetnsFixture fx;
  if (!IptablesNft(fx)) return;
  const bool upstream_deletes = GENERATE(true, false);
  TempDir dir;
  std::string outside = MakeOutside(fx);
  BackgroundProcess server(outside, {"/usr/bin/socat", "TCP-LISTEN:7000,reuseaddr,fork", "EXEC:/usr/bin/env"});
  // Upstream 1.1.1 knows only iptables (no ipMasqBackend key).
  std::string conf = Conf("ptp", "", dir);
  std::string first = fx.AddNetns("first"), ctr = fx.AddNetns("ctr");
  // Whoever adds first makes the nat table; then ours writes over netlink.
  MustSucceed(CallPlugin("ptp", "ADD", conf, first, "ctr-first", {.dir = kUpstreamDir}), "upstream ADD");
  MustSucceed(CallPlugin("ptp", "ADD", conf, ctr, "ctr-nl"), "ADD over netlink");
  CHECK(Records() == 1);
  std::string seen = Ask(ctr, "TCP:203.0.113.2:7000,connect-timeout=2");
  CHECK(absl::StrContains(seen, "SOCAT_PEERADDR=203.0.113.1"));
  // Upstream's DEL of our rules, or our DEL (over netlink, no record) of upstream's.
  const char* ours_dir = "";
  MustSucceed(CallPlugin("ptp", "DEL", conf, ctr, "ctr-nl", {.dir = upstream_deletes ? kUpstreamDir : ours_dir}),
              "DEL");
  MustSucceed(CallPlugin("ptp", "DEL", conf, first, "ctr-first", {.dir = upstream_deletes ? ours_dir : kUpstreamDir}),
              "DEL first");
  std::string fw = Firewall(fx);
  CHECK_FALSE(absl::StrContains(fw, "ctr-"));
  CHECK_FALSE(absl::StrContains(fw, ":CNI-"));
}

TEST_CASE("ipmasq: iptables GC removes the recorded attachments not listed", "[netns][ipmasq]") {
  NetnsFixture fx;
  if (!IptablesNft(fx)) return;
  TempDir dir;
  std::string conf = Conf("ptp", "iptables", dir, "1.1.0");
  std::string z = fx.AddNetns("z"), a = fx.AddNetns("a"), b = fx.AddNetns("b");
  MustSucceed(CallPlugin("ptp", "ADD", conf, z, "ctr-z"), "ADD z (makes the nat table, unrecorded)");
  MustSucceed(CallPlugin("ptp", "ADD", conf, a, "ctr-a"), "ADD a");
  MustSucceed(CallPlugin("ptp", "ADD", conf, b, "ctr-b"), "ADD b");
  CHECK(Records() == 2);
  Json gc = Json::parse(conf);
  gc["cni.dev/valid-attachments"] = Json::array({{{"containerID", "ctr-b"}, {"ifname", "eth0"}},
                                                 {{"containerID", "ctr-z"}, {"ifname", "eth0"}}});
  MustSucceed(CallPlugin("ptp", "GC", gc.dump(), "", ""), "GC");
  std::string fw = Firewall(fx);
  CHECK_FALSE(absl::StrContains(fw, "id: \\\"ctr-a\\\""));
  CHECK(absl::StrContains(fw, "id: \\\"ctr-b\\\""));
  CHECK(absl::StrContains(fw, "id: \\\"ctr-z\\\""));
  CHECK(Records() == 1);
  for (auto [ns, id] : {std::pair{b, "ctr-b"}, std::pair{z, "ctr-z"}, std::pair{a, "ctr-a"}}) {
    MustSucceed(CallPlugin("ptp", "DEL", conf, ns, id), "DEL");
  }
  CHECK_FALSE(absl::StrContains(Firewall(fx), ":CNI-"));
  CHECK(Records() == 0);
}

TEST_CASE("ipmasq: nftables ADD leaves a complete postrouting chain alone and repairs a damaged one",
          "[netns][ipmasq]") {
  NetnsFixture fx;
  TempDir dir;
  std::string conf = Conf("ptp", "nftables", dir);
  auto postrouting = [&] {  // the chain's rules, without its own line
    std::vector<std::string> rules = LinesWith(
        MustExec(fx, "", {"nft", "-a", "list", "chain", "inet", "cni_plugins_masquerade", "postrouting"}), "# handle");
    std::erase_if(rules, [](const std::string& l) { return absl::StrContains(l, "chain postrouting"); });
    return rules;
  };
  std::string a = fx.AddNetns("a"), b = fx.AddNetns("b"), c = fx.AddNetns("c");
  MustSucceed(CallPlugin("ptp", "ADD", conf, a, "ctr-a"), "ADD a");
  std::string before = MustExec(fx, "", {"nft", "-a", "list", "chain", "inet", "cni_plugins_masquerade", "postrouting"});
  REQUIRE(postrouting().size() == 3);
  // Not rewritten: the same rules with the same handles (a rewrite deletes
  // rules, and the call then waits for the kernel to free them).
  MustSucceed(CallPlugin("ptp", "ADD", conf, b, "ctr-b"), "ADD b");
  CHECK(MustExec(fx, "", {"nft", "-a", "list", "chain", "inet", "cni_plugins_masquerade", "postrouting"}) == before);
  // Damaged: rewritten whole.
  MustExec(fx, "", {"nft", "flush", "chain", "inet", "cni_plugins_masquerade", "postrouting"});
  REQUIRE(postrouting().empty());
  MustSucceed(CallPlugin("ptp", "ADD", conf, c, "ctr-c"), "ADD c");
  std::vector<std::string> repaired = postrouting();
  REQUIRE(repaired.size() == 3);
  CHECK(absl::StrContains(repaired[0], "ip daddr 224.0.0.0/4 return"));
  CHECK(absl::StrContains(repaired[1], "ip6 daddr ff00::/8 return"));
  CHECK(absl::StrContains(repaired[2], "goto masq_checks"));
  for (auto [ns, id] : {std::pair{a, "ctr-a"}, std::pair{b, "ctr-b"}, std::pair{c, "ctr-c"}}) {
    MustSucceed(CallPlugin("ptp", "DEL", conf, ns, id), "DEL");
  }
}

TEST_CASE("ipmasq: nftables DEL deletes by the ADD's record, and only while the record still describes the table",
          "[netns][ipmasq]") {
  NetnsFixture fx;
  TempDir dir;
  std::string conf = Conf("ptp", "nftables", dir);
  auto masq_checks = [&] {
    return MustExec(fx, "", {"nft", "-a", "list", "chain", "inet", "cni_plugins_masquerade", "masq_checks"});
  };
  // The attachment's rules (handles left out), and the handle of its first.
  auto rules_of = [&](const std::string& id) { return LinesWith(masq_checks(), "id: " + id); };
  auto handle_of = [&](const std::string& id) {
    for (absl::string_view line : absl::StrSplit(masq_checks(), '\n')) {
      size_t at = line.find(" # handle ");
      if (absl::StrContains(line, "id: " + id) && at != absl::string_view::npos) return std::string(line.substr(at + 10));
    }
    return std::string();
  };
  std::string a = fx.AddNetns("a"), b = fx.AddNetns("b"), c = fx.AddNetns("c"), d = fx.AddNetns("d");
  MustSucceed(CallPlugin("ptp", "ADD", conf, a, "ctr-a"), "ADD a");
  MustSucceed(CallPlugin("ptp", "ADD", conf, b, "ctr-b"), "ADD b");
  CHECK(Records("nftables") == 2);
  REQUIRE(rules_of("ctr-a").size() == 1);

  // A second set-up of one attachment (the SDK call bridge and ptp make; the
  // plugins themselves refuse a second ADD, its eth0 exists) replaces its
  // rule, found by its record, and teardown removes it by that record.
  const cni::fw::MasqTarget twice{"masqnet", "eth0", "ctr-r"};
  const std::vector<cni::net::IpPrefix> addr = {*cni::net::IpPrefix::Parse("10.77.0.200/24")};
  for (int i = 0; i < 2; ++i) REQUIRE(cni::fw::SetupIpMasq(cni::fw::Backend::kNftables, addr, twice).ok());
  CHECK(rules_of("ctr-r").size() == 1);
  CHECK(Records("nftables") == 3);
  REQUIRE(cni::fw::TeardownIpMasq(twice).ok());
  CHECK(rules_of("ctr-r").empty());
  CHECK(Records("nftables") == 2);

  // Someone deletes the table; the next ADD makes it again, and its rules
  // are numbered from the start, so c's rule may take the handle a's record
  // names. a's record no longer describes the table: DEL a must list, and
  // leave c's rule alone.
  const std::string a_handle = handle_of("ctr-a");
  MustExec(fx, "", {"nft", "delete", "table", "inet", "cni_plugins_masquerade"});
  MustSucceed(CallPlugin("ptp", "ADD", conf, c, "ctr-c"), "ADD c");
  REQUIRE(rules_of("ctr-c").size() == 1);
  INFO("a's rule had handle " << a_handle << ", c's has " << handle_of("ctr-c"));
  MustSucceed(CallPlugin("ptp", "DEL", conf, a, "ctr-a"), "DEL a");
  CHECK(rules_of("ctr-c").size() == 1);
  MustSucceed(CallPlugin("ptp", "DEL", conf, b, "ctr-b"), "DEL b");
  CHECK(rules_of("ctr-c").size() == 1);
  CHECK(Records("nftables") == 1);

  // A recorded rule deleted by someone else: DEL still succeeds (it lists)
  // and forgets the record.
  MustSucceed(CallPlugin("ptp", "ADD", conf, d, "ctr-d"), "ADD d");
  const std::string d_handle = handle_of("ctr-d");
  REQUIRE_FALSE(d_handle.empty());
  MustExec(fx, "", {"nft", "delete", "rule", "inet", "cni_plugins_masquerade", "masq_checks", "handle", d_handle});
  MustSucceed(CallPlugin("ptp", "DEL", conf, d, "ctr-d"), "DEL d");
  CHECK(rules_of("ctr-d").empty());

  MustSucceed(CallPlugin("ptp", "DEL", conf, c, "ctr-c"), "DEL c");
  CHECK(rules_of("ctr-c").empty());
  CHECK(Records("nftables") == 0);
}

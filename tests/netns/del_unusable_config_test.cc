// A configuration that a plugin's delegate refuses (flannel's delegate, an
// interface plugin's IPAM), or that the plugin refuses for a key its DEL
// does not read: ADD fails with its code and leaves nothing, and the
// runtime's DEL (which it retries until it succeeds) then succeeds, since
// nothing is left to remove, instead of failing for good. A DEL of a real
// attachment with such a key broken still removes all of it.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "cni/base/json.h"
#include "support/cni_call.h"
#include "support/netns_fixture.h"
#include "support/netns_tools.h"
#include "support/run.h"

namespace {

using cni::Json;
using namespace cni::test;  // NOLINT: test brevity

constexpr const char* kContainer = "ctr-refused";

// Everything the attachment could have left: links other than lo (and the
// host's `keep`), its files under `dir`.
std::vector<std::string> Leftovers(const NetnsFixture& fx, const std::string& netns, const std::string& dir,
                                   const std::vector<std::string>& keep = {}) {
  std::vector<std::string> left;
  for (const std::string& l : fx.Links(netns)) {
    if (l != "lo") left.push_back("container link " + l);
  }
  for (const std::string& l : fx.Links()) {
    if (l != "lo" && std::find(keep.begin(), keep.end(), l) == keep.end()) left.push_back("host link " + l);
  }
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    // The attachment's files: named by the container (flannel's saved
    // configuration), naming it (host-local's reservations), or temporaries.
    const std::string name = it->path().filename().string();
    std::ifstream in(it->path());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (absl::StrContains(name, kContainer) || absl::StrContains(text, kContainer) || absl::EndsWith(name, "~")) {
      left.push_back("file " + it->path().string());
    }
  }
  return left;
}

// ADD fails with `code`; then two DELs succeed and nothing is left.
void RefusedThenDeleted(const NetnsFixture& fx, const std::string& plugin, const std::string& conf,
                        const std::string& netns, const std::string& dir, int code,
                        const std::vector<std::string>& keep = {}) {
  RunResult add = CallPlugin(plugin, "ADD", conf, netns, kContainer);
  INFO(plugin << " " << conf << "\nADD: " << Describe(add));
  CHECK(ErrorCode(add) == code);
  for (int i = 0; i < 2; ++i) {
    RunResult del = CallPlugin(plugin, "DEL", conf, netns, kContainer);
    INFO("DEL " << i + 1 << ": " << Describe(del));
    CHECK(del.exit_code == 0);
  }
  std::vector<std::string> left = Leftovers(fx, netns, dir, keep);
  INFO(absl::StrJoin(left, "\n"));
  CHECK(left.empty());
}

// `base` with `broken` merged in.
Json Merged(Json base, const Json& broken) {
  for (const auto& [key, value] : broken.items()) base[key] = value;
  return base;
}

// What a meta plugin could leave behind in the host and in the container:
// packet-filter rules, links, policy rules, the container's link settings
// and its routes outside the main table (sbr moves the main table's routes
// to its own table, and its DEL, as upstream's, does not move them back).
// `ip -d link` without what a link's carrier changes on its own (its flags
// and operational state follow the peer: tuning's MTU change blinks them).
std::string LinkSettings(const NetnsFixture& fx, const std::string& netns) {
  std::string out = fx.Exec(netns, {"ip", "-d", "link"}).out;
  for (size_t at; (at = out.find('<')) != std::string::npos;) out.erase(at, out.find('>', at) + 1 - at);
  for (size_t at; (at = out.find(" state ")) != std::string::npos;) out.erase(at, out.find(' ', at + 7) - at);
  return out;
}

std::string State(const NetnsFixture& fx, const std::string& netns) {
  std::string routes;
  for (absl::string_view line : absl::StrSplit(fx.Exec(netns, {"ip", "route", "show", "table", "all"}).out, '\n')) {
    // The kernel adds the IPv6 link-local address's local route by itself
    // once its DAD ends (seconds after link up under the VM tier's
    // emulation): it says nothing of what a plugin did.
    if (absl::StartsWith(line, "local fe80::")) continue;
    if (absl::StrContains(line, " table ")) absl::StrAppend(&routes, line, "\n");
  }
  return absl::StrCat(fx.Exec("", {"nft", "list", "ruleset"}).out, "\n", LinkSettings(fx, ""), "\n",
                      fx.Exec(netns, {"ip", "rule"}).out, "\n", LinkSettings(fx, netns), "\n", routes);
}

}  // namespace

TEST_CASE("flannel: a delegate configuration the delegate refuses fails ADD, keeps no file, DEL succeeds",
          "[netns][flannel]") {
  NetnsFixture fx;
  TempDir dir;
  const std::string netns = fx.AddNetns("refused");
  std::ofstream(dir.str() + "/subnet.env") << "FLANNEL_NETWORK=10.77.0.0/16\nFLANNEL_SUBNET=10.77.5.1/24\n"
                                              "FLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n";
  struct Case {
    Json delegate, ipam;
    int code;
  };
  for (const Case& c : std::vector<Case>{{{{"bridge", "../x"}}, Json::object(), 7},
                                         {{{"mtu", "x"}}, Json::object(), 6},
                                         {Json::object(), {{"type", "../x"}}, 7}}) {
    Json ipam = c.ipam;
    ipam["dataDir"] = dir.str() + "/ipam";
    const std::string conf = Json{{"cniVersion", "1.0.0"}, {"name", "cbr0"}, {"type", "flannel"},
                                  {"subnetFile", dir.str() + "/subnet.env"}, {"dataDir", dir.str() + "/flannel"},
                                  {"delegate", c.delegate}, {"ipam", ipam}}
                                 .dump();
    RefusedThenDeleted(fx, "flannel", conf, netns, dir.str(), c.code, {"cni0"});
  }
  // A saved file the delegate refuses (written by another version, say):
  // DEL removes it and succeeds.
  std::filesystem::create_directories(dir.str() + "/flannel");
  std::ofstream(dir.str() + "/flannel/" + kContainer)
      << R"({"bridge":"../x","cniVersion":"1.0.0","ipam":{"type":"host-local"},"name":"cbr0","type":"bridge"})";
  const std::string conf = Json{{"cniVersion", "1.0.0"}, {"name", "cbr0"}, {"type", "flannel"},
                                {"subnetFile", dir.str() + "/subnet.env"}, {"dataDir", dir.str() + "/flannel"}}
                               .dump();
  MustSucceed(CallPlugin("flannel", "DEL", conf, netns, kContainer), "DEL of a refused saved file");
  CHECK(Leftovers(fx, netns, dir.str(), {"cni0"}).empty());
}

TEST_CASE("flannel: a configuration broken after ADD still lets DEL undo the attachment", "[netns][flannel]") {
  NetnsFixture fx;
  TempDir dir;
  const std::string netns = fx.AddNetns("broken");
  std::ofstream(dir.str() + "/subnet.env") << "FLANNEL_NETWORK=10.78.0.0/16\nFLANNEL_SUBNET=10.78.5.1/24\n"
                                              "FLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n";
  Json conf = {{"cniVersion", "1.0.0"}, {"name", "cbr0"}, {"type", "flannel"},
               {"subnetFile", dir.str() + "/subnet.env"}, {"dataDir", dir.str() + "/flannel"},
               {"ipam", {{"dataDir", dir.str() + "/ipam"}}}};
  MustSucceed(CallPlugin("flannel", "ADD", conf.dump(), netns, kContainer), "ADD");
  REQUIRE(!Leftovers(fx, netns, dir.str(), {"cni0"}).empty());
  // Keys of the wrong type: ADD would refuse them (code 6), but DEL has the
  // saved delegate configuration and undoes the attachment with it.
  for (const auto& [key, value] : std::vector<std::pair<std::string, Json>>{
           {"delegate", Json::array()}, {"subnetFile", 5}}) {
    Json broken = conf;
    broken[key] = value;
    INFO(broken.dump());
    CHECK(ErrorCode(CallPlugin("flannel", "ADD", broken.dump(), fx.AddNetns(), "other")) == 6);
    if (key == "delegate") {
      MustSucceed(CallPlugin("flannel", "DEL", broken.dump(), netns, kContainer), "DEL with the broken config");
      std::vector<std::string> left = Leftovers(fx, netns, dir.str(), {"cni0"});
      INFO(absl::StrJoin(left, "\n"));
      CHECK(left.empty());
    }
    // No saved file and nothing to rebuild with: nothing left to remove.
    MustSucceed(CallPlugin("flannel", "DEL", broken.dump(), netns, kContainer), "DEL again");
    MustSucceed(CallPlugin("flannel", "DEL", broken.dump(), netns, "other"), "DEL of the refused ADD");
  }
}

TEST_CASE("an IPAM type no plugin can have fails ADD and lets DEL succeed, every interface plugin",
          "[netns][bridge][ptp][macvlan][tap][host-device]") {
  NetnsFixture fx;
  TempDir dir;
  const std::string netns = fx.AddNetns("refused");
  MustExec(fx, "", {"ip", "link", "add", "mst0", "type", "veth", "peer", "name", "mst0p"});
  MustExec(fx, "", {"ip", "link", "set", "mst0", "up"});
  std::vector<std::string> plugins = {"bridge", "ptp", "macvlan", "tap", "host-device"};
  // The link types this machine's kernel may lack (the VM tier's has them).
  if (FullKernelExpected()) plugins.insert(plugins.end(), {"ipvlan", "vlan", "dummy"});
  for (const std::string& plugin : plugins) {
    Json conf = {{"cniVersion", "1.1.0"}, {"name", "refused"}, {"type", plugin},
                 {"ipam", {{"type", "../host-local"}}}};
    if (plugin == "macvlan" || plugin == "ipvlan" || plugin == "vlan") conf["master"] = "mst0";
    if (plugin == "vlan") conf["vlanId"] = 78;
    if (plugin == "host-device") conf["device"] = "mst0";
    RefusedThenDeleted(fx, plugin, conf.dump(), netns, dir.str(), 7, {"mst0", "mst0p", "cni0"});
  }
  // host-device gave the device back as it was: in the host, under its name.
  CHECK(fx.Exec("", {"ip", "link", "show", "mst0"}).exit_code == 0);
}

TEST_CASE("an interface plugin's own key that DEL does not read: ADD refuses it, DEL succeeds and undoes an attachment",
          "[netns][bridge][ptp][macvlan][tap][host-device]") {
  NetnsFixture fx;
  TempDir dir;
  const std::string netns = fx.AddNetns("ownkey");
  MustExec(fx, "", {"ip", "link", "add", "mst0", "type", "veth", "peer", "name", "mst0p"});
  MustExec(fx, "", {"ip", "link", "set", "mst0", "up"});
  struct Case {
    std::string plugin;
    Json broken;
    int code;
  };
  for (const Case& c : std::vector<Case>{{"bridge", {{"bridge", "../x"}}, 7},
                                         {"bridge", {{"mtu", "x"}}, 6},
                                         {"ptp", {{"mtu", "x"}}, 6},
                                         {"macvlan", {{"mtu", "x"}}, 6},
                                         {"tap", {{"mtu", "x"}}, 6},
                                         {"host-device", {{"hwaddr", "x"}}, 7}}) {
    Json conf = {{"cniVersion", "1.1.0"}, {"name", "ownkey"}, {"type", c.plugin},
                 {"ipam", HostLocalIpam(dir, {"10.79.3.0/24"})}};
    if (c.plugin == "macvlan") conf["master"] = "mst0";
    if (c.plugin == "host-device") conf["device"] = "mst0";
    const std::string broken = Merged(conf, c.broken).dump();
    RefusedThenDeleted(fx, c.plugin, broken, netns, dir.str(), c.code, {"mst0", "mst0p", "cni0"});
    // A real attachment, then the configuration broken: DEL removes it all.
    MustSucceed(CallPlugin(c.plugin, "ADD", conf.dump(), netns, kContainer), c.plugin + " ADD");
    REQUIRE(!Leftovers(fx, netns, dir.str(), {"mst0", "mst0p", "cni0"}).empty());
    INFO(broken);
    MustSucceed(CallPlugin(c.plugin, "DEL", broken, netns, kContainer), c.plugin + " DEL with the broken key");
    std::vector<std::string> left = Leftovers(fx, netns, dir.str(), {"mst0", "mst0p", "cni0"});
    INFO(absl::StrJoin(left, "\n"));
    CHECK(left.empty());
  }
  // host-device gave the device back as it was: in the host, under its name.
  CHECK(fx.Exec("", {"ip", "link", "show", "mst0"}).exit_code == 0);
}

TEST_CASE("a meta plugin's own key that DEL does not read: ADD refuses it, DEL succeeds and undoes an attachment",
          "[netns][tuning][portmap][bandwidth][firewall][sbr]") {
  NetnsFixture fx;
  TempDir dir;
  struct Case {
    std::string plugin;
    Json good, broken;
    int code;
  };
  const Json mapping = {{"portMappings", {{{"hostPort", 8080}, {"containerPort", 80}, {"protocol", "tcp"}}}}};
  const Json limits = {{"ingressRate", 1000000}, {"ingressBurst", 100000},
                       {"egressRate", 1000000}, {"egressBurst", 100000}};
  for (const Case& c : std::vector<Case>{
           {"tuning", {{"mtu", 1400}, {"dataDir", dir.str() + "/tuning"}}, {{"mtu", "x"}}, 6},
           {"portmap", {{"backend", "nftables"}, {"runtimeConfig", mapping}}, {{"markMasqBit", 40}}, 7},
           {"bandwidth", limits, {{"ingressRate", -1}}, 6},
           {"firewall", {{"backend", "nftables"}}, {{"ingressPolicy", "x"}}, 7},
           {"sbr", Json::object(), {{"gateways", {"x"}}}, 7}}) {
    INFO(c.plugin);
    const std::string netns = fx.AddNetns();
    const std::string ptp = NetConf("1.0.0", "metakey", "ptp", {{"ipam", HostLocalIpam(dir, {"10.79.4.0/24"})}}).dump();
    Json meta = NetConf("1.0.0", "metakey", c.plugin, c.good);
    const Json broken = Merged(meta, c.broken);
    // A first container makes what attachments share (tables, chains), so
    // that the second one's state before and after can be compared.
    for (const char* id : {"warm-up", kContainer}) {
      const RunResult base = CallPlugin("ptp", "ADD", ptp, netns, id);
      MustSucceed(base, "ptp ADD");
      const std::string before = State(fx, netns);
      const std::string refused = WithPrevResult(broken.dump(), base.out);
      CHECK(ErrorCode(CallPlugin(c.plugin, "ADD", refused, netns, id)) == c.code);
      CHECK(State(fx, netns) == before);
      for (int i = 0; i < 2; ++i) MustSucceed(CallPlugin(c.plugin, "DEL", refused, netns, id), "DEL of the refused ADD");
      MustSucceed(CallPlugin(c.plugin, "ADD", WithPrevResult(meta.dump(), base.out), netns, id), "ADD");
      if (id == std::string(kContainer)) CHECK(State(fx, netns) != before);
      MustSucceed(CallPlugin(c.plugin, "DEL", refused, netns, id), "DEL of the attachment with the broken key");
      if (id == std::string(kContainer)) CHECK(State(fx, netns) == before);
      MustSucceed(CallPlugin("ptp", "DEL", ptp, netns, id), "ptp DEL");
    }
    std::vector<std::string> left = Leftovers(fx, netns, dir.str());
    INFO(absl::StrJoin(left, "\n"));
    CHECK(left.empty());
    fx.DelNetns(netns);
  }
}

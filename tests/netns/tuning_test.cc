// The tuning plugin through the CNI protocol, chained after ptp (static IPAM)
// in a NetnsFixture. Backups go to a TempDir (never /run/cni/tuning) and the
// allowlist is pointed at a TempDir file through CNI_TUNING_ALLOWLIST.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "cni/base/json.h"
#include "support/cni_call.h"
#include "support/netns_fixture.h"
#include "support/netns_tools.h"
#include "support/run.h"

namespace {

using cni::Json;
using namespace cni::test;  // NOLINT: test brevity

// ptp with static IPAM on the "tunenet" network (`addr` through `gateway` when not empty).
Json PtpConf(const std::string& version, const std::string& addr, const std::string& gateway) {
  return NetConf(version, "tunenet", "ptp", {{"ipam", StaticIpam(addr, gateway, nullptr)}});
}

// ptp ADD with a static address; returns its result (the prevResult to chain).
Json PtpAdd(const std::string& version, const std::string& netns, const std::string& id,
            const std::string& addr = "10.88.0.5/24") {
  RunResult r = CallPlugin("ptp", "ADD", PtpConf(version, addr, "10.88.0.1").dump(), netns, id);
  MustSucceed(r);
  return Json::parse(r.out);
}

void PtpDel(const std::string& version, const std::string& netns, const std::string& id) {
  MustSucceed(CallPlugin("ptp", "DEL", PtpConf(version, "10.88.0.5/24", "").dump(), netns, id));
}

Json TuningConf(const std::string& version, const Json& prev, const Json& keys) {
  return NetConf(version, "tunenet", "tuning", keys, prev);
}

// What the kernel says about eth0 in `netns`.
struct LinkState {
  std::string mac;
  int mtu = 0;
  int txqlen = 0;
  bool promisc = false;
  bool allmulti = false;
  friend bool operator==(const LinkState&, const LinkState&) = default;
};

LinkState Eth0(const NetnsFixture& fx, const std::string& netns) {
  Json j = Json::parse(MustExec(fx, netns, {"ip", "-j", "link", "show", "dev", "eth0"}))[0];
  LinkState s;
  s.mac = j["address"].get<std::string>();
  s.mtu = j["mtu"].get<int>();
  s.txqlen = j.value("txqlen", 0);
  for (const auto& f : j["flags"]) {
    if (f == "PROMISC") s.promisc = true;
    if (f == "ALLMULTI") s.allmulti = true;
  }
  return s;
}

std::string Sysctl(const NetnsFixture& fx, const std::string& netns, const std::string& path) {
  std::string out = MustExec(fx, netns, {"cat", "/proc/sys/" + path});
  return out.substr(0, out.find_last_not_of('\n') + 1);
}

std::vector<std::string> Files(const TempDir& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    out.push_back(e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

const Json kAllKeys = {{"mac", "c2:00:00:00:aa:01"}, {"mtu", 1400}, {"promisc", true},
                       {"allmulti", true}, {"txQLen", 321},
                       {"sysctl", {{"net.core.somaxconn", "1234"},
                                   {"net.ipv4.conf.IFNAME.rp_filter", "2"}}}};

}  // namespace

TEST_CASE("tuning: ADD, CHECK, DEL restores, at every chaining version", "[netns][tuning]") {
  const std::string version = GENERATE(as<std::string>{}, "0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0");
  INFO("cniVersion " << version);
  NetnsFixture fx;
  TempDir data;
  std::string c1 = fx.AddNetns("c1");
  Json prev = PtpAdd(version, c1, "ctr1");
  LinkState before = Eth0(fx, c1);
  std::string host_somaxconn = Sysctl(fx, "", "net/core/somaxconn");

  Json keys = kAllKeys;
  keys["dataDir"] = data.str();
  std::string conf = TuningConf(version, prev, keys).dump();
  RunResult add = CallPlugin("tuning", "ADD", conf, c1, "ctr1");
  INFO(Describe(add));
  REQUIRE(add.exit_code == 0);

  // The result is prevResult with eth0's new MAC.
  Json out = Json::parse(add.out);
  CHECK(out["cniVersion"] == version);
  bool saw_eth0 = false;
  for (const auto& iface : out["interfaces"]) {
    if (iface["name"] == "eth0") {
      saw_eth0 = true;
      CHECK(iface["mac"] == "c2:00:00:00:aa:01");
    }
  }
  CHECK(saw_eth0);

  LinkState after = Eth0(fx, c1);
  CHECK(after.mac == "c2:00:00:00:aa:01");
  CHECK(after.mtu == 1400);
  CHECK(after.txqlen == 321);
  CHECK(after.promisc);
  CHECK(after.allmulti);
  // Sysctls land in the container only; IFNAME became eth0.
  CHECK(Sysctl(fx, c1, "net/core/somaxconn") == "1234");
  CHECK(Sysctl(fx, c1, "net/ipv4/conf/eth0/rp_filter") == "2");
  CHECK(Sysctl(fx, "", "net/core/somaxconn") == host_somaxconn);
  CHECK(Files(data) == std::vector<std::string>{"ctr1_eth0.json"});

  // CHECK passes, then fails once a value is changed by hand.
  std::string chained = TuningConf(version, out, keys).dump();
  if (version != "0.3.0" && version != "0.3.1") {  // CHECK exists from 0.4.0
    RunResult check = CallPlugin("tuning", "CHECK", chained, c1, "ctr1");
    INFO(Describe(check));
    CHECK(check.exit_code == 0);
    REQUIRE(fx.Exec(c1, {"ip", "link", "set", "eth0", "mtu", "1300"}).exit_code == 0);
    RunResult bad = CallPlugin("tuning", "CHECK", chained, c1, "ctr1");
    CHECK(bad.exit_code != 0);
    CHECK(bad.out.find("MTU") != std::string::npos);
    REQUIRE(fx.Exec(c1, {"ip", "link", "set", "eth0", "mtu", "1400"}).exit_code == 0);
    REQUIRE(fx.Exec(c1, {"ip", "link", "set", "eth0", "promisc", "off"}).exit_code == 0);
    CHECK(CallPlugin("tuning", "CHECK", chained, c1, "ctr1").exit_code != 0);
  }

  // DEL restores every original and removes the backup; a second DEL is fine.
  RunResult del = CallPlugin("tuning", "DEL", chained, c1, "ctr1");
  INFO(Describe(del));
  REQUIRE(del.exit_code == 0);
  CHECK(Eth0(fx, c1) == before);
  CHECK(Files(data).empty());
  CHECK(CallPlugin("tuning", "DEL", chained, c1, "ctr1").exit_code == 0);

  PtpDel(version, c1, "ctr1");
  TearDown(fx, {c1});
}

TEST_CASE("tuning: MAC from CNI_ARGS, runtimeConfig and args.cni, later wins", "[netns][tuning]") {
  NetnsFixture fx;
  TempDir data;
  std::string c1 = fx.AddNetns("c1");
  Json prev = PtpAdd("1.0.0", c1, "ctr1");
  LinkState before = Eth0(fx, c1);

  Json keys = {{"dataDir", data.str()}, {"mac", "c2:00:00:00:00:01"}};
  RunResult r = CallPlugin("tuning", "ADD", TuningConf("1.0.0", prev, keys).dump(), c1, "ctr1",
                           {.args = "IgnoreUnknown=1;MAC=c2:00:00:00:00:02"});
  INFO(Describe(r));
  REQUIRE(r.exit_code == 0);
  CHECK(Eth0(fx, c1).mac == "c2:00:00:00:00:02");

  keys["runtimeConfig"] = {{"mac", "c2:00:00:00:00:03"}};
  keys["args"] = {{"cni", {{"mtu", 1280}}}};
  r = CallPlugin("tuning", "ADD", TuningConf("1.0.0", prev, keys).dump(), c1, "ctr2",
                 {.args = "MAC=c2:00:00:00:00:02"});
  INFO(Describe(r));
  REQUIRE(r.exit_code == 0);
  CHECK(Eth0(fx, c1).mac == "c2:00:00:00:00:03");
  CHECK(Eth0(fx, c1).mtu == 1280);

  keys["args"] = {{"cni", {{"mac", "c2:00:00:00:00:04"}, {"txQLen", 77},
                           {"sysctl", {{"net.core.somaxconn", "999"}}}}}};
  r = CallPlugin("tuning", "ADD", TuningConf("1.0.0", prev, keys).dump(), c1, "ctr3");
  INFO(Describe(r));
  REQUIRE(r.exit_code == 0);
  CHECK(Eth0(fx, c1).mac == "c2:00:00:00:00:04");
  CHECK(Eth0(fx, c1).txqlen == 77);
  CHECK(Sysctl(fx, c1, "net/core/somaxconn") == "999");

  // Undo in reverse order: each DEL puts back what its ADD found.
  for (const char* id : {"ctr3", "ctr2", "ctr1"}) {
    RunResult d = CallPlugin("tuning", "DEL", TuningConf("1.0.0", prev, keys).dump(), c1, id);
    INFO(Describe(d));
    REQUIRE(d.exit_code == 0);
  }
  CHECK(Eth0(fx, c1) == before);
  CHECK(Files(data).empty());
  PtpDel("1.0.0", c1, "ctr1");
  TearDown(fx, {c1});
}

TEST_CASE("tuning: bad keys, the allowlist and a missing prevResult change nothing", "[netns][tuning]") {
  NetnsFixture fx;
  TempDir data;
  TempDir etc;
  std::string c1 = fx.AddNetns("c1");
  Json prev = PtpAdd("1.0.0", c1, "ctr1");
  LinkState before = Eth0(fx, c1);
  std::string somaxconn = Sysctl(fx, c1, "net/core/somaxconn");

  auto refused = [&](const Json& sysctl, int code, std::vector<std::string> env = {},
                     bool chained = true) {
    Json keys = {{"dataDir", data.str()}, {"mac", "c2:00:00:00:00:09"}, {"mtu", 1300},
                 {"sysctl", sysctl}};
    RunResult r = CallPlugin("tuning", "ADD", TuningConf("1.0.0", chained ? prev : Json(), keys).dump(),
                             c1, "ctr1", {.env = std::move(env)});
    INFO(sysctl.dump() << " -> " << Describe(r));
    CHECK(r.exit_code != 0);
    CHECK(ErrorCode(r) == code);
    CHECK(Eth0(fx, c1) == before);
    CHECK(Sysctl(fx, c1, "net/core/somaxconn") == somaxconn);
    CHECK(Files(data).empty());
  };
  // Keys that leave /proc/sys/net.
  refused({{"net.core.somaxconn", "77"}, {"kernel.hostname", "x"}}, 7);
  refused({{"net.core.somaxconn", "77"}, {"/proc/sys/kernel/hostname", "x"}}, 7);
  refused({{"net.core.somaxconn", "77"}, {"IFNAME.x", "1"}}, 7);
  refused({{"net", "1"}}, 7);
  // A key below net/ that does not exist: the write fails after the valid
  // one went through, which is rolled back.
  refused({{"net.core.somaxconn", "77"}, {"net.core.zz_no_such_key", "1"}}, 5);
  // The allowlist (one regex per line).
  std::string allow = (etc.path() / "allowlist.conf").string();
  std::ofstream(allow) << "^net\\.core\\.somaxconn$\n\n^net\\.ipv4\\.conf\\.IFNAME\\.[a-z_]+$\n";
  std::vector<std::string> env = {"CNI_TUNING_ALLOWLIST=" + allow};
  refused({{"net.core.somaxconn", "77"}, {"net.ipv4.ip_forward", "1"}}, 7, env);
  // No prevResult.
  refused({{"net.core.somaxconn", "77"}}, 7, {}, false);

  // The allowed keys do go through.
  Json keys = {{"dataDir", data.str()},
               {"sysctl", {{"net.core.somaxconn", "77"}, {"net.ipv4.conf.IFNAME.rp_filter", "1"}}}};
  RunResult ok = CallPlugin("tuning", "ADD", TuningConf("1.0.0", prev, keys).dump(), c1, "ctr1", {.env = env});
  INFO(Describe(ok));
  CHECK(ok.exit_code == 0);
  CHECK(Sysctl(fx, c1, "net/core/somaxconn") == "77");

  PtpDel("1.0.0", c1, "ctr1");
  TearDown(fx, {c1});
}

TEST_CASE("tuning: one sysctl named twice, in any spelling, is refused with code 7 and changes nothing",
          "[netns][tuning]") {
  NetnsFixture fx;
  TempDir data;
  std::string c1 = fx.AddNetns("c1");
  Json prev = PtpAdd("1.0.0", c1, "ctr1");
  LinkState before = Eth0(fx, c1);
  std::string somaxconn = Sysctl(fx, c1, "net/core/somaxconn");
  std::string rp_filter = Sysctl(fx, c1, "net/ipv4/conf/eth0/rp_filter");

  // `sysctl` and `args_sysctl` are JSON text, pasted in as written: the
  // parsed document would keep only the last of two equal keys.
  auto conf = [&](const std::string& sysctl, const std::string& args_sysctl = "") {
    Json keys = {{"dataDir", data.str()}, {"mtu", 1300}, {"sysctl", "@SYSCTL@"}};
    if (!args_sysctl.empty()) keys["args"] = {{"cni", {{"sysctl", "@ARGS@"}}}};
    std::string text = TuningConf("1.0.0", prev, keys).dump();
    text.replace(text.find("\"@SYSCTL@\""), 10, sysctl);
    if (!args_sysctl.empty()) text.replace(text.find("\"@ARGS@\""), 8, args_sysctl);
    return text;
  };
  auto refused = [&](const std::string& text) {
    for (const char* command : {"ADD", "CHECK"}) {
      RunResult r = CallPlugin("tuning", command, text, c1, "ctr1");
      INFO(command << " " << text << " -> " << Describe(r));
      CHECK(r.exit_code != 0);
      CHECK(ErrorCode(r) == 7);
      CHECK(absl::StrContains(ErrorMessage(r), "duplicated sysctl keys are not allowed"));
    }
    CHECK(Eth0(fx, c1) == before);
    CHECK(Sysctl(fx, c1, "net/core/somaxconn") == somaxconn);
    CHECK(Sysctl(fx, c1, "net/ipv4/conf/eth0/rp_filter") == rp_filter);
    CHECK(Files(data).empty());
  };
  // The same key twice in the text.
  refused(conf(R"({"net.core.somaxconn":"77","net.core.somaxconn":"78"})"));
  refused(conf(R"({"net/core/somaxconn":"77","net.ipv4.ip_forward":"1","net/core/somaxconn":"77"})"));
  // Two spellings of one file: "." and "/", IFNAME and the interface's name.
  refused(conf(R"({"net.core.somaxconn":"77","net/core/somaxconn":"78"})"));
  refused(conf(R"({"net.ipv4.conf.IFNAME.rp_filter":"1","net.ipv4.conf.eth0.rp_filter":"2"})"));
  refused(conf(R"({"net/ipv4/conf/IFNAME/rp_filter":"1","net.ipv4.conf.eth0.rp_filter":"1"})"));
  refused(conf(R"({"net.core.somaxconn":"77","net/core/./somaxconn":"78"})"));
  // Within args.cni too.
  refused(conf(R"({"net.core.somaxconn":"77"})", R"({"net.core.somaxconn":"1","net/core/somaxconn":"2"})"));
  refused(conf(R"({})", R"({"net.core.somaxconn":"1","net.core.somaxconn":"2"})"));

  // args.cni overriding the config for the same file, in another spelling,
  // is not a duplicate: args.cni wins, as for every other key.
  RunResult ok = CallPlugin("tuning", "ADD",
                            conf(R"({"net.core.somaxconn":"77"})", R"({"net/core/somaxconn":"78"})"), c1,
                            "ctr1");
  INFO(Describe(ok));
  CHECK(ok.exit_code == 0);
  CHECK(Sysctl(fx, c1, "net/core/somaxconn") == "78");
  MustSucceed(CallPlugin("tuning", "DEL", conf(R"({})"), c1, "ctr1"));
  PtpDel("1.0.0", c1, "ctr1");
  TearDown(fx, {c1});
}

TEST_CASE("tuning: same kernel state as upstream, and ADD/DEL across implementations", "[netns][tuning]") {
  NetnsFixture fx;
  TempDir data;
  std::string c1 = fx.AddNetns("c1");
  std::string c2 = fx.AddNetns("c2");
  Json prev1 = PtpAdd("1.0.0", c1, "ctr1", "10.88.0.5/24");
  Json prev2 = PtpAdd("1.0.0", c2, "ctr2", "10.88.0.6/24");
  LinkState before1 = Eth0(fx, c1);
  LinkState before2 = Eth0(fx, c2);

  // upstream 1.1.1 has no txQLen: compare everything else.
  Json keys = kAllKeys;
  keys.erase("txQLen");
  keys["dataDir"] = data.str();
  std::string conf1 = TuningConf("1.0.0", prev1, keys).dump();
  std::string conf2 = TuningConf("1.0.0", prev2, keys).dump();
  RunResult ours = CallPlugin("tuning", "ADD", conf1, c1, "ctr1");
  RunResult theirs = CallPlugin("tuning", "ADD", conf2, c2, "ctr2", {.dir = kUpstreamDir});
  INFO(Describe(ours) << "\n" << Describe(theirs));
  REQUIRE(ours.exit_code == 0);
  REQUIRE(theirs.exit_code == 0);
  CHECK(Eth0(fx, c1) == Eth0(fx, c2));
  for (const char* path : {"net/core/somaxconn", "net/ipv4/conf/eth0/rp_filter"}) {
    CHECK(Sysctl(fx, c1, path) == Sysctl(fx, c2, path));
  }
  // Each one's CHECK accepts the other's work.
  CHECK(CallPlugin("tuning", "CHECK", TuningConf("1.0.0", Json::parse(theirs.out), keys).dump(), c2, "ctr2")
            .exit_code == 0);
  // (upstream 1.1.1's CHECK does not resolve IFNAME: give it the literal name)
  Json literal = keys;
  literal["sysctl"] = {{"net.core.somaxconn", "1234"}, {"net.ipv4.conf.eth0.rp_filter", "2"}};
  CHECK(CallPlugin("tuning", "CHECK", TuningConf("1.0.0", Json::parse(ours.out), literal).dump(), c1, "ctr1",
                   {.dir = kUpstreamDir})
            .exit_code == 0);

  // ADD by one, DEL by the other: originals back, no backup left.
  RunResult d1 = CallPlugin("tuning", "DEL", conf1, c1, "ctr1", {.dir = kUpstreamDir});
  RunResult d2 = CallPlugin("tuning", "DEL", conf2, c2, "ctr2");
  INFO(Describe(d1) << "\n" << Describe(d2));
  CHECK(d1.exit_code == 0);
  CHECK(d2.exit_code == 0);
  CHECK(Eth0(fx, c1) == before1);
  CHECK(Eth0(fx, c2) == before2);
  CHECK(Files(data).empty());

  PtpDel("1.0.0", c1, "ctr1");
  PtpDel("1.0.0", c2, "ctr2");
  TearDown(fx, {c1, c2});
}

TEST_CASE("tuning: GC removes this network's backups of unlisted attachments", "[netns][tuning]") {
  NetnsFixture fx;
  TempDir data;
  std::string c1 = fx.AddNetns("c1");
  Json prev = PtpAdd("1.1.0", c1, "ctr1");
  Json keys = {{"dataDir", data.str()}, {"mtu", 1450}};
  for (const char* id : {"keep", "stale"}) {
    REQUIRE(CallPlugin("tuning", "ADD", TuningConf("1.1.0", prev, keys).dump(), c1, id).exit_code == 0);
  }
  // A backup of another network (and one of upstream's, which names none).
  Json other = TuningConf("1.1.0", prev, keys);
  other["name"] = "othernet";
  REQUIRE(CallPlugin("tuning", "ADD", other.dump(), c1, "foreign").exit_code == 0);
  std::ofstream(data.path() / "upstream_eth0.json") << "{\n \"mtu\": 1500\n}";

  Json gc = {{"cniVersion", "1.1.0"}, {"name", "tunenet"}, {"type", "tuning"}, {"dataDir", data.str()},
             {"cni.dev/valid-attachments", Json::array({{{"containerID", "keep"}, {"ifname", "eth0"}}})}};
  RunResult r = CallPlugin("tuning", "GC", gc.dump(), "", "", {.ifname = ""});
  INFO(Describe(r));
  CHECK(r.exit_code == 0);
  CHECK(Files(data) == std::vector<std::string>{"foreign_eth0.json", "keep_eth0.json", "upstream_eth0.json"});

  CHECK(CallPlugin("tuning", "STATUS", gc.dump(), "", "", {.ifname = ""}).exit_code == 0);

  PtpDel("1.1.0", c1, "ctr1");
  TearDown(fx, {c1});
}

// tuning's configuration: key resolution, precedence, the allowlist, backups.
#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"

#include "backup.h"
#include "cni/base/error.h"
#include "cni/base/fs.h"
#include "cni/protocol/types.h"
#include "config.h"
#include "support/run.h"
#include "tuning.h"

namespace {

cni::NetConf Conf(const std::string& json) {
  auto c = cni::NetConf::Parse(json);
  REQUIRE(c.ok());
  return *c;
}

// Config::Parse of `conf` with CNI_ARGS `cni_args` and CNI_IFNAME `ifname`.
absl::StatusOr<cni::tuning::Config> ParseConfig(const cni::NetConf& conf,
                                                const std::string& cni_args,
                                                const std::string& ifname) {
  cni::CmdArgs args;
  args.conf = conf;
  args.args = cni_args;
  args.ifname = ifname;
  return cni::tuning::Config::Parse(args);
}

}  // namespace

TEST_CASE("tuning: sysctl keys resolve below /proc/sys/net or are refused", "[tuning]") {
  using cni::tuning::SysctlPath;
  CHECK(*SysctlPath("net.ipv4.ip_forward", "eth0") == "net/ipv4/ip_forward");
  CHECK(*SysctlPath("net.ipv4.conf.IFNAME.rp_filter", "eth0.100") == "net/ipv4/conf/eth0.100/rp_filter");
  CHECK(*SysctlPath("net/ipv6/conf/IFNAME/disable_ipv6", "e1") == "net/ipv6/conf/e1/disable_ipv6");
  // Dots become slashes first, so ".." can never climb out of net/.
  CHECK(*SysctlPath("net/../kernel/x", "eth0") == "net/kernel/x");
  for (const char* bad : {"kernel.hostname", "/proc/sys/kernel/hostname", "net", "IFNAME.x",
                          "/net/core/somaxconn", "kernel/../net"}) {
    INFO(bad);
    auto p = SysctlPath(bad, "eth0");
    REQUIRE_FALSE(p.ok());
    CHECK(cni::CodeOf(p.status()) == 7);
  }
}

TEST_CASE("tuning: later sources win: config < CNI_ARGS < runtimeConfig < args.cni", "[tuning]") {
  auto c = ParseConfig(
      Conf(R"({"cniVersion":"1.0.0","name":"n","type":"tuning","mac":"c2:00:00:00:00:01","mtu":1400,
               "sysctl":{"net.core.somaxconn":"1"},
               "runtimeConfig":{"mac":"c2:00:00:00:00:03"},
               "args":{"cni":{"mtu":1300,"txQLen":5,"allmulti":false,"sysctl":{"net.core.somaxconn":"2"}}}})"),
      "MAC=c2:00:00:00:00:02", "eth0");
  REQUIRE(c.ok());
  CHECK(c->mac->ToString() == "c2:00:00:00:00:03");
  CHECK(c->mtu == 1300);
  CHECK(*c->txqlen == 5);
  CHECK(*c->allmulti == false);
  CHECK_FALSE(c->promisc);
  REQUIRE(c->sysctls.size() == 1);
  CHECK(c->sysctls[0].value == "2");
  CHECK(c->data_dir == "/run/cni/tuning");

  auto env = ParseConfig(Conf(R"({"cniVersion":"1.0.0","name":"n","type":"tuning"})"),
                                      "MAC=c2:00:00:00:00:02", "eth0");
  REQUIRE(env.ok());
  CHECK(env->mac->ToString() == "c2:00:00:00:00:02");
  CHECK(env->ChangesLink());
}

TEST_CASE("tuning: a sysctl key written twice is found in the text, in the two sysctl scopes only",
          "[tuning]") {
  auto duplicate = [](const std::string& text) -> std::string {
    absl::Status st = cni::tuning::CheckLiteralSysctlDuplicates(text);
    if (st.ok()) return "";
    CHECK(cni::CodeOf(st) == 7);
    return std::string(st.message());
  };
  CHECK(duplicate(R"({"sysctl":{"net.a":"1","net.b":"2"}})").empty());
  CHECK(absl::StrContains(duplicate(R"({"sysctl":{"net.a":"1","net.b":"2","net.a":"3"}})"),
                          "duplicated sysctl keys are not allowed: \"net.a\" is given twice"));
  // "sysctl" matched without case, as Go's decoder does; two objects under
  // it (the parsed document keeps one) are one scope.
  CHECK(!duplicate(R"({"Sysctl":{"net.a":"1","net.a":"2"}})").empty());
  CHECK(!duplicate(R"({"sysctl":{"net.a":"1"},"SYSCTL":{"net.a":"2"}})").empty());
  CHECK(!duplicate(R"({"sysctl":{"net.a":"1","net.a":"2"},"sysctl":{"net.b":"3"}})").empty());
  // args.cni.sysctl is a scope of its own: the same key there overrides.
  CHECK(duplicate(R"({"sysctl":{"net.a":"1"},"args":{"cni":{"sysctl":{"net.a":"2"}}}})").empty());
  CHECK(!duplicate(R"({"args":{"CNI":{"sysctl":{"net.a":"1","net.a":"2"}}}})").empty());
  // Equal keys anywhere else are not this check's business, nor is a
  // "sysctl" below the top level or in an array; a broken document is
  // NetConf::Parse's (it runs first).
  CHECK(duplicate(R"({"mtu":1,"mtu":2,"prevResult":{"sysctl":{"net.a":"1","net.a":"2"}}})").empty());
  CHECK(duplicate(R"({"args":{"cni":[{"sysctl":{"net.a":"1","net.a":"2"}}]}})").empty());
  CHECK(duplicate(R"({"sysctl":[{"net.a":"1","net.a":"2"}]})").empty());
  CHECK(duplicate(R"({"sysctl":{"net.a":"1","net.b":)").empty());
  CHECK(duplicate("").empty());
  // Keys after a nested container still count in their own object.
  CHECK(!duplicate(R"({"sysctl":{"net.a":"1","x":{"net.a":"2"},"net.a":"3"}})").empty());
}

TEST_CASE("tuning: bad values are refused with the right code", "[tuning]") {
  auto code = [](const std::string& json, const std::string& args = "") {
    auto c = ParseConfig(Conf(json), args, "eth0");
    return c.ok() ? 0 : cni::CodeOf(c.status());
  };
  CHECK(code(R"({"name":"n","mac":"zz"})") == 7);
  CHECK(code(R"({"name":"n","mtu":-1})") == 7);
  CHECK(code(R"({"name":"n","txQLen":-1})") == 7);
  CHECK(code(R"({"name":"n","mtu":"big"})") == 6);
  CHECK(code(R"({"name":"n","sysctl":{"net.core.somaxconn":5}})") == 6);
  CHECK(code(R"({"name":"n","sysctl":{"kernel.x":"5"}})") == 7);
  CHECK(code(R"({"name":"n"})", "FOO=1") == 4);
  CHECK(code(R"({"name":"n"})", "IgnoreUnknown=1;FOO=1") == 0);
}

TEST_CASE("tuning: the allowlist is one regex per line, searched in the key", "[tuning]") {
  auto c = ParseConfig(
      Conf(R"({"name":"n","sysctl":{"net.core.somaxconn":"1","net.ipv4.conf.IFNAME.arp_filter":"1"}})"), "", "eth0");
  REQUIRE(c.ok());
  CHECK(cni::tuning::CheckAllowlist(*c, "^net\\.core\\.somaxconn$\n\n  ^net\\.ipv4\\.conf\\.IFNAME\\.[a-z_]+$  \n").ok());
  auto refused = cni::tuning::CheckAllowlist(*c, "^net\\.core\\.somaxconn$\n");
  CHECK(cni::CodeOf(refused) == 7);
  CHECK(cni::CodeOf(cni::tuning::CheckAllowlist(*c, "(\n")) == 7);
  CHECK(cni::tuning::CheckAllowlistFile(*c, "/nonexistent/allowlist.conf").ok());
}

TEST_CASE("tuning: backups use upstream's layout and read back", "[tuning]") {
  cni::tuning::Backup b;
  b.mac = "0a:00:00:00:00:01";
  b.promisc = false;
  b.mtu = 1500;
  b.txqlen = 1000;
  b.network = "n";
  CHECK(b.ToJson() == "{\n \"mac\": \"0a:00:00:00:00:01\",\n \"promisc\": false,\n \"mtu\": 1500,\n"
                      " \"txQLen\": 1000,\n \"network\": \"n\"\n}");
  auto back = cni::tuning::Backup::Parse(b.ToJson());
  REQUIRE(back.ok());
  CHECK(back->mac == b.mac);
  CHECK(*back->promisc == false);
  CHECK(back->mtu == 1500);
  CHECK_FALSE(back->allmulti);
  CHECK(*back->txqlen == 1000);
  // Upstream's file (no "network").
  auto up = cni::tuning::Backup::Parse("{\n \"mtu\": 9000,\n \"allmulti\": true\n}");
  REQUIRE(up.ok());
  CHECK(up->network.empty());
  CHECK(*up->allmulti);
  CHECK(cni::tuning::BackupPath("/d", "cid", "eth0") == "/d/cid_eth0.json");
}

TEST_CASE("tuning: sysctl values compare field by field", "[tuning]") {
  CHECK(cni::tuning::SameSysctlValue("4096 87380 6291456", "4096\t87380\t6291456\n"));
  CHECK_FALSE(cni::tuning::SameSysctlValue("1", "2"));
}

TEST_CASE("tuning: DEL removes a killed ADD's temporary backup files, old and new style",
          "[tuning]") {
  cni::test::TempDir tmp;
  std::string conf = R"({"cniVersion":"1.0.0","name":"n","type":"tuning","dataDir":")" +
                     tmp.str() + R"("})";
  std::string backup = cni::tuning::BackupPath(tmp.str(), "ctr", "eth0");
  // A writer killed between write and rename leaves "<backup>~" (today) or
  // "<backup>.tmp" (earlier versions), and no backup.
  for (const std::string& left : {cni::TempPathFor(backup), cni::tuning::OldTempPath(backup)}) {
    std::ofstream(left) << R"({"mtu": 1500})";
  }
  std::ofstream(tmp.path() / "other_eth0.json~") << "{}";  // another attachment's

  cni::CmdArgs args;
  args.container_id = "ctr";
  args.ifname = "eth0";
  args.conf = Conf(conf);
  REQUIRE(cni::tuning::Funcs().del(args).ok());
  CHECK(!std::filesystem::exists(cni::TempPathFor(backup)));
  CHECK(!std::filesystem::exists(cni::tuning::OldTempPath(backup)));
  CHECK(std::filesystem::exists(tmp.path() / "other_eth0.json~"));

  // A backup is written atomically: no temporary file stays behind.
  REQUIRE(cni::tuning::WriteBackup(backup, {.mtu = 1500}).ok());
  CHECK(std::filesystem::exists(backup));
  CHECK(!std::filesystem::exists(cni::TempPathFor(backup)));
  REQUIRE(cni::tuning::Funcs().del(args).ok());  // no netns: only the file goes
  CHECK(!std::filesystem::exists(backup));
}

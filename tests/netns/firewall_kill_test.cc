// The firewall plugin killed at every step of ADD (SIGKILL: no cleanup
// runs), on both packet-filter backends, as a runtime then goes on: DEL
// without prevResult (what it sends after a failed ADD). Nothing of the
// attachment may be left (no rule of its addresses, in iptables or
// nftables; no record, intent or temporary file), a bystander attachment
// keeps its rules, and at the end ADD, CHECK and DEL work again.
//
// Two kinds of node: one where the shared chains exist already (iptables
// then writes over netlink and records handles), and a fresh one before
// each kill (the first ADD: an iptables-restore commit, the nftables tables
// made in the same transaction).
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cni/base/json.h"
#include "support/cni_call.h"
#include "support/kill_inject.h"
#include "support/netns_fixture.h"
#include "support/run.h"

namespace {

using cni::Json;
using namespace cni::test;  // NOLINT: test brevity

constexpr const char* kContainer = "ctr-kill";
const std::vector<std::string> kAddresses = {"10.89.0.5", "fd00:89::5"};
const std::vector<std::string> kBystander = {"10.89.0.7", "fd00:89::7"};

// A chained configuration; `addresses` become prevResult's (none: DEL as a
// runtime sends it after a failed ADD, without prevResult).
std::string Conf(const std::string& backend, const std::vector<std::string>& addresses) {
  Json c = NetConf("1.0.0", "killnet", "firewall", {{"backend", backend}});
  if (addresses.empty()) return c.dump();
  Json ips = Json::array();
  for (const std::string& a : addresses) ips.push_back({{"address", a + (absl::StrContains(a, ':') ? "/64" : "/24")}});
  c["prevResult"] = {{"cniVersion", "1.0.0"}, {"interfaces", Json::array({{{"name", "cni0"}}})}, {"ips", ips}};
  return c.dump();
}

RunResult Fw(const std::string& command, const std::string& conf, const std::string& id) {
  return CallPlugin("firewall", command, conf, "/var/run/netns/none", id);
}

// What both packet filters hold, as one text (iptables-save's dated
// comments left out).
std::string Ruleset(const NetnsFixture& fx) {
  std::string out = fx.Exec("", {"nft", "list", "ruleset"}).out;
  for (const char* save : {"iptables-save", "ip6tables-save"}) {
    for (absl::string_view line : absl::StrSplit(fx.Exec("", {save}).out, '\n')) {
      if (!absl::StartsWith(line, "#")) absl::StrAppend(&out, line, "\n");
    }
  }
  return out;
}

// Everything the killed attachment could have left, as lines (empty when
// clean); and whether the bystander's rules are all there.
std::vector<std::string> Leftovers(const NetnsFixture& fx, bool bystander) {
  std::vector<std::string> left;
  const std::string rules = Ruleset(fx);
  for (const std::string& a : kAddresses) {
    if (absl::StrContains(rules, a + " ") || absl::StrContains(rules, a + "/")) left.push_back("rule of " + a);
  }
  if (absl::StrContains(rules, kContainer)) left.push_back("rule commented " + std::string(kContainer));
  for (const std::string& a : bystander ? kBystander : std::vector<std::string>{}) {
    if (!absl::StrContains(rules, a + "/") && !absl::StrContains(rules, a + " ")) left.push_back("bystander lost " + a);
  }
  if (!left.empty()) left.push_back(rules);
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator("/run/cni", ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!it->is_directory() && (absl::EndsWith(name, "~") || absl::StrContains(name, kContainer))) {
      left.push_back("file " + it->path().string());
    }
  }
  return left;
}

// The node as before any ADD: the shared chains and tables gone.
void FreshNode(const NetnsFixture& fx) {
  for (const char* ipt : {"iptables", "ip6tables"}) {
    fx.Exec("", {ipt, "-F"});
    fx.Exec("", {ipt, "-X"});
  }
  fx.Exec("", {"nft", "delete", "table", "ip", "cni_firewall"});
  fx.Exec("", {"nft", "delete", "table", "ip6", "cni_firewall"});
}

// Kills ADD at every kill point of every kind of call; returns the kills.
int KillEverywhere(NetnsFixture& fx, const std::string& backend, bool fresh) {
  const std::string add_conf = Conf(backend, kAddresses);
  const std::string del_conf = Conf(backend, {});
  const AddCall call{
      .plugin = "firewall", .conf = add_conf, .netns = "/var/run/netns/none", .container_id = kContainer};
  // A bystander of the same network whose rules must outlive every DEL.
  if (!fresh) MustSucceed(Fw("ADD", Conf(backend, kBystander), "ctr-bystander"), "bystander ADD");
  int kills = 0;
  std::map<std::string, int> kills_at;
  for (const std::string& syscall : KillSyscalls()) {
    bool finished = false;
    for (int nth = 1; nth <= 200 && !finished; ++nth) {
      if (fresh) FreshNode(fx);
      RunResult run = AddKilledAt(call, syscall, nth);
      finished = run.exit_code == 0;
      if (!finished) {
        ++kills;
        ++kills_at[syscall];
        INFO(backend << " killed at " << syscall << " #" << nth << ": " << Describe(run));
        // Killed itself, or failed (and rolled back) because a program it
        // ran (iptables-restore, iptables-save) was killed.
        CHECK((run.exit_code == 128 + 9 || (run.exit_code == 1 && ErrorCode(run) > 0)));
      }
      MustSucceed(Fw("DEL", del_conf, kContainer), "DEL without prevResult");
      std::vector<std::string> left = Leftovers(fx, !fresh);
      INFO(backend << (fresh ? " (fresh node)" : "") << " killed at " << syscall << " #" << nth
                   << ", then DEL:\n" << absl::StrJoin(left, "\n"));
      CHECK(left.empty());
      if (!left.empty()) return kills;  // one report is enough
    }
    INFO(syscall);
    CHECK(finished);  // the ADD ran to its end once N passed its last call
  }
  // Every kill point an ADD that nothing stops offers was reached.
  if (fresh) FreshNode(fx);
  std::map<std::string, int> points = KillPointsOfAdd(call);
  MustSucceed(Fw("DEL", del_conf, kContainer), "DEL");
  for (const std::string& syscall : KillSyscalls()) {
    INFO(backend << ": " << syscall << ": " << points[syscall] << " kill points, " << kills_at[syscall] << " kills");
    CHECK(kills_at[syscall] >= points[syscall]);
  }
  // The node works: ADD puts the rules in, CHECK sees them, DEL takes them out.
  MustSucceed(Fw("ADD", add_conf, kContainer), "ADD after the kills");
  const std::string rules = Ruleset(fx);
  for (const std::string& a : kAddresses) CHECK(absl::StrContains(rules, a));
  MustSucceed(Fw("CHECK", add_conf, kContainer), "CHECK after the kills");
  MustSucceed(Fw("DEL", del_conf, kContainer), "DEL after the kills");
  INFO(absl::StrJoin(Leftovers(fx, !fresh), "\n"));
  CHECK(Leftovers(fx, !fresh).empty());
  if (!fresh) MustSucceed(Fw("DEL", Conf(backend, {}), "ctr-bystander"), "bystander DEL");
  return kills;
}

}  // namespace

TEST_CASE("kill: firewall killed at every step of ADD on both backends, then DEL leaves nothing",
          "[netns][kill][firewall-kill]") {
  for (const std::string backend : {"iptables", "nftables"}) {
    for (const bool fresh : {false, true}) {
      DYNAMIC_SECTION(backend << (fresh ? ", fresh node" : ", chains in place")) {
        NetnsFixture fx;
        int kills = KillEverywhere(fx, backend, fresh);
        WARN("firewall (" << backend << (fresh ? ", fresh node" : "") << ") ADD: " << kills << " kill points");
        CHECK(kills > 10);
        INFO(absl::StrJoin(fx.Leftovers(), ", "));
        CHECK(fx.Leftovers().empty());
      }
    }
  }
}

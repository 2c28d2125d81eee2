// Each plugin's README "## Keys" table against the keys its code reads
// (Config::KeyNames(), or Config::kKeys.Names() for a plugin with
// PluginKeys: built from the plugin's key table), both ways: a key the code
// reads that the README does not list fails, and so does a key the README
// lists that the code does not read.
//
// How a README table is read:
// - the rows of the first table under the heading "## Keys" (an IPAM
//   plugin's: "## Configuration", as its keys are those of the "ipam" object);
//   the table ends at the first line that is not a table row; its first two
//   lines are the header and its rule;
// - a row names the keys in backticks in its first column; a row may name
//   several (`conditionsV4` / `conditionsV6`, or `args.cni.mac`, `runtimeConfig.mac`);
// - a name after "CNI_ARGS " (CNI_ARGS `MAC`) is an environment variable's
//   key, not a configuration key, and is skipped;
// - keys inside objects are written with their path: `runtimeConfig.deviceID`,
//   `args.cni.mac`, `etcd.endpoints`; the code names them the same way. An
//   IPAM plugin's own keys, inside "ipam", are written bare (`ranges`);
// - a first column may say what its keys are before a colon ("requested IPs:
//   CNI_ARGS `IP`, `args.cni.ips`"): only the backticked names count;
// - the keys skel reads for every plugin (cniVersion, name, type, ipam, dns,
//   args, runtimeConfig, capabilities, prevResult) may be listed without the
//   plugin's code naming them; when a plugin's KeyNames() names one (its
//   "dns" row, "ipam" for a plugin that delegates to IPAM), the README must
//   list it like any other key;
// - names are compared exactly: the README spells a key as the code does
//   (JSON matching is case-insensitive, the documentation is not).
#include <catch2/catch.hpp>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "ipam/dhcp/config.h"
#include "ipam/etcd-ipam/config.h"
#include "ipam/host-local/config.h"
#include "meta/bandwidth/config.h"
#include "meta/flannel/config.h"
#include "meta/sbr/config.h"
#include "meta/tuning/config.h"
#include "meta/vrf/config.h"
#include "plugins/bridge/config.h"
#include "plugins/dummy/config.h"
#include "plugins/host-device/config.h"
#include "plugins/ipvlan/config.h"
#include "plugins/loopback/config.h"
#include "plugins/macvlan/config.h"
#include "plugins/ptp/config.h"
#include "plugins/tap/config.h"
#include "plugins/vlan/config.h"

namespace {

const std::set<std::string>& CommonKeys() {
  static const std::set<std::string> kCommon = {"cniVersion", "name",         "type",
                                                "ipam",       "dns",          "args",
                                                "runtimeConfig", "capabilities", "prevResult"};
  return kCommon;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The backticked names in a row's first column, CNI_ARGS names left out.
std::vector<std::string> NamesInCell(absl::string_view cell) {
  std::vector<std::string> names;
  std::vector<absl::string_view> parts = absl::StrSplit(cell, '`');
  // Odd parts are inside backticks; the part before each tells what it is.
  for (size_t i = 1; i < parts.size(); i += 2) {
    if (absl::EndsWith(absl::StripTrailingAsciiWhitespace(parts[i - 1]), "CNI_ARGS")) continue;
    names.emplace_back(parts[i]);
  }
  return names;
}

// The key names of the "## Keys" table of the README text `readme` (rules above).
std::vector<std::string> ReadmeKeyNames(absl::string_view readme) {
  std::vector<std::string> names;
  bool in_keys = false;
  int table_line = 0;
  for (absl::string_view line : absl::StrSplit(readme, '\n')) {
    if (absl::StartsWith(line, "## ")) {
      in_keys = absl::StripTrailingAsciiWhitespace(line) == "## Keys" ||
                absl::StartsWith(line, "## Configuration");
      continue;
    }
    if (!in_keys) continue;
    if (!absl::StartsWith(line, "|")) {
      if (table_line > 0) break;  // the end of the key table
      continue;
    }
    if (++table_line <= 2) continue;  // the header and its rule
    std::vector<absl::string_view> cells = absl::StrSplit(line, '|');
    if (cells.size() < 2) continue;
    for (std::string& name : NamesInCell(cells[1])) names.push_back(std::move(name));
  }
  return names;
}

// What is wrong between a README's names and the code's, "" when nothing.
std::string CompareKeys(const std::vector<std::string>& readme, const std::vector<std::string>& code) {
  const std::set<std::string> documented(readme.begin(), readme.end());
  const std::set<std::string> read(code.begin(), code.end());
  std::vector<std::string> undocumented, unread;
  for (const std::string& key : read) {
    if (!documented.contains(key)) undocumented.push_back(key);
  }
  for (const std::string& key : documented) {
    if (!read.contains(key) && !CommonKeys().contains(key)) unread.push_back(key);
  }
  std::string problems;
  if (readme.empty()) problems += "no \"## Keys\" table; ";
  if (!undocumented.empty()) problems += "read but not in the README: " + absl::StrJoin(undocumented, ", ") + "; ";
  if (!unread.empty()) problems += "in the README but not read: " + absl::StrJoin(unread, ", ");
  return problems;
}

}  // namespace

TEST_CASE("README key tables: rows, several names, CNI_ARGS and the common keys", "[unit][readme]") {
  const std::string readme =
      "# p\n\n## Keys\n\n| key | meaning |\n|---|---|\n"
      "| `a` | one |\n| `b` / `c` | two |\n| `args.cni.mac`, CNI_ARGS `MAC` | env |\n"
      "| `ipam` | common |\n\nA second table is not the key table:\n\n| `notakey` | x |\n";
  CHECK(ReadmeKeyNames(readme) == std::vector<std::string>{"a", "b", "c", "args.cni.mac", "ipam"});
  const std::vector<std::string> code = {"a", "b", "c", "args.cni.mac"};
  CHECK(CompareKeys(ReadmeKeyNames(readme), code).empty());
  // A key the code reads that the README lacks, and one it lists that the code does not read.
  CHECK(CompareKeys(ReadmeKeyNames(readme), {"a", "b", "c", "args.cni.mac", "d"}) ==
        "read but not in the README: d; ");
  CHECK(CompareKeys(ReadmeKeyNames(absl::StrReplaceAll(readme, {{"| `a` | one |\n", "| `a` | one |\n| `bogus` | x |\n"}})), code) ==
        "in the README but not read: bogus");
  // A common key the plugin's code names must be documented like any other.
  CHECK(CompareKeys({"a"}, {"a", "dns"}) == "read but not in the README: dns; ");
  CHECK(CompareKeys({}, {}) == "no \"## Keys\" table; ");
}

TEST_CASE("README key tables match the keys each plugin reads", "[unit][readme]") {
  struct Plugin {
    std::string dir;
    std::vector<std::string> keys;
  };
  const std::vector<Plugin> plugins = {
      {"plugins/bridge", cni::bridge::Config::kKeys.Names()},
      {"plugins/dummy", cni::dummy::Config::KeyNames()},
      {"plugins/host-device", cni::host_device::Config::kKeys.Names()},
      {"plugins/ipvlan", cni::ipvlan::Config::KeyNames()},
      {"plugins/loopback", cni::loopback::Config::KeyNames()},
      {"plugins/macvlan", cni::macvlan::Config::KeyNames()},
      {"plugins/ptp", cni::ptp::Config::kKeys.Names()},
      {"plugins/tap", cni::tap::Config::KeyNames()},
      {"plugins/vlan", cni::vlan::Config::KeyNames()},
      {"meta/bandwidth", cni::bandwidth::Config::KeyNames()},
      {"meta/flannel", cni::flannel::Config::KeyNames()},
      {"meta/sbr", cni::sbr::Config::KeyNames()},
      {"meta/tuning", cni::tuning::Config::KeyNames()},
      {"meta/vrf", cni::vrf::Config::KeyNames()},
      {"ipam/dhcp", cni::dhcp::Config::KeyNames()},
      {"ipam/etcd-ipam", cni::etcdipam::Config::KeyNames()},
      {"ipam/host-local", cni::hostlocal::Config::KeyNames()},
  };
  for (const Plugin& p : plugins) {
    INFO(p.dir << "/README.md");
    const std::string readme = ReadFile(std::string(CNI_TEST_SOURCE_DIR) + "/" + p.dir + "/README.md");
    REQUIRE_FALSE(readme.empty());
    CHECK(CompareKeys(ReadmeKeyNames(readme), p.keys) == "");
  }
}

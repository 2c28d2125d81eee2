// Configuration of the tuning plugin: the keys it reads from the network
// configuration, args.cni, runtimeConfig and CNI_ARGS, parsed and validated
// before any side effect (DESIGN rule 3).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/base/ip.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"

namespace cni::tuning {

inline constexpr absl::string_view kDefaultDataDir = "/run/cni/tuning";
inline constexpr absl::string_view kDefaultAllowlist = "/etc/cni/tuning/allowlist.conf";
// The runtime's environment may point the allowlist elsewhere (tests do). It is
// deliberately not a config key: whoever writes the config must not be able to
// choose the list that restricts it.
inline constexpr absl::string_view kAllowlistEnv = "CNI_TUNING_ALLOWLIST";

struct Sysctl {
  std::string key;    // as written in the config ("net.ipv4.conf.IFNAME.rp_filter")
  std::string path;   // resolved, relative to /proc/sys ("net/ipv4/conf/eth0/rp_filter")
  std::string value;
};

struct Config {
  std::vector<Sysctl> sysctls;          // sorted by key (the map's order)
  std::optional<net::MacAddress> mac;
  bool promisc = false;                 // true: turn promiscuous mode on
  int mtu = 0;                          // 0: leave alone
  std::optional<bool> allmulti;
  std::optional<int> txqlen;
  std::string data_dir;
  std::string name;                     // the network's name (recorded in backups, for GC)

  // prevResult as parsed: ADD and CHECK require one (and fail on a bad one);
  // STATUS does not look at it.
  absl::StatusOr<std::optional<Result>> prev_result = std::optional<Result>();

  // True if ADD changes a link attribute (and so saves a backup first).
  bool ChangesLink() const { return mac || promisc || mtu != 0 || allmulti || txqlen; }

  // Parses the configuration (args.conf, CNI_ARGS, prevResult). Later sources
  // win, as upstream: config keys < CNI_ARGS MAC < runtimeConfig.mac <
  // args.cni.*. CNI_IFNAME resolves IFNAME in sysctl keys. Wrong types are
  // code 6; bad values (a MAC that does not parse, negative mtu/txQLen, a
  // sysctl key outside /proc/sys/net, one sysctl named twice in any spelling)
  // code 7; unknown CNI_ARGS keys code 4 (unless IgnoreUnknown).
  static absl::StatusOr<Config> Parse(const CmdArgs& args);
  // The configuration keys Parse reads (its key table's names and the keys
  // read beside it, with their path: "runtimeConfig.mac"). The README's
  // "## Keys" table lists exactly these (tests/unit/readme_keys).
  static std::vector<std::string> KeyNames();
};

// What DEL and GC need: only the dataDir, so they still work when other keys
// have become invalid.
struct BackupDir {
  std::string path;  // the dataDir, default kDefaultDataDir

  static absl::StatusOr<BackupDir> Parse(const CmdArgs& args);
};

// Refuses (code 7) a configuration whose "sysctl" object (top level or
// args.cni) names one key twice in its JSON text, before any change, as
// upstream 1.2+ does. The parsed document cannot tell (the last of two equal
// keys wins), so this reads `stdin_data` itself. Two different spellings of
// one sysctl ("." and "/", "IFNAME" and the interface's name) are refused by
// Config::Parse, which calls this first.
absl::Status CheckLiteralSysctlDuplicates(absl::string_view stdin_data);

// The sysctl key as a path relative to /proc/sys: every '.' becomes '/', then
// the first "IFNAME" becomes `ifname` (so names with dots work), and the
// result, cleaned lexically, must name something below net/. Code 7 otherwise.
absl::StatusOr<std::string> SysctlPath(absl::string_view key, absl::string_view ifname);

// Checks every sysctl key against the allowlist `text` (one ECMAScript regex
// per line, searched anywhere in the key as Go's regexp.MatchString does;
// blank lines ignored). Code 7 naming the first key that no line matches.
absl::Status CheckAllowlist(const Config& config, absl::string_view text);

// Reads the allowlist file at `path` and checks it; a missing file allows
// everything (upstream's rule).
absl::Status CheckAllowlistFile(const Config& config, const std::string& path);


}  // namespace cni::tuning

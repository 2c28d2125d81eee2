// Configuration keys several plugins share, parsed as upstream's plugins parse
// them, so that each plugin's config.cc only says which keys it takes. Each
// parser reads the one key its table row names (config::Parsed hands it that
// row's Field), so `config::Parsed("mtu", &Config::mtu, ParseVethMtuKey)`.
// Every error names the plugin (`plugin`: "bridge", "ptp", ...). The
// configuration's "dns" is Dns::FromConfig (cni/protocol/types.h), for every plugin.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/base/ip.h"
#include "cni/base/json.h"
#include "cni/base/status_macros.h"
#include "cni/plugin/config_schema.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"

namespace cni {

// "mtu" of a veth-based plugin: 0 when absent, null or 0 (the kernel's
// default); else it must be within veth's limits, 68..65535 (ETH_MIN_MTU ..
// ETH_MAX_MTU), or code 7, so nothing is asked of IPAM for a link the kernel
// would refuse. A non-integer: code 6.
absl::StatusOr<int> ParseVethMtuKey(const config::Field& key, absl::string_view plugin);

// "master" of a plugin whose link sits on a master (macvlan, ipvlan, vlan):
// "" when absent, null or empty (the plugin then picks one, or refuses);
// else it must be a valid interface name (code 7).
absl::StatusOr<std::string> ParseMasterKey(const config::Field& key, absl::string_view plugin);

// "mtu" of a link on a master: 0 (the master's) when absent or null, else
// 0 ... 65535 (code 7 `invalid MTU -1` outside). The bound that matters, the
// master's MTU, is the kernel's to know: see sublink::RequireMtuWithin.
absl::StatusOr<int> ParseSublinkMtuKey(const config::Field& key, absl::string_view plugin);

// "ipMasqBackend": "" when absent, null or empty (upstream's default choice),
// else "iptables" or "nftables"; anything else is code 7.
absl::StatusOr<std::string> ParseIpMasqBackendKey(const config::Field& key, absl::string_view plugin);

// A list of routes, each {"dst": CIDR, "gw": IP} as in a result or an ipam
// object (also "mtu", "advmss", "priority", "table", "scope", kept for the
// result): [] when absent or null. "dst" is required and kept in network
// form (host bits cleared); "gw" is optional ("" is none) and must be of
// dst's family. A wrong JSON type is code 6; a missing "dst", a bad prefix
// or address, or a gateway of the other family is code 7, each naming the
// entry (`routes[1].gw`).
absl::StatusOr<std::vector<Route>> ParseRoutesKey(const config::Field& key, absl::string_view plugin);

// The MAC of a link plugin (macvlan, tap) from its three sources, later wins:
// the key "mac", CNI_ARGS MAC, runtimeConfig.mac (upstream's order); empty
// strings do not count. Only the winner is parsed: bad MAC, code 7. None: nullopt.
absl::StatusOr<std::optional<net::MacAddress>> ResolveMacKeys(const CmdArgs& args,
                                                              absl::string_view plugin);
// The configuration keys ResolveMacKeys reads, "mac" and "runtimeConfig.mac"
// (CNI_ARGS MAC is not a configuration key), for a plugin's KeyNames.
std::vector<std::string> MacKeyNames();

// The configuration of a plugin that may delegate to IPAM: `keys` parsed
// into a Config (config::ParseKeys: wrong types code 6, bad values code 7,
// prefixed with `plugin`), and its `ipam_type` the "ipam" type skel parsed
// ("" without one). `Out`: a type derived from Config (a plugin's
// TeardownConfig, which reads fewer keys into the same fields).
template <typename Config, typename Out = Config>
absl::StatusOr<Out> ParseKeysAndIpam(const CmdArgs& args, const config::Schema<Config>& keys,
                                     absl::string_view plugin) {
  Out c;
  CNI_RETURN_IF_ERROR(config::ParseKeys(args.conf.raw, keys, plugin, static_cast<Config&>(c)));
  c.ipam_type = args.conf.ipam_type;
  return c;
}

// The configuration keys such a plugin reads, for its KeyNames: its table's
// names, the keys `beside` it read in code, and "ipam" (the IPAM plugin it
// delegates to). Its README's "## Keys" table lists exactly these
// (tests/unit/readme_keys).
template <typename Config>
std::vector<std::string> KeyNamesAndIpam(const config::Schema<Config>& keys,
                                         std::vector<std::string> beside = {}) {
  std::vector<std::string> names = config::KeyNames(keys);
  names.insert(names.end(), beside.begin(), beside.end());
  names.push_back("ipam");
  return names;
}

// All a plugin whose DEL and GC read fewer keys than ADD (bridge, ptp,
// host-device) says of its keys, in one place: its Config's `kKeys`, defined
// in its config.cc as the table and little else.
template <typename Config>
struct PluginKeys {
  absl::string_view plugin;                 // the message prefix: "ptp"
  config::Schema<Config> table;             // every key ADD reads
  std::vector<absl::string_view> teardown;  // the rows of `table` DEL and GC read (TeardownOf)
  std::vector<std::string> beside = {};     // keys read outside the table, for Names()

  // The table's keys and the IPAM type (ParseKeysAndIpam); the plugin's
  // Config::Parse goes on from there with its cross-key rules.
  absl::StatusOr<Config> Parse(const CmdArgs& args) const { return ParseKeysAndIpam(args, table, plugin); }
  // The configuration keys the plugin reads (KeyNamesAndIpam).
  std::vector<std::string> Names() const { return KeyNamesAndIpam(table, beside); }
};

// The lenient configuration a plugin's DEL and GC read (the Teardown of
// TypedWithTeardown): only the rows of Config::kKeys (a PluginKeys) named
// in its `teardown`, and the IPAM type; the other fields keep their
// defaults. So an ADD refused for another key leaves a DEL that succeeds,
// and a configuration broken since ADD still removes what ADD made. A wrong
// JSON type of a key it reads is still code 6 (prefixed with the plugin).
template <typename Config>
struct TeardownOf : Config {
  // The teardown rows of Config::kKeys and the IPAM type, from args.conf.
  static absl::StatusOr<TeardownOf> Parse(const CmdArgs& args) {
    return ParseKeysAndIpam<Config, TeardownOf>(args, config::Only(Config::kKeys.table, Config::kKeys.teardown),
                                                Config::kKeys.plugin);
  }
};

// ParseKeysAndIpam for a plugin that also takes a MAC (macvlan, tap):
// Config::mac from ResolveMacKeys.
template <typename Config>
absl::StatusOr<Config> ParseKeysIpamAndMac(const CmdArgs& args, const config::Schema<Config>& keys,
                                           absl::string_view plugin) {
  CNI_ASSIGN_OR_RETURN(Config c, ParseKeysAndIpam(args, keys, plugin));
  CNI_ASSIGN_OR_RETURN(c.mac, ResolveMacKeys(args, plugin));
  return c;
}

// The "dns" row of every plugin's key table: Dns::FromConfig (set only when
// the config's dns sets a field, upstream's meaning) into Config::dns.
template <typename Config>
config::Key<Config> DnsKey() {
  return config::Custom("dns", &Config::dns, Dns::FromConfig);
}

// The key table of a plugin whose only key of its own is "dns": dummy, loopback.
template <typename Config>
config::Schema<Config> DnsOnlyKeys() {
  return {DnsKey<Config>()};
}

}  // namespace cni

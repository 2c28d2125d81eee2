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

}  // namespace cni

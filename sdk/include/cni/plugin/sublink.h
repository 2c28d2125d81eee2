// The steps interface plugins share whose container link sits on a master
// interface (macvlan, ipvlan, vlan; upstream's "main" plugins of that shape):
// find the master (by name, or the default route's interface), bound the MTU
// by it, create the link directly in the container under a temporary name and
// rename it to CNI_IFNAME, then container_link.h's steps (IPAM, or layer 2
// only, or a chained prevResult's addresses; DEL, CHECK, GC and STATUS). A
// plugin supplies only what differs: how to create its link kind and what
// CHECK verifies about it.
//
//   PluginFuncs Funcs() {
//     return sublink::Funcs<Config>({.plugin = "ipvlan", .name_prefix = "iv",
//                                    .create = CreateLink, .check = CheckLink});
//   }
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/base/json.h"
#include "cni/base/status_macros.h"
#include "cni/net/link.h"
#include "cni/net/master_link.h"
#include "cni/net/netlink.h"
#include "cni/net/netns.h"
#include "cni/plugin/config_schema.h"
#include "cni/plugin/container_link.h"
#include "cni/plugin/plugin_keys.h"
#include "cni/protocol/invoke.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"

namespace cni::sublink {

// A plugin's key table: the keys every plugin on these steps reads, into
// Config fields of these names: "master" (master), "mtu" (mtu),
// "linkInContainer" (link_in_container), "dns" (dns); then `kind_keys`.
template <typename Config>
config::Schema<Config> Keys(std::initializer_list<config::Key<Config>> kind_keys) {
  config::Schema<Config> keys = {
      config::Parsed("master", &Config::master, ParseMasterKey),
      config::Parsed("mtu", &Config::mtu, ParseSublinkMtuKey),
      config::Bool("linkInContainer", &Config::link_in_container),
      DnsKey<Config>(),
  };
  keys.insert(keys.end(), kind_keys);
  return keys;
}

// The "mode" row of a link kind: the string through `parse` (absent or null
// reads as "", the kind's default); `parse`'s error (code 7) names the plugin.
template <typename Config, typename Mode>
config::Key<Config> ModeKey(Mode Config::*field, absl::StatusOr<Mode> (*parse)(absl::string_view)) {
  return config::Parsed("mode", field,
                        [parse](const config::Field& key, absl::string_view plugin) -> absl::StatusOr<Mode> {
                         CNI_ASSIGN_OR_RETURN(std::optional<std::string> mode, key.AsString());
                         CNI_ASSIGN_OR_RETURN(Mode parsed, parse(mode.value_or("")), plugin);
                         return parsed;
                       });
}

// Where the master is looked for.
struct Master {
  std::string name;           // "": the interface of the default route
  bool in_container = false;  // linkInContainer: the container's namespace, else the host's
};

// The master in the socket's namespace: by name, else the interface of the
// IPv4 (then IPv6) default route. Missing, or no default route: code 7
// naming the namespace searched (`master "eth9" not found in the host namespace`).
absl::StatusOr<net::LinkInfo> ResolveMaster(net::NetlinkSocket& sock, const Master& master,
                                            absl::string_view plugin);

// A link's MTU may not exceed its master's (0 takes the master's): else code 7
// `invalid MTU 1500, must be [0, master MTU(1400)]` (upstream's words).
absl::Status RequireMtuWithin(const net::LinkInfo& master, int mtu, absl::string_view plugin);

// What a plugin tells Add: its names, the master, the keys Add applies, and
// how to create its kind of link.
struct AddSpec {
  std::string plugin;          // "ipvlan": prefixes every message
  // The temporary name's prefix (<= 7 chars): the link is made under
  // net::TemporaryLinkName(name_prefix, CNI_CONTAINERID, CNI_IFNAME).
  std::string name_prefix;
  Master master;               // the configured master (name may be "")
  int mtu = 0;                 // checked against the master's; 0: the master's
  std::string ipam_type;       // "": layer 2 only (or the chained addresses below)
  std::optional<Dns> dns;      // replaces IPAM's dns when set
  // Chained use without IPAM (upstream's ipvlan): when ipam_type is empty and
  // this holds addresses, they (and its routes and dns) configure the link
  // instead of an IPAM call. Not owned.
  const Result* chained = nullptr;
  // Creates `link` (down, its kind's Create* of cni/net) through the socket
  // of the master's namespace: it has the temporary name, the master, the
  // MTU, and the container as its namespace (none when the master already
  // lives there). absl::AlreadyExists (a name clash) makes Add retry.
  std::function<absl::Status(net::NetlinkSocket& master_sock, const net::MasterLink& link)> create;
};

// The whole ADD: master, MTU bound, link (temporary name, then CNI_IFNAME),
// arp_notify and ndisc_notify, IPAM addresses and routes, result (interfaces[0]
// is the link).
// Any failure deletes the link and releases the IPAM lease.
absl::StatusOr<Result> Add(const CmdArgs& args, const AddSpec& spec);

// What a link kind tells Funcs: its names and its own two steps.
template <typename Config>
struct Kind {
  std::string plugin;       // "macvlan": message prefix and the link's IFLA_INFO_KIND
  std::string name_prefix;  // AddSpec::name_prefix ("mv")
  // Upstream's ipvlan: chained, prevResult's addresses configure a link
  // without IPAM, and a config without "master" takes prevResult's single
  // interface (code 7 when it lists none or several).
  bool chained = false;
  // Creates the link (AddSpec::create), as `config` says.
  std::function<absl::Status(net::NetlinkSocket& master_sock, const net::MasterLink& link, const Config& config)>
      create;
  // What CHECK verifies about the link beyond its kind (container_link::CheckSpec::check_link).
  std::function<absl::Status(net::NetlinkSocket& csock, const net::LinkInfo& link, const Config& config)>
      check;
};

// Fills the chained parts of `spec` from prevResult (see Kind::chained).
absl::Status ChainTo(const std::optional<Result>& prev, AddSpec& spec);

// The AddSpec of a config read by Keys (its fields master, link_in_container,
// mtu, ipam_type and dns), with `kind`'s names and creation; with
// kind.chained, `prev` (not owned) chains it (see Kind::chained).
template <typename Config>
absl::StatusOr<AddSpec> SpecFor(const Kind<Config>& kind, const Config& config,
                                const std::optional<Result>& prev) {
  AddSpec spec{
      .plugin = kind.plugin,
      .name_prefix = kind.name_prefix,
      .master = {.name = config.master, .in_container = config.link_in_container},
      .mtu = config.mtu,
      .ipam_type = config.ipam_type,
      .dns = config.dns,
  };
  spec.create = [create = kind.create, &config](net::NetlinkSocket& master_sock, const net::MasterLink& link) {
    return create(master_sock, link, config);
  };
  if (kind.chained) CNI_RETURN_IF_ERROR(ChainTo(prev, spec));
  return spec;
}

// The command table of a link kind: ADD (Add), CHECK (container_link::Check
// with kind.check), and container_link's DEL, GC and STATUS (DEL reads only
// the IPAM type).
template <typename Config>
PluginFuncs Funcs(Kind<Config> kind) {
  auto add = [kind](const CmdArgs& args, const Config& config) -> absl::StatusOr<Result> {
    std::optional<Result> prev;
    if (kind.chained) {
      CNI_ASSIGN_OR_RETURN(prev, ParsePrevResult(args.conf), kind.plugin, ": prevResult");
    }
    CNI_ASSIGN_OR_RETURN(AddSpec spec, SpecFor(kind, config, prev));
    return Add(args, spec);
  };
  auto check = [kind](const CmdArgs& args, const Config& config) {
    container_link::CheckSpec spec{.plugin = kind.plugin, .kind = kind.plugin, .ipam_type = config.ipam_type};
    spec.check_link = [&](net::NetlinkSocket& csock, const net::LinkInfo& link) {
      return kind.check(csock, link, config);
    };
    return container_link::Check(args, spec);
  };
  return container_link::Funcs<Config>(kind.plugin, kind.name_prefix, add, check);
}

// A Kind::check for a link kind with a mode: the link's (read by `mode_of`)
// must be the config's `field`; else container_link::Mismatch naming both
// (by `name`).
template <typename Config, typename Mode>
auto ModeCheck(absl::string_view plugin, Mode Config::*field,
               absl::StatusOr<Mode> (*mode_of)(net::NetlinkSocket&, const net::LinkInfo&), std::string (*name)(Mode)) {
  return [plugin = std::string(plugin), field, mode_of, name](
             net::NetlinkSocket& csock, const net::LinkInfo& link, const Config& config) -> absl::Status {
    CNI_ASSIGN_OR_RETURN(Mode mode, mode_of(csock, link));
    if (mode == config.*field) return absl::OkStatus();
    return container_link::Mismatch(plugin, link, "mode", name(mode), name(config.*field));
  };
}

}  // namespace cni::sublink

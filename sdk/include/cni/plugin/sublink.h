// The steps interface plugins share whose container link sits on a master
// interface (macvlan, ipvlan, vlan; upstream's "main" plugins of that shape):
// find the master (by name, or the default route's interface), bound the MTU
// by it, create the link directly in the container under a temporary name and
// rename it to CNI_IFNAME, then IPAM (or layer 2 only, or a chained
// prevResult's addresses), and the matching DEL, CHECK, GC and STATUS. A
// plugin supplies only what differs: how to create its link kind and what
// CHECK verifies about it.
//
//   absl::StatusOr<Result> Add(const CmdArgs& args, const Config& c) {
//     sublink::AddSpec spec{.plugin = "ipvlan", .name_prefix = kTempPrefix, ...};
//     spec.create = [&](net::NetlinkSocket& msock, const sublink::NewLink& l) {...};
//     return sublink::Add(args, spec);
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
#include "cni/net/netlink.h"
#include "cni/net/netns.h"
#include "cni/plugin/config_schema.h"
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
      config::Custom("dns", &Config::dns, Dns::FromConfig),
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

// What AddSpec::create is asked to make.
struct NewLink {
  std::string name;               // the temporary name
  const net::LinkInfo* master;    // in the master socket's namespace
  // Where the link must be born (IFLA_NET_NS_FD), nullptr when the master
  // already lives in the container.
  const net::Netns* netns;
};

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
  // Creates the link (down) through the socket of the master's namespace.
  // absl::AlreadyExists (a name clash) makes Add retry with another name.
  std::function<absl::Status(net::NetlinkSocket& master_sock, const NewLink& link)> create;
};

// The whole ADD: master, MTU bound, link (temporary name, then CNI_IFNAME),
// arp_notify and ndisc_notify, IPAM addresses and routes, result (interfaces[0]
// is the link).
// Any failure deletes the link and releases the IPAM lease.
absl::StatusOr<Result> Add(const CmdArgs& args, const AddSpec& spec);

// IPAM DEL (when ipam_type is set, always first, so the address never
// leaks), then the link in the container, under CNI_IFNAME or under the
// temporary name of `name_prefix` (an ADD killed before its rename); a
// namespace or link that is gone is success. Keeps going past a failure and
// reports them all.
absl::Status Del(const CmdArgs& args, absl::string_view ipam_type, absl::string_view plugin,
                 absl::string_view name_prefix);

// What a plugin tells Check: its names, IPAM, and its kind's own checks.
struct CheckSpec {
  std::string plugin;     // message prefix
  std::string kind;       // IFLA_INFO_KIND the link must have ("ipvlan")
  std::string ipam_type;  // delegated CHECK when set
  // What else the link must be (mode, VLAN ID...), through the container's socket.
  std::function<absl::Status(net::NetlinkSocket& csock, const net::LinkInfo& link)> check_link;
};

// CHECK (>= 0.4.0): prevResult is required (code 7 without); IPAM CHECK;
// prevResult's interface for CNI_IFNAME in CNI_NETNS exists, has `kind`, its
// MAC and what check_link verifies; its addresses and prevResult's routes
// are in the container. Failures carry code 999, as upstream's.
absl::Status Check(const CmdArgs& args, const CheckSpec& spec);

// CHECK's message when the link's `what` ("mode", "VLAN ID") is `have` and
// the config wants `want` (code 999, as upstream's CHECK failures):
// `ipvlan: container interface "eth0" has mode l2, the config wants l3`.
absl::Status Mismatch(absl::string_view plugin, const net::LinkInfo& link, absl::string_view what,
                      absl::string_view have, absl::string_view want);

// The command table of a plugin built on these steps: its own ADD and CHECK
// (calling Add and Check above; its AddSpec::name_prefix is `name_prefix`);
// STATUS from `Config::ipam_type`, DEL and GC from IpamTeardownConfig.
template <typename Config>
PluginFuncs Funcs(std::string plugin, std::string name_prefix,
                  std::function<absl::StatusOr<Result>(const CmdArgs&, const Config&)> add,
                  std::function<absl::Status(const CmdArgs&, const Config&)> check) {
  return TypedWithTeardown<Config, IpamTeardownConfig>(
      {.add = std::move(add), .check = std::move(check), .status = ForwardStatusToIpam<Config>},
      {.del = [plugin, name_prefix](const CmdArgs& args, const IpamTeardownConfig& c) {
         return Del(args, c.ipam_type, plugin, name_prefix);
       },
       .gc = ForwardGcToIpam<IpamTeardownConfig>});
}

}  // namespace cni::sublink

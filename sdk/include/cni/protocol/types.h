// The CNI data model: network configuration and results.
//
// Result is kept in the newest shape (1.1.0) in memory; version.h converts it to
// and from the JSON of every supported version.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/base/attachment.h"
#include "cni/base/ip.h"
#include "cni/base/json.h"

namespace cni {

// DNS settings, as in the spec's "dns" dictionary.
struct Dns {
  std::vector<std::string> nameservers;  // "nameservers": server addresses, in order
  std::string domain;                    // "domain": the local domain
  std::vector<std::string> search;       // "search": search domains, in order
  std::vector<std::string> options;      // "options": resolver options ("ndots:5", ...)

  // True when no field is set (then "dns" is left out of a result).
  bool empty() const {
    return nameservers.empty() && domain.empty() && search.empty() && options.empty();
  }
  // Parses a "dns" object (keys case-insensitive). Wrong types are code 6.
  static absl::StatusOr<Dns> FromJson(const Json& j);
  // The network configuration's "dns" value as upstream's plugins read it
  // (dnsConfSet in bridge and ptp): it counts only when it sets a field (a
  // list, even an empty one, or a non-empty domain), and then it replaces the
  // dns IPAM returned; else nullopt. Not an object, or a malformed field: code 6.
  static absl::StatusOr<std::optional<Dns>> FromConfig(const Json& value);
  Json ToJson() const;  // omits empty fields
  friend bool operator==(const Dns&, const Dns&) = default;
};

// One entry of a result's "interfaces" list.
struct Interface {
  std::string name;             // interface name (in its sandbox, or on the host)
  std::string mac;              // hardware address, "" when none
  std::optional<int> mtu;       // 1.1.0
  std::string sandbox;          // netns path; empty for host interfaces
  std::string socket_path;      // 1.1.0
  std::string pci_id;           // 1.1.0
  friend bool operator==(const Interface&, const Interface&) = default;
};

// One entry of a result's "ips" list.
struct IpConfig {
  std::optional<int> interface;  // index into Result::interfaces
  net::IpPrefix address;         // the interface address with its prefix length
  std::optional<net::IpAddress> gateway;  // the default gateway for this subnet, if any
  friend bool operator==(const IpConfig&, const IpConfig&) = default;
};

// One entry of a result's "routes" list.
struct Route {
  net::IpPrefix dst;                // destination (0.0.0.0/0 or ::/0 for a default route)
  std::optional<net::IpAddress> gw; // next hop; none: the runtime/plugin picks (e.g. the IP's gateway)
  std::optional<int> mtu;       // 1.1.0
  std::optional<int> advmss;    // 1.1.0
  std::optional<int> priority;  // 1.1.0
  std::optional<int> table;     // 1.1.0
  std::optional<int> scope;     // 1.1.0: 0 global, 253 link, 254 host
  friend bool operator==(const Route&, const Route&) = default;
};

// A plugin's result, in the 1.1.0 model. cni_version records the version it was
// parsed from or is meant to be printed at.
struct Result {
  std::string cni_version;            // see above; skel prints at the config's version
  std::vector<Interface> interfaces;  // "interfaces" (0.3.0+)
  std::vector<IpConfig> ips;          // "ips"; each may point into `interfaces`
  std::vector<Route> routes;          // "routes"
  Dns dns;                            // "dns" (omitted when empty)
  friend bool operator==(const Result&, const Result&) = default;
};

// The network configuration a plugin receives on stdin. The well-known keys are
// parsed; `raw` keeps the whole document as received so plugin-specific and
// unknown keys are preserved exactly (and passed on to delegates unchanged).
struct NetConf {
  std::string cni_version;                 // "" in the input means 0.1.0
  std::vector<std::string> cni_versions;   // 1.1.0 "cniVersions"
  std::string name;                        // "name": the network's name
  std::string type;                        // "type": the plugin's executable name
  std::map<std::string, bool> capabilities;  // "capabilities" (runtimeConfig keys it accepts)
  Json runtime_config = Json::object();    // "runtimeConfig"
  Json args = Json::object();              // "args"
  Json prev_result;                        // raw "prevResult"; null when absent
  Json ipam = Json::object();              // "ipam" as given
  std::string ipam_type;                   // "ipam.type", "" when absent
  std::optional<Dns> dns;                  // "dns", when it sets a field (Dns::FromConfig)
  std::vector<Attachment> valid_attachments;  // "cni.dev/valid-attachments" (GC)
  Json raw = Json::object();               // the whole document, as received

  // Parses a configuration. Malformed JSON or wrong types: code 6.
  // Missing cniVersion is allowed (means 0.1.0). Name and type are not required
  // here; skel validates what each command needs.
  static absl::StatusOr<NetConf> Parse(absl::string_view bytes);
};

}  // namespace cni

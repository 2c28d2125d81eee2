// etcd-ipam configuration: host-local's ranges, routes and requested IPs
// (cni/plugin/ipam_ranges.h), plus "dns", "exclude", "nodeName" and the "etcd"
// connection.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "cni/base/ip.h"
#include "cni/plugin/ipam_ranges.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"

namespace cni::etcdipam {

inline constexpr absl::string_view kDefaultPrefix = "/cni/ipam";
inline constexpr int kDefaultTimeoutSeconds = 5;

struct EtcdConfig {
  std::vector<std::string> endpoints;  // "http(s)://host:port", at least one
  std::string prefix = std::string(kDefaultPrefix);  // no trailing '/'
  std::string ca_file, cert_file, key_file;          // "" when absent
  int64_t timeout_seconds = kDefaultTimeoutSeconds;  // the whole command's budget
};

struct Config {
  std::string name;  // network name: part of every key
  std::string cni_version;
  std::vector<ipam::RangeSet> ranges;
  std::vector<Route> routes;
  Dns dns;
  std::vector<net::IpPrefix> exclude;  // never handed out
  EtcdConfig etcd;
  // Whose attachments these are: "nodeName", else the host name. GC only
  // judges records written under this name, so two nodes must never share
  // one (set it where host names may repeat, e.g. to Kubernetes' node name).
  std::string node_name;
  // CNI_ARGS IP, args.cni.ips, runtimeConfig.ips (host-local's order).
  std::vector<net::IpAddress> requested_ips;

  bool Excluded(const net::IpAddress& ip) const;

  // Parses and validates everything (no etcd contact).
  static absl::StatusOr<Config> Parse(const CmdArgs& args);
  // The configuration keys Parse reads: those of the ipam object by name,
  // the others by their path ("runtimeConfig.ips"). The README's key table
  // lists exactly these (tests/unit/readme_keys).
  static std::vector<std::string> KeyNames();
};

}  // namespace cni::etcdipam

// Calling a plugin binary (ours or upstream's) through the CNI protocol from a
// test, reading back what it answered, and building the network
// configurations the namespace tests feed it.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/base/json.h"
#include "cni/protocol/types.h"
#include "cni/testing/call.h"
#include "cni/testing/catch.h"
#include "support/run.h"

namespace cni::test {

// Where the upstream Go plugins are installed (the differential tests' other side).
inline constexpr const char* kUpstreamDir = "/usr/lib/cni";

// What CallPlugin sets besides the command, config, netns and container id.
struct CallOptions {
  std::string ifname = "eth0";   // CNI_IFNAME; "" leaves it unset (e.g. for GC)
  std::string dir;               // the plugin and CNI_PATH come from here; "" = our build
  std::string args;              // CNI_ARGS; "" leaves it unset
  std::vector<std::string> env;  // further "K=V" variables
};

// Options with CNI_IFNAME `ifname` (a container's second interface).
CallOptions OnInterface(const std::string& ifname);
// Runs plugin `name` with CNI_COMMAND=command, CNI_CONTAINERID=id and
// CNI_NETNS=netns (each left unset when empty) and `conf` on stdin.
RunResult CallPlugin(absl::string_view name, const std::string& command, const std::string& conf,
                     const std::string& netns, const std::string& id, const CallOptions& options = {});

// The kit's answer readers and Catch2 helpers (cni/testing/call.h, catch.h).
using cni::testing::Describe;
using cni::testing::ErrorCode;
using cni::testing::ErrorMessage;
using cni::testing::MustResult;
using cni::testing::MustSucceed;
using cni::testing::WithPrevResult;

// Makes a result comparable across implementations (the differential tests):
// the host veth's random name becomes "HOSTVETH", MACs are cleared, and
// sandbox paths become "SANDBOX".
void NormalizeForDiff(cni::Result& result, const std::string& host_veth);

// host-local's reservation files under `dir` (file names that parse as IP
// addresses); none when `dir` does not exist.
std::vector<std::string> Reservations(const TempDir& dir);

// {cniVersion, name, type} with `keys` merged in, then `prev_result` as
// prevResult unless it is null.
Json NetConf(const std::string& version, const std::string& name, const std::string& type,
             const Json& keys = Json::object(), const Json& prev_result = nullptr);

// static IPAM with one address (with `gateway` unless empty) and `routes`
// (the key left out when null).
Json StaticIpam(const std::string& address, const std::string& gateway = "",
                const Json& routes = Json::array());

// host-local IPAM storing in `dir`, one range set per subnet, and `routes`
// (the key left out when null).
Json HostLocalIpam(const TempDir& dir, const std::vector<std::string>& subnets,
                   const Json& routes = Json::array());

}  // namespace cni::test

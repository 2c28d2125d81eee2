#include "subnet_env.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "cni/base/error.h"
#include "cni/base/fs.h"
#include "cni/base/status_macros.h"

namespace cni::flannel {
namespace {

absl::Status Malformed(absl::string_view name, absl::string_view msg) {
  return Error(ErrorCode::kInvalidNetworkConfig, absl::StrCat("subnet file ", name, ": ", msg));
}

absl::StatusOr<net::IpPrefix> ParseCidr(absl::string_view name, absl::string_view key,
                                        absl::string_view text) {
  absl::StatusOr<net::IpPrefix> p = net::IpPrefix::Parse(text);
  if (!p.ok()) {
    return Malformed(name, absl::StrCat(key, ": \"", text, "\" is not a CIDR"));
  }
  return p->Network();
}

absl::StatusOr<std::vector<net::IpPrefix>> ParseCidrList(absl::string_view name, absl::string_view key,
                                                         absl::string_view text) {
  std::vector<net::IpPrefix> out;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    ASSIGN_OR_RETURN(net::IpPrefix p, ParseCidr(name, key, part));
    if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  }
  return out;
}

}  // namespace

absl::StatusOr<SubnetEnv> ParseSubnetEnv(absl::string_view text, absl::string_view name) {
  SubnetEnv env;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    absl::ConsumeSuffix(&line, "\r");  // as Go's bufio.ScanLines
    std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(line, absl::MaxSplits('=', 1));
    auto [key, value] = kv;
    bool known = key == "FLANNEL_NETWORK" || key == "FLANNEL_SUBNET" || key == "FLANNEL_IPV6_NETWORK" ||
                 key == "FLANNEL_IPV6_SUBNET" || key == "FLANNEL_MTU" || key == "FLANNEL_IPMASQ";
    if (!known) continue;
    if (line.size() == key.size()) return Malformed(name, absl::StrCat(key, " has no value (no '=')"));
    if (key == "FLANNEL_NETWORK") {
      ASSIGN_OR_RETURN(env.networks, ParseCidrList(name, key, value));
    } else if (key == "FLANNEL_SUBNET") {
      ASSIGN_OR_RETURN(env.subnet, ParseCidr(name, key, value));
    } else if (key == "FLANNEL_IPV6_NETWORK") {
      ASSIGN_OR_RETURN(env.ip6_networks, ParseCidrList(name, key, value));
    } else if (key == "FLANNEL_IPV6_SUBNET") {
      ASSIGN_OR_RETURN(env.ip6_subnet, ParseCidr(name, key, value));
    } else if (key == "FLANNEL_MTU") {
      uint32_t mtu = 0;
      // Digits only, as Go's strconv.ParseUint (no sign, no spaces).
      if (value.empty() || !std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
          !absl::SimpleAtoi(value, &mtu)) {
        return Malformed(name, absl::StrCat("FLANNEL_MTU: \"", value, "\" is not a number from 0 to 4294967295"));
      }
      env.mtu = mtu;
    } else {  // FLANNEL_IPMASQ
      if (value != "true" && value != "false") {
        return Malformed(name, absl::StrCat("FLANNEL_IPMASQ: \"", value, "\" is neither true nor false"));
      }
      env.ipmasq = value == "true";
    }
  }
  std::vector<absl::string_view> missing;
  if (env.networks.empty() && env.ip6_networks.empty()) {
    missing.insert(missing.end(), {"FLANNEL_NETWORK", "FLANNEL_IPV6_NETWORK"});
  }
  if (!env.subnet && !env.ip6_subnet) missing.insert(missing.end(), {"FLANNEL_SUBNET", "FLANNEL_IPV6_SUBNET"});
  if (!env.mtu) missing.push_back("FLANNEL_MTU");
  if (!env.ipmasq) missing.push_back("FLANNEL_IPMASQ");
  if (!missing.empty()) return Malformed(name, absl::StrCat("missing ", absl::StrJoin(missing, ", ")));
  return env;
}

absl::StatusOr<SubnetEnv> LoadSubnetEnv(const std::string& path) {
  ASSIGN_OR_RETURN(std::optional<std::string> text, ReadRegularFileIfExists(path));
  if (!text) {
    return Error(ErrorCode::kTryAgainLater,
                 absl::StrCat("flannel: subnet file ", path,
                              " does not exist (flanneld has not written it yet: check the flannel pod log "
                              "for this node)"));
  }
  return ParseSubnetEnv(*text, path);
}

}  // namespace cni::flannel

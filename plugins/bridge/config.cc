#include "config.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/json.h"
#include "cni/base/status_macros.h"
#include "cni/plugin/config_schema.h"
#include "cni/plugin/plugin_keys.h"
#include "cni/protocol/args.h"
#include "cni/protocol/skel.h"

namespace cni::bridge {
namespace {

constexpr int kMaxVlan = 4094;  // 4095 is reserved by 802.1Q

absl::Status Invalid(absl::string_view msg) { return InvalidConfig("bridge", msg); }

// `name` must be usable as an interface name; `what` says which one it is.
absl::Status RequireInterfaceName(absl::string_view what, absl::string_view name) {
  absl::Status st = ValidateInterfaceName(name);
  if (st.ok()) return st;
  return Invalid(absl::StrCat(what, " \"", name, "\": ", st.message()));
}

// "vlan": the access VLAN, 0 (none) when absent. Upstream's wording.
absl::StatusOr<int> ParseVlan(const config::Field& key) {
  ASSIGN_OR_RETURN(std::optional<int64_t> vlan, key.AsInt());
  if (!vlan) return 0;
  if (*vlan < 0 || *vlan > kMaxVlan) {
    return Invalid(absl::StrCat("invalid VLAN ID ", *vlan, " (must be between 0 and 4094)"));
  }
  return static_cast<int>(*vlan);
}

// One vlanTrunk entry, {"id": 5} and/or {"minID": 10, "maxID": 20}, into `ids`.
// Upstream's checks and wording.
absl::Status AddTrunkEntry(const Json& item, std::set<int>& ids) {
  if (!item.is_object()) return Error(ErrorCode::kDecodingFailure, "bridge: vlanTrunk entries must be objects");
  ASSIGN_OR_RETURN(std::optional<int64_t> min, GetInt(item, "minID"));
  ASSIGN_OR_RETURN(std::optional<int64_t> max, GetInt(item, "maxID"));
  ASSIGN_OR_RETURN(std::optional<int64_t> id, GetInt(item, "id"));
  if (min && max) {
    if (*min <= 0 || *min > kMaxVlan) return Invalid("incorrect trunk minID parameter");
    if (*max <= 0 || *max > kMaxVlan) return Invalid("incorrect trunk maxID parameter");
    if (*max < *min) return Invalid("minID is greater than maxID in trunk parameter");
    for (int64_t v = *min; v <= *max; ++v) ids.insert(static_cast<int>(v));
  } else if (max) {
    return Invalid("minID and maxID should be configured simultaneously, minID is missing");
  } else if (min) {
    return Invalid("minID and maxID should be configured simultaneously, maxID is missing");
  }
  if (id) {
    if (*id <= 0 || *id > kMaxVlan) return Invalid("incorrect trunk id parameter");
    ids.insert(static_cast<int>(*id));
  }
  return absl::OkStatus();
}

// vlanTrunk: [{"id": 5}, {"minID": 10, "maxID": 20}, ...] -> sorted unique IDs.
absl::StatusOr<std::vector<int>> ParseTrunk(const config::Field& key) {
  ASSIGN_OR_RETURN(std::optional<Json> list, key.AsArray());
  if (!list) return std::vector<int>{};
  std::set<int> ids;
  for (const Json& item : *list) RETURN_IF_ERROR(AddTrunkEntry(item, ids));
  return std::vector<int>(ids.begin(), ids.end());
}

// The keys of the network configuration, in upstream's names.
// The rules between keys (upstream's wording where it has one).
absl::Status ValidateCombination(const Config& c) {
  RETURN_IF_ERROR(RequireInterfaceName("bridge name", c.bridge));
  // The gateway of a VLAN network lives on "<bridge>.<vlan>": that name must
  // be a valid interface name too (upstream finds out only after IPAM).
  if (c.is_gateway && c.vlan != 0) {
    RETURN_IF_ERROR(RequireInterfaceName("VLAN gateway interface name", absl::StrCat(c.bridge, ".", c.vlan)));
  }
  if (c.hairpin && c.promisc) {
    return Invalid("cannot set hairpin mode and promiscuous mode at the same time");
  }
  if (c.disable_container_interface && !c.ipam_type.empty()) {
    return Invalid("cannot use IPAM when disableContainerInterface flag is set");
  }
  return absl::OkStatus();
}

// The container MAC from upstream's sources in its order: CNI_ARGS MAC, then
// args.cni.mac, then runtimeConfig.mac; the later wins, "" counts as unset.
absl::StatusOr<std::optional<net::MacAddress>> ParseMac(const CmdArgs& args) {
  std::optional<std::string> text;
  if (!args.args.empty()) {
    // IP is host-local's key, read by the IPAM plugin from the same CNI_ARGS.
    ASSIGN_OR_RETURN(CniArgs cni_args, CniArgs::Parse(args.args, {"MAC", "IP"}));
    if (std::optional<std::string> m = cni_args.Mac(); m && !m->empty()) text = *m;
  }
  ASSIGN_OR_RETURN(std::optional<std::string> from_args, GetString(ArgsCni(args.conf.args), "mac"));
  if (from_args && !from_args->empty()) text = *from_args;
  ASSIGN_OR_RETURN(std::optional<std::string> from_rc, GetString(args.conf.runtime_config, "mac"));
  if (from_rc && !from_rc->empty()) text = *from_rc;
  if (!text) return std::nullopt;
  ASSIGN_OR_RETURN(net::MacAddress mac, net::MacAddress::Parse(*text), "bridge: container MAC");
  return mac;
}

// The kernel refuses these for a veth (EADDRNOTAVAIL), but only when the veth
// is created: after the bridge, so they are judged before anything is made.
absl::Status RequireUnicastMac(const net::MacAddress& mac) {
  const std::string quoted = absl::StrCat("container MAC \"", mac.ToString(), "\"");
  if ((mac.bytes()[0] & 0x01) != 0) return Invalid(absl::StrCat(quoted, " is a multicast address"));
  if (mac == net::MacAddress()) return Invalid(absl::StrCat(quoted, " is the all-zero address"));
  return absl::OkStatus();
}

}  // namespace

const PluginKeys<Config> Config::kKeys = {
    .plugin = "bridge",
    .table = {
        config::String("bridge", &Config::bridge, /*empty_keeps_default=*/true),
        config::Bool("isGateway", &Config::is_gateway),
        config::Bool("isDefaultGateway", &Config::is_default_gateway),
        config::Bool("forceAddress", &Config::force_address),
        config::Bool("ipMasq", &Config::ip_masq),
        config::Bool("hairpinMode", &Config::hairpin),
        config::Bool("promiscMode", &Config::promisc),
        config::Bool("preserveDefaultVlan", &Config::preserve_default_vlan),
        config::Bool("macspoofchk", &Config::macspoofchk),
        config::Bool("enabledad", &Config::enable_dad),
        config::Bool("disableContainerInterface", &Config::disable_container_interface),
        config::Bool("portIsolation", &Config::port_isolation),
        config::Parsed("ipMasqBackend", &Config::ip_masq_backend, ParseIpMasqBackendKey),
        config::Parsed("mtu", &Config::mtu, ParseVethMtuKey),
        config::Parsed("vlan", &Config::vlan, ParseVlan),
        config::Parsed("vlanTrunk", &Config::trunk, ParseTrunk),
        DnsKey<Config>(),
    },
    .teardown = {"ipMasq", "macspoofchk"},
    .beside = {"args.cni.mac", "runtimeConfig.mac"},
};

absl::StatusOr<Config> Config::Parse(const CmdArgs& args) {
  ASSIGN_OR_RETURN(Config c, kKeys.Parse(args));
  if (c.is_default_gateway) c.is_gateway = true;
  RETURN_IF_ERROR(ValidateCombination(c));
  ASSIGN_OR_RETURN(c.mac, ParseMac(args));
  if (c.ip_masq) {
    ASSIGN_OR_RETURN(c.masq_backend, fw::SelectBackend(c.ip_masq_backend), "bridge: ipMasqBackend");
  }
  return c;
}

absl::Status RequireSupported(const Config& config) {
  // ipMasqBackend needs no look here: Parse took only "", "iptables" or
  // "nftables", and ADD selects the backend (once) when it masquerades.
  if (config.mac) RETURN_IF_ERROR(RequireUnicastMac(*config.mac));
  return absl::OkStatus();
}

}  // namespace cni::bridge

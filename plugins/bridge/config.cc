#include "config.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "cni/args.h"
#include "cni/error.h"
#include "cni/fw/backend.h"
#include "cni/json.h"
#include "cni/plugin_keys.h"
#include "cni/skel.h"

namespace cni::bridge {
namespace {

constexpr int kMaxVlan = 4094;  // 4095 is reserved by 802.1Q

absl::Status Invalid(absl::string_view msg) {
  return Error(ErrorCode::kInvalidNetworkConfig, absl::StrCat("bridge: ", msg));
}

// Reads an optional boolean into `out` (absent/null keeps the default).
absl::Status Bool(const Json& raw, absl::string_view key, bool& out) {
  absl::StatusOr<std::optional<bool>> v = GetBool(raw, key);
  if (!v.ok()) return v.status();
  if (*v) out = **v;
  return absl::OkStatus();
}

// vlanTrunk: [{"id": 5}, {"minID": 10, "maxID": 20}, ...] -> sorted unique IDs.
absl::StatusOr<std::vector<int>> ParseTrunk(const Json& raw) {
  absl::StatusOr<std::optional<Json>> list = GetArray(raw, "vlanTrunk");
  if (!list.ok()) return list.status();
  if (!*list) return std::vector<int>{};
  std::set<int> ids;
  for (const Json& item : **list) {
    if (!item.is_object()) return Error(ErrorCode::kDecodingFailure, "bridge: vlanTrunk entries must be objects");
    absl::StatusOr<std::optional<int64_t>> min = GetInt(item, "minID");
    absl::StatusOr<std::optional<int64_t>> max = GetInt(item, "maxID");
    absl::StatusOr<std::optional<int64_t>> id = GetInt(item, "id");
    for (const auto* v : {&min, &max, &id}) {
      if (!v->ok()) return v->status();
    }
    if (*min && *max) {
      if (**min <= 0 || **min > kMaxVlan) return Invalid("incorrect trunk minID parameter");
      if (**max <= 0 || **max > kMaxVlan) return Invalid("incorrect trunk maxID parameter");
      if (**max < **min) return Invalid("minID is greater than maxID in trunk parameter");
      for (int64_t v = **min; v <= **max; ++v) ids.insert(static_cast<int>(v));
    } else if (*max) {
      return Invalid("minID and maxID should be configured simultaneously, minID is missing");
    } else if (*min) {
      return Invalid("minID and maxID should be configured simultaneously, maxID is missing");
    }
    if (*id) {
      if (**id <= 0 || **id > kMaxVlan) return Invalid("incorrect trunk id parameter");
      ids.insert(static_cast<int>(**id));
    }
  }
  return std::vector<int>(ids.begin(), ids.end());
}

// The MAC sources in upstream's order; the later wins.
absl::Status ParseMac(const NetConf& conf, absl::string_view cni_args, Config& c) {
  std::optional<std::string> text;
  if (!cni_args.empty()) {
    // IP is host-local's key, read by the IPAM plugin from the same CNI_ARGS.
    absl::StatusOr<CniArgs> args = CniArgs::Parse(cni_args, {"MAC", "IP"});
    if (!args.ok()) return args.status();
    if (std::optional<std::string> m = args->Mac(); m && !m->empty()) text = *m;
  }
  absl::StatusOr<std::optional<std::string>> from_args = GetString(ArgsCni(conf.args), "mac");
  if (!from_args.ok()) return from_args.status();
  if (*from_args && !(*from_args)->empty()) text = **from_args;
  absl::StatusOr<std::optional<std::string>> from_rc = GetString(conf.runtime_config, "mac");
  if (!from_rc.ok()) return from_rc.status();
  if (*from_rc && !(*from_rc)->empty()) text = **from_rc;
  if (!text) return absl::OkStatus();
  absl::StatusOr<net::MacAddress> mac = net::MacAddress::Parse(*text);
  if (!mac.ok()) return Annotate(mac.status(), "bridge: container MAC");
  c.mac = *mac;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Config> ParseConfig(const NetConf& conf, absl::string_view cni_args) {
  Config c;
  const Json& raw = conf.raw;

  absl::StatusOr<std::optional<std::string>> name = GetString(raw, "bridge");
  if (!name.ok()) return name.status();
  if (*name && !(*name)->empty()) c.bridge = **name;
  if (absl::Status st = ValidateInterfaceName(c.bridge); !st.ok()) {
    return Invalid(absl::StrCat("bridge name \"", c.bridge, "\": ", st.message()));
  }

  struct {
    absl::string_view key;
    bool* out;
  } const bools[] = {
      {"isGateway", &c.is_gateway},
      {"isDefaultGateway", &c.is_default_gateway},
      {"forceAddress", &c.force_address},
      {"ipMasq", &c.ip_masq},
      {"hairpinMode", &c.hairpin},
      {"promiscMode", &c.promisc},
      {"preserveDefaultVlan", &c.preserve_default_vlan},
      {"macspoofchk", &c.macspoofchk},
      {"enabledad", &c.enable_dad},
      {"disableContainerInterface", &c.disable_container_interface},
      {"portIsolation", &c.port_isolation},
  };
  for (const auto& b : bools) {
    if (absl::Status st = Bool(raw, b.key, *b.out); !st.ok()) return st;
  }
  if (c.is_default_gateway) c.is_gateway = true;

  absl::StatusOr<std::string> backend = ParseIpMasqBackendKey(raw, "bridge");
  if (!backend.ok()) return backend.status();
  c.ip_masq_backend = *std::move(backend);

  absl::StatusOr<int> mtu = ParseVethMtuKey(raw, "bridge");
  if (!mtu.ok()) return mtu.status();
  c.mtu = *mtu;

  absl::StatusOr<std::optional<int64_t>> vlan = GetInt(raw, "vlan");
  if (!vlan.ok()) return vlan.status();
  if (*vlan) {
    if (**vlan < 0 || **vlan > kMaxVlan) {
      return Invalid(absl::StrCat("invalid VLAN ID ", **vlan, " (must be between 0 and 4094)"));
    }
    c.vlan = static_cast<int>(**vlan);
  }
  absl::StatusOr<std::vector<int>> trunk = ParseTrunk(raw);
  if (!trunk.ok()) return trunk.status();
  c.trunk = *std::move(trunk);
  // A port is either an access port (untagged) or a trunk (tagged only).
  if (c.vlan != 0 && !c.trunk.empty()) return Invalid("cannot set vlan and vlanTrunk at the same time");

  // The gateway of a VLAN network lives on "<bridge>.<vlan>": that name must
  // be a valid interface name too (upstream finds out only after IPAM).
  if (c.is_gateway && c.vlan != 0) {
    std::string gw_name = absl::StrCat(c.bridge, ".", c.vlan);
    if (absl::Status st = ValidateInterfaceName(gw_name); !st.ok()) {
      return Invalid(absl::StrCat("VLAN gateway interface name \"", gw_name, "\": ", st.message()));
    }
  }

  if (c.hairpin && c.promisc) {
    return Invalid("cannot set hairpin mode and promiscuous mode at the same time");
  }

  c.ipam_type = conf.ipam_type;
  if (c.disable_container_interface && !c.ipam_type.empty()) {
    return Invalid("cannot use IPAM when disableContainerInterface flag is set");
  }

  if (absl::Status st = ParseMac(conf, cni_args, c); !st.ok()) return st;

  absl::StatusOr<std::optional<Dns>> dns = ParseDnsKey(raw, "bridge");
  if (!dns.ok()) return dns.status();
  c.dns = *std::move(dns);
  return c;
}

absl::Status RequireSupported(const Config& config) {
  if (!config.ip_masq) return absl::OkStatus();
  return Annotate(fw::SelectBackend(config.ip_masq_backend).status(), "bridge: ipMasqBackend");
}

}  // namespace cni::bridge

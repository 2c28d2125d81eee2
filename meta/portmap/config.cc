#include "config.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "cni/error.h"
#include "cni/fw/protocols.h"
#include "cni/fw/validate.h"
#include "cni/json.h"
#include "cni/skel.h"

namespace cni::portmap {
namespace {

absl::Status Invalid(absl::string_view msg) {
  return Error(ErrorCode::kInvalidNetworkConfig, absl::StrCat("portmap: ", msg));
}
absl::Status Decoding(absl::string_view msg) {
  return Error(ErrorCode::kDecodingFailure, absl::StrCat("portmap: ", msg));
}

absl::StatusOr<PortMapping> ParseMapping(const Json& j, size_t i) {
  std::string where = absl::StrCat("portMappings[", i, "]");
  if (!j.is_object()) return Decoding(absl::StrCat(where, " is not an object"));
  PortMapping m;
  for (auto [key, field] : {std::pair{"hostPort", &m.host_port}, std::pair{"containerPort", &m.container_port}}) {
    absl::StatusOr<std::optional<int64_t>> v = GetInt(j, key);
    if (!v.ok()) return Annotate(v.status(), where);
    int64_t n = v->value_or(0);
    if (n <= 0 || n > 65535) return Invalid(absl::StrCat(where, ": invalid ", key, " ", n, " (want 1-65535)"));
    *field = static_cast<int>(n);
  }
  absl::StatusOr<std::optional<std::string>> proto = GetString(j, "protocol");
  if (!proto.ok()) return Annotate(proto.status(), where);
  // Upstream passes any string to iptables; we accept what the kernel maps.
  absl::StatusOr<fw::L4Protocol> protocol = fw::ParseL4Protocol(absl::AsciiStrToLower(proto->value_or("")));
  if (!protocol.ok()) {
    return Invalid(absl::StrCat(where, ": unknown protocol \"", proto->value_or(""), "\" (want tcp, udp or sctp)"));
  }
  m.protocol = *protocol;
  absl::StatusOr<std::optional<std::string>> host_ip = GetString(j, "hostIP");
  if (!host_ip.ok()) return Annotate(host_ip.status(), where);
  if (host_ip->has_value() && !(*host_ip)->empty()) {
    absl::StatusOr<net::IpAddress> ip = net::IpAddress::Parse(**host_ip);
    if (!ip.ok()) return Invalid(absl::StrCat(where, ": hostIP \"", **host_ip, "\" is not an IP address"));
    m.host_ip = *ip;
  }
  return m;
}

absl::Status ParseConditions(const Json& raw, const char* key, std::vector<std::string>* out) {
  absl::StatusOr<std::optional<std::vector<std::string>>> v = GetStringList(raw, key);
  if (!v.ok()) return v.status();
  if (!v->has_value()) return absl::OkStatus();
  *out = **v;
  return fw::ValidateRuleTexts(absl::StrCat("portmap: ", key), *out);
}

// Upstream's choice of container addresses from prevResult.
void PickAddresses(const Result& r, absl::string_view ifname, Config* c) {
  for (const IpConfig& ip : r.ips) {
    std::optional<net::IpPrefix>& slot = ip.address.is_v4() ? c->cont_v4 : c->cont_v6;
    if (slot.has_value()) continue;
    if (ip.interface.has_value()) {
      int i = *ip.interface;
      if (i >= 0 && i < static_cast<int>(r.interfaces.size()) &&
          (r.interfaces[i].name != ifname || r.interfaces[i].sandbox.empty())) {
        continue;  // a host-side interface
      }
    }
    slot = ip.address;
  }
}

}  // namespace

absl::StatusOr<Config> ParseConfig(const NetConf& conf, absl::string_view ifname) {
  Config c;
  c.name = conf.name;
  const Json& raw = conf.raw;

  absl::StatusOr<std::optional<std::string>> backend = GetString(raw, "backend");
  if (!backend.ok()) return backend.status();
  absl::StatusOr<fw::Backend> b = fw::SelectBackend(backend->value_or(""));
  if (!b.ok()) return Annotate(b.status(), "portmap");
  c.backend = *b;

  absl::StatusOr<std::optional<bool>> snat = GetBool(raw, "snat");
  if (!snat.ok()) return snat.status();
  c.snat = snat->value_or(true);
  absl::StatusOr<std::optional<bool>> masq_all = GetBool(raw, "masqAll");
  if (!masq_all.ok()) return masq_all.status();
  c.masq_all = masq_all->value_or(false);

  absl::StatusOr<std::optional<int64_t>> bit = GetInt(raw, "markMasqBit");
  if (!bit.ok()) return bit.status();
  absl::StatusOr<std::optional<std::string>> ext = GetString(raw, "externalSetMarkChain");
  if (!ext.ok()) return ext.status();
  if (bit->has_value() && ext->has_value()) return Invalid("cannot specify externalSetMarkChain and markMasqBit");
  if (bit->has_value() && (**bit < 0 || **bit > 31)) return Invalid("markMasqBit must be between 0 and 31");
  c.mark_masq_bit = static_cast<int>(bit->value_or(13));
  if (ext->has_value()) {
    if (absl::Status st = fw::ValidateChainName("portmap: externalSetMarkChain", **ext); !st.ok()) return st;
    c.external_set_mark_chain = **ext;
  }

  if (absl::Status st = ParseConditions(raw, "conditionsV4", &c.conditions_v4); !st.ok()) return st;
  if (absl::Status st = ParseConditions(raw, "conditionsV6", &c.conditions_v6); !st.ok()) return st;

  const Json* maps = FindKey(conf.runtime_config, "portMappings");
  if (maps != nullptr && !maps->is_null()) {
    if (!maps->is_array()) return Decoding("runtimeConfig.portMappings is not a list");
    for (size_t i = 0; i < maps->size(); ++i) {
      absl::StatusOr<PortMapping> m = ParseMapping((*maps)[i], i);
      if (!m.ok()) return m.status();
      c.mappings.push_back(*m);
    }
  }

  absl::StatusOr<std::optional<Result>> prev = ParsePrevResult(conf);
  if (!prev.ok()) return prev.status();
  c.prev_result = *prev;
  if (c.prev_result.has_value()) PickAddresses(*c.prev_result, ifname, &c);
  return c;
}

std::vector<PortMapping> MappingsFor(const Config& c, const net::IpPrefix& container) {
  std::vector<PortMapping> out;
  for (const PortMapping& m : c.mappings) {
    if (m.host_ip.has_value() && m.host_ip->is_v4() != container.is_v4()) continue;
    out.push_back(m);
  }
  return out;
}

}  // namespace cni::portmap

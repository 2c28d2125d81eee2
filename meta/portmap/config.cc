#include "config.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/json.h"
#include "cni/base/status_macros.h"
#include "cni/fw/protocols.h"
#include "cni/fw/validate.h"
#include "cni/plugin/config_schema.h"
#include "cni/protocol/skel.h"

namespace cni::portmap {
namespace {

absl::Status Invalid(absl::string_view msg) { return InvalidConfig("portmap", msg); }
absl::Status Decoding(absl::string_view msg) {
  return Error(ErrorCode::kDecodingFailure, absl::StrCat("portmap: ", msg));
}

// The plugin's own keys; markMasqBit, externalSetMarkChain and backend
// follow in code (their messages are older than the table's wording).
const config::Schema<Config> kKeys = {
    config::Bool("snat", &Config::snat),
    config::Bool("masqAll", &Config::masq_all),
    config::StringList("conditionsV4", &Config::conditions_v4),
    config::StringList("conditionsV6", &Config::conditions_v6),
};

absl::StatusOr<PortMapping> ParseMapping(const Json& j, size_t i) {
  std::string where = absl::StrCat("portMappings[", i, "]");
  if (!j.is_object()) return Decoding(absl::StrCat(where, " is not an object"));
  PortMapping m;
  for (auto [key, field] : {std::pair{"hostPort", &m.host_port}, std::pair{"containerPort", &m.container_port}}) {
    ASSIGN_OR_RETURN(std::optional<int64_t> v, GetInt(j, key), where);
    int64_t n = v.value_or(0);
    if (n <= 0 || n > 65535) return Invalid(absl::StrCat(where, ": invalid ", key, " ", n, " (want 1-65535)"));
    *field = static_cast<int>(n);
  }
  ASSIGN_OR_RETURN(std::optional<std::string> proto, GetString(j, "protocol"), where);
  // Upstream passes any string to iptables; we accept what the kernel maps.
  absl::StatusOr<fw::L4Protocol> protocol = fw::ParseL4Protocol(absl::AsciiStrToLower(proto.value_or("")));
  if (!protocol.ok()) {
    return Invalid(absl::StrCat(where, ": unknown protocol \"", proto.value_or(""), "\" (want tcp, udp or sctp)"));
  }
  m.protocol = *protocol;
  ASSIGN_OR_RETURN(std::optional<std::string> host_ip, GetString(j, "hostIP"), where);
  if (host_ip.has_value() && !host_ip->empty()) {
    absl::StatusOr<net::IpAddress> ip = net::IpAddress::Parse(*host_ip);
    if (!ip.ok()) return Invalid(absl::StrCat(where, ": hostIP \"", *host_ip, "\" is not an IP address"));
    m.host_ip = *ip;
  }
  return m;
}

// runtimeConfig.portMappings: absent or null is none; anything but a list
// is code 6.
absl::StatusOr<const Json*> MappingList(const NetConf& conf) {
  const Json* maps = FindKey(conf.runtime_config, "portMappings");
  if (maps == nullptr || maps->is_null()) return nullptr;
  if (!maps->is_array()) return Decoding("runtimeConfig.portMappings is not a list");
  return maps;
}

absl::StatusOr<std::vector<PortMapping>> ParseMappings(const NetConf& conf) {
  ASSIGN_OR_RETURN(const Json* maps, MappingList(conf));
  std::vector<PortMapping> out;
  if (maps == nullptr) return out;
  for (size_t i = 0; i < maps->size(); ++i) {
    ASSIGN_OR_RETURN(PortMapping m, ParseMapping((*maps)[i], i));
    out.push_back(m);
  }
  return out;
}

// markMasqBit (0-31, default 13) or externalSetMarkChain, not both.
absl::Status ParseMark(const Json& raw, Config& c) {
  ASSIGN_OR_RETURN(std::optional<int64_t> bit, GetInt(raw, "markMasqBit"));
  ASSIGN_OR_RETURN(std::optional<std::string> ext, GetString(raw, "externalSetMarkChain"));
  if (bit.has_value() && ext.has_value()) return Invalid("cannot specify externalSetMarkChain and markMasqBit");
  if (bit.has_value() && (*bit < 0 || *bit > 31)) return Invalid("markMasqBit must be between 0 and 31");
  c.mark_masq_bit = static_cast<int>(bit.value_or(13));
  if (ext.has_value()) {
    RETURN_IF_ERROR(fw::ValidateChainName("portmap: externalSetMarkChain", *ext));
    c.external_set_mark_chain = *ext;
  }
  return absl::OkStatus();
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

absl::StatusOr<Config> ParseAll(const CmdArgs& args) {
  const NetConf& conf = args.conf;
  Config c;
  c.name = conf.name;
  ASSIGN_OR_RETURN(std::optional<std::string> backend, GetString(conf.raw, "backend"));
  ASSIGN_OR_RETURN(c.backend, fw::SelectBackend(backend.value_or("")), "portmap");
  RETURN_IF_ERROR(config::ParseKeys(conf.raw, kKeys, "portmap", c));
  RETURN_IF_ERROR(ParseMark(conf.raw, c));
  RETURN_IF_ERROR(fw::ValidateRuleTexts("portmap: conditionsV4", c.conditions_v4));
  RETURN_IF_ERROR(fw::ValidateRuleTexts("portmap: conditionsV6", c.conditions_v6));
  ASSIGN_OR_RETURN(c.mappings, ParseMappings(conf));
  ASSIGN_OR_RETURN(c.prev_result, ParsePrevResult(conf));
  if (c.prev_result.has_value()) PickAddresses(*c.prev_result, args.ifname, &c);
  return c;
}

}  // namespace

absl::StatusOr<Config> Config::Parse(const CmdArgs& args) {
  ASSIGN_OR_RETURN(Config c, ParseAll(args), "failed to parse config");
  return c;
}

absl::StatusOr<TeardownConfig> TeardownConfig::Parse(const CmdArgs& args) {
  const NetConf& conf = args.conf;
  TeardownConfig t;
  t.name = conf.name;
  ASSIGN_OR_RETURN(std::optional<std::string> backend, GetString(conf.raw, "backend"), "failed to parse config");
  t.nftables_configured = backend.value_or("") == "nftables";
  // Leniently: a prevResult that does not parse only costs the narrowing.
  if (absl::StatusOr<std::optional<Result>> prev = ParsePrevResult(conf); prev.ok() && prev->has_value()) {
    Config picked;
    PickAddresses(**prev, args.ifname, &picked);
    if (picked.cont_v4) t.addresses.push_back(picked.cont_v4->addr());
    if (picked.cont_v6) t.addresses.push_back(picked.cont_v6->addr());
  }
  ASSIGN_OR_RETURN(const Json* maps, MappingList(conf), "failed to parse config");
  if (maps == nullptr) return t;
  for (size_t i = 0; i < maps->size(); ++i) {
    const Json& m = (*maps)[i];
    std::string where = absl::StrCat("portMappings[", i, "]");
    if (!m.is_object()) return Annotate(Decoding(absl::StrCat(where, " is not an object")), "failed to parse config");
    ASSIGN_OR_RETURN(std::optional<int64_t> port, GetInt(m, "hostPort"), "failed to parse config: ", where);
    ASSIGN_OR_RETURN(std::optional<std::string> proto, GetString(m, "protocol"), "failed to parse config: ", where);
    t.has_mappings = true;
    absl::StatusOr<fw::L4Protocol> l4 = fw::ParseL4Protocol(absl::AsciiStrToLower(proto.value_or("")));
    if (l4.ok() && *l4 == fw::L4Protocol::kUdp && port.value_or(0) > 0 && *port <= 65535) {
      t.udp_host_ports.push_back(static_cast<int>(*port));
    }
  }
  return t;
}

TeardownConfig TeardownConfig::Of(const Config& c) {
  TeardownConfig t{.name = c.name,
                   .has_mappings = !c.mappings.empty(),
                   .nftables_configured = c.backend == fw::Backend::kNftables};
  for (const PortMapping& m : c.mappings) {
    if (m.protocol == fw::L4Protocol::kUdp) t.udp_host_ports.push_back(m.host_port);
  }
  if (c.cont_v4) t.addresses.push_back(c.cont_v4->addr());
  if (c.cont_v6) t.addresses.push_back(c.cont_v6->addr());
  return t;
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

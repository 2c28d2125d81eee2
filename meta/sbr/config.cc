#include "config.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "cni/plugin/config_schema.h"

namespace cni::sbr {
namespace {

// The keys as written.
struct Keys {
  std::optional<int64_t> table;
  std::vector<std::string> gateways;
  bool add_source_hints = false;
};

const config::Schema<Keys> kKeys = {
    config::Integer("table", &Keys::table, {1, UINT32_MAX}),
    config::StringList("gateways", &Keys::gateways),
    config::Bool("addSourceHints", &Keys::add_source_hints),
};

// The keys DEL reads (see TeardownConfig).
const config::Schema<Keys> kTeardownKeys = {
    config::Integer("table", &Keys::table, {1, UINT32_MAX}),
};

absl::Status Invalid(absl::string_view msg) { return InvalidConfig("sbr", msg); }

}  // namespace

absl::StatusOr<Config> Config::Parse(const CmdArgs& args) {
  Keys keys;
  RETURN_IF_ERROR(config::ParseKeys(args.conf.raw, kKeys, "sbr", keys));
  Config c;
  if (keys.table) c.table = static_cast<uint32_t>(*keys.table);
  c.add_source_hints = keys.add_source_hints;
  if (keys.gateways.size() > 2) {
    return Invalid("\"gateways\" cannot contain more than 2 entries (one IPv4, one IPv6)");
  }
  for (const std::string& text : keys.gateways) {
    absl::StatusOr<net::IpAddress> ip = net::IpAddress::Parse(text);
    if (!ip.ok()) return Invalid(absl::StrCat("invalid static gateway IP address \"", text, "\""));
    std::optional<net::IpAddress>& slot = ip->is_v4() ? c.gateway_v4 : c.gateway_v6;
    if (slot) {
      return Invalid(absl::StrCat("\"gateways\" contains two IPv", ip->is_v4() ? "4" : "6", " addresses: ",
                                  slot->ToString(), " and ", text));
    }
    slot = *ip;
  }
  c.prev_result = ParsePrevResult(args.conf);
  return c;
}

absl::StatusOr<TeardownConfig> TeardownConfig::Parse(const CmdArgs& args) {
  Keys keys;
  RETURN_IF_ERROR(config::ParseKeys(args.conf.raw, kTeardownKeys, "sbr", keys));
  TeardownConfig c;
  if (keys.table) c.table = static_cast<uint32_t>(*keys.table);
  c.prev_result = ParsePrevResult(args.conf);
  return c;
}

std::vector<IpConfig> AddressesOf(const Result& prev, absl::string_view ifname) {
  std::vector<IpConfig> out;
  for (const IpConfig& ip : prev.ips) {
    if (ip.interface && *ip.interface >= 0 && static_cast<size_t>(*ip.interface) < prev.interfaces.size() &&
        prev.interfaces[static_cast<size_t>(*ip.interface)].name != ifname) {
      continue;
    }
    out.push_back(ip);
  }
  return out;
}

std::vector<std::string> Config::KeyNames() { return config::KeyNames(kKeys); }

}  // namespace cni::sbr

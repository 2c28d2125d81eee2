#include "cni/protocol/version.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"

namespace cni {
namespace {

// The three result shapes of CNI history (upstream pkg/types/{020,040,100}).
enum class Shape {
  kV02,  // 0.1.0, 0.2.0: "ip4"/"ip6" objects, routes nested under them
  kV04,  // 0.3.0, 0.3.1, 0.4.0: "interfaces"/"ips"/"routes", per-IP "version"
  kV1,   // 1.0.0, 1.1.0: as 0.4.0 without "version"; 1.1.0 adds fields
};

// A version string naming no version means 0.1.0 (spec; upstream DecodeVersion).
absl::string_view Normalize(absl::string_view version) {
  return version.empty() ? absl::string_view("0.1.0") : version;
}

bool IsSupported(absl::string_view version) {
  const std::vector<std::string>& all = AllVersions();
  return std::find(all.begin(), all.end(), version) != all.end();
}

// Only called with supported versions.
Shape ShapeOf(absl::string_view version) {
  if (version == "0.1.0" || version == "0.2.0") return Shape::kV02;
  if (version == "1.0.0" || version == "1.1.0") return Shape::kV1;
  return Shape::kV04;
}

// True when `version` carries the 1.1.0 result fields (interface mtu,
// socketPath, pciID; route mtu, advmss, priority, table, scope). Below 1.1.0
// they are dropped, as SPEC-1.1 says of down-conversion. (Upstream's Go types
// are laxer: their shared Route keeps the route fields at 0.4.0, and their
// 1.0.0 Interface keeps mtu/socketPath/pciID; a 1.0.0 consumer ignores them.)
bool Has11Fields(absl::string_view version) { return VersionAtLeast(version, "1.1.0"); }

// ---------------------------------------------------------------------------
// Decoding. Every failure is code 6 (decoding failure) naming the key.

absl::Status Malformed(absl::string_view key, absl::string_view why) {
  return Error(ErrorCode::kDecodingFailure, absl::StrCat("cannot decode \"", key, "\": ", why));
}

// An int-sized integer (interface index, MTU, route metrics).
absl::StatusOr<std::optional<int>> GetSmallInt(const Json& obj, absl::string_view key) {
  ASSIGN_OR_RETURN(std::optional<int64_t> v, GetInt(obj, key));
  if (!v.has_value()) return std::nullopt;
  int64_t n = *v;
  if (n < std::numeric_limits<int>::min() || n > std::numeric_limits<int>::max()) {
    return Malformed(key, absl::StrCat(n, " is out of range"));
  }
  return static_cast<int>(n);
}

// A CIDR string ("10.1.2.3/24"); the address keeps its host bits as upstream's
// types.ParseCIDR does. Required: a result entry without it is meaningless.
absl::StatusOr<net::IpPrefix> GetPrefix(const Json& obj, absl::string_view key) {
  ASSIGN_OR_RETURN(std::optional<std::string> text, GetString(obj, key));
  if (!text.has_value()) return Malformed(key, "missing");
  absl::StatusOr<net::IpPrefix> prefix = net::IpPrefix::Parse(*text);
  if (!prefix.ok()) return Malformed(key, prefix.status().message());
  return *prefix;
}

absl::StatusOr<std::optional<net::IpAddress>> GetAddress(const Json& obj, absl::string_view key) {
  ASSIGN_OR_RETURN(std::optional<std::string> text, GetString(obj, key));
  // Go decodes "" into a nil net.IP, which then counts as absent.
  if (!text.has_value() || text->empty()) return std::nullopt;
  absl::StatusOr<net::IpAddress> ip = net::IpAddress::Parse(*text);
  if (!ip.ok()) return Malformed(key, ip.status().message());
  return *ip;
}

absl::Status GetStringInto(const Json& obj, absl::string_view key, std::string& out) {
  ASSIGN_OR_RETURN(std::optional<std::string> v, GetString(obj, key));
  if (v.has_value()) out = std::move(*v);
  return absl::OkStatus();
}

absl::Status GetIntInto(const Json& obj, absl::string_view key, std::optional<int>& out) {
  ASSIGN_OR_RETURN(out, GetSmallInt(obj, key));
  return absl::OkStatus();
}

absl::Status RequireObject(const Json& j) {
  if (j.is_object()) return absl::OkStatus();
  return Error(ErrorCode::kDecodingFailure, "expected an object");
}

absl::StatusOr<Interface> ParseInterface(const Json& j) {
  Interface intf;
  // 1.1 fields are read whatever the version: reading is lossless and
  // printing drops them where the version has no room for them.
  for (absl::Status s : {RequireObject(j), GetStringInto(j, "name", intf.name),
                         GetStringInto(j, "mac", intf.mac), GetIntInto(j, "mtu", intf.mtu),
                         GetStringInto(j, "sandbox", intf.sandbox),
                         GetStringInto(j, "socketPath", intf.socket_path),
                         GetStringInto(j, "pciID", intf.pci_id)}) {
    RETURN_IF_ERROR(s);
  }
  return intf;
}

absl::StatusOr<IpConfig> ParseIpConfig(const Json& j) {
  RETURN_IF_ERROR(RequireObject(j));
  IpConfig ip;
  // 0.3.x/0.4.0 "version" ("4"/"6") is redundant with the address; it is
  // type-checked and otherwise re-derived from the address when printing.
  RETURN_IF_ERROR(GetString(j, "version"));
  RETURN_IF_ERROR(GetIntInto(j, "interface", ip.interface));
  ASSIGN_OR_RETURN(ip.address, GetPrefix(j, "address"));
  ASSIGN_OR_RETURN(ip.gateway, GetAddress(j, "gateway"));
  return ip;
}

absl::StatusOr<Route> ParseRoute(const Json& j) {
  RETURN_IF_ERROR(RequireObject(j));
  Route route;
  ASSIGN_OR_RETURN(route.dst, GetPrefix(j, "dst"));
  ASSIGN_OR_RETURN(route.gw, GetAddress(j, "gw"));
  for (absl::Status s :
       {GetIntInto(j, "mtu", route.mtu), GetIntInto(j, "advmss", route.advmss),
        GetIntInto(j, "priority", route.priority), GetIntInto(j, "table", route.table),
        GetIntInto(j, "scope", route.scope)}) {
    RETURN_IF_ERROR(s);
  }
  return route;
}

// Parses the list at `key` with `parse_one`, appending to `out`. Errors name
// the entry, e.g. `ips[1]: cannot decode "address": ...`.
template <typename T, typename Fn>
absl::Status ParseList(const Json& obj, absl::string_view key, Fn parse_one, std::vector<T>& out) {
  ASSIGN_OR_RETURN(std::optional<Json> list, GetArray(obj, key));
  if (!list.has_value()) return absl::OkStatus();
  for (size_t i = 0; i < list->size(); ++i) {
    ASSIGN_OR_RETURN(T item, parse_one((*list)[i]), key, "[", i, "]");
    out.push_back(std::move(item));
  }
  return absl::OkStatus();
}

absl::Status ParseDnsInto(const Json& doc, Dns& out) {
  ASSIGN_OR_RETURN(std::optional<Json> dns, GetObject(doc, "dns"));
  if (!dns.has_value()) return absl::OkStatus();
  ASSIGN_OR_RETURN(out, Dns::FromJson(*dns), "dns");
  return absl::OkStatus();
}

// 0.3.0 and later: the lists are at the top level.
absl::Status ParseListShape(const Json& doc, Result& result) {
  RETURN_IF_ERROR(ParseList(doc, "interfaces", ParseInterface, result.interfaces));
  RETURN_IF_ERROR(ParseList(doc, "ips", ParseIpConfig, result.ips));
  return ParseList(doc, "routes", ParseRoute, result.routes);
}

// One of 0.2.0's "ip4"/"ip6": {"ip", "gateway", "routes"}. Like upstream's
// up-conversion (040 convertFrom02x) it becomes one IP without an interface,
// and its routes join the result's route list.
absl::Status ParseLegacyIp(const Json& doc, absl::string_view key, Result& result) {
  ASSIGN_OR_RETURN(std::optional<Json> obj, GetObject(doc, key));
  if (!obj.has_value()) return absl::OkStatus();
  const Json& j = *obj;
  IpConfig ip;
  ASSIGN_OR_RETURN(ip.address, GetPrefix(j, "ip"), key);
  ASSIGN_OR_RETURN(ip.gateway, GetAddress(j, "gateway"), key);
  result.ips.push_back(ip);
  RETURN_IF_ERROR(ParseList(j, "routes", ParseRoute, result.routes), key);
  return absl::OkStatus();
}

absl::Status ParseLegacyShape(const Json& doc, Result& result) {
  RETURN_IF_ERROR(ParseLegacyIp(doc, "ip4", result));
  return ParseLegacyIp(doc, "ip6", result);
}

// ---------------------------------------------------------------------------
// Encoding, following upstream's json tags: "omitempty" strings, ints and
// lists are left out when empty or zero; pointer fields (ip "interface",
// route "table"/"scope") are printed whenever set.

Json InterfaceToJson(const Interface& intf, bool with_11_fields) {
  Json j = {{"name", intf.name}};
  if (!intf.mac.empty()) j["mac"] = intf.mac;
  if (!intf.sandbox.empty()) j["sandbox"] = intf.sandbox;
  if (with_11_fields) {
    if (intf.mtu.value_or(0) != 0) j["mtu"] = *intf.mtu;
    if (!intf.socket_path.empty()) j["socketPath"] = intf.socket_path;
    if (!intf.pci_id.empty()) j["pciID"] = intf.pci_id;
  }
  return j;
}

Json IpConfigToJson(const IpConfig& ip, bool with_version) {
  Json j = {{"address", ip.address.ToString()}};
  // 0.3.x/0.4.0 print the family, derived from the address as upstream's
  // 100 -> 040 converter does.
  if (with_version) j["version"] = ip.address.is_v4() ? "4" : "6";
  if (ip.interface) j["interface"] = *ip.interface;
  if (ip.gateway) j["gateway"] = ip.gateway->ToString();
  return j;
}

Json RouteToJson(const Route& route, bool with_11_fields) {
  Json j = {{"dst", route.dst.ToString()}};
  if (route.gw) j["gw"] = route.gw->ToString();
  if (with_11_fields) {
    if (route.mtu.value_or(0) != 0) j["mtu"] = *route.mtu;
    if (route.advmss.value_or(0) != 0) j["advmss"] = *route.advmss;
    if (route.priority.value_or(0) != 0) j["priority"] = *route.priority;
    if (route.table) j["table"] = *route.table;
    if (route.scope) j["scope"] = *route.scope;
  }
  return j;
}

// 0.3.0 and later.
Json ToListShape(const Result& result, absl::string_view version) {
  const bool with_11 = Has11Fields(version);
  const bool with_ip_version = ShapeOf(version) == Shape::kV04;
  Json j = {{"cniVersion", std::string(version)}};
  for (const Interface& intf : result.interfaces) {
    j["interfaces"].push_back(InterfaceToJson(intf, with_11));
  }
  for (const IpConfig& ip : result.ips) j["ips"].push_back(IpConfigToJson(ip, with_ip_version));
  for (const Route& route : result.routes) j["routes"].push_back(RouteToJson(route, with_11));
  // Upstream quirk kept for byte-level compatibility: types.DNS is a struct, so
  // Go's "omitempty" never drops it and 0.3.x/0.4.0 results carry "dns": {}.
  // Only the 1.0.0 Result has a MarshalJSON that removes an empty dns.
  if (!result.dns.empty() || ShapeOf(version) == Shape::kV04) j["dns"] = result.dns.ToJson();
  return j;
}

// 0.1.0/0.2.0 (upstream 040 convertTo02x): the first IP of each family, and
// each route under the family of its destination if that family has an IP.
// `result` has an IP (PrintableAt).
Json ToLegacyShape(const Result& result, absl::string_view version) {
  const IpConfig* first[2] = {nullptr, nullptr};  // [0] IPv4, [1] IPv6
  for (const IpConfig& ip : result.ips) {
    const IpConfig*& slot = first[ip.address.is_v4() ? 0 : 1];
    if (slot == nullptr) slot = &ip;
  }
  Json family[2];
  for (int f = 0; f < 2; ++f) {
    if (first[f] == nullptr) continue;
    family[f] = {{"ip", first[f]->address.ToString()}};
    if (first[f]->gateway) family[f]["gateway"] = first[f]->gateway->ToString();
  }
  for (const Route& route : result.routes) {
    int f = route.dst.is_v4() ? 0 : 1;
    if (first[f] == nullptr) continue;
    // 0.2.0 routes know only dst and gw.
    family[f]["routes"].push_back(RouteToJson(route, /*with_11_fields=*/false));
  }
  // As in ToListShape, upstream always prints "dns" at 0.1.0/0.2.0.
  Json j = {{"cniVersion", std::string(version)}, {"dns", result.dns.ToJson()}};
  if (first[0] != nullptr) j["ip4"] = std::move(family[0]);
  if (first[1] != nullptr) j["ip6"] = std::move(family[1]);
  return j;
}

absl::Status Unsupported(absl::string_view what, absl::string_view version) {
  return Error(ErrorCode::kIncompatibleVersion,
               absl::StrCat(what, " \"", version, "\" is not supported"));
}

// Why `result` cannot be printed at `version` (normalized), if it cannot: all
// the ways ResultToJson fails, found without building the document, so that
// ADD's early check (CheckPrintableAt) costs nothing next to the printing.
absl::Status PrintableAt(const Result& result, absl::string_view version) {
  if (!IsSupported(version)) return Unsupported("result version", version);
  if (ShapeOf(version) == Shape::kV02 && result.ips.empty()) {
    // 0.1.0/0.2.0 have no place for a result without an IP.
    return Error(ErrorCode::kIncompatibleVersion, "cannot convert: no valid IP addresses");
  }
  return absl::OkStatus();
}

}  // namespace

const std::vector<std::string>& AllVersions() {
  static const std::vector<std::string>* const kAll = new std::vector<std::string>{
      "0.1.0", "0.2.0", "0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"};
  return *kAll;
}

std::vector<std::string> VersionsFrom(absl::string_view oldest) {
  std::vector<std::string> out;
  for (const std::string& v : AllVersions()) {
    if (VersionAtLeast(v, oldest)) out.push_back(v);
  }
  return out;
}

absl::StatusOr<SemVer> ParseVersion(absl::string_view v) {
  if (v.empty()) return SemVer{0, 1, 0};
  // Upstream (pkg/version ParseVersion) also accepts "1" and "1.0": missing
  // parts are zero.
  std::vector<absl::string_view> parts = absl::StrSplit(v, '.');
  int nums[3] = {0, 0, 0};
  bool ok = parts.size() <= 3;
  for (size_t i = 0; ok && i < parts.size(); ++i) {
    ok = !parts[i].empty() && parts[i].find_first_not_of("0123456789") == absl::string_view::npos &&
         absl::SimpleAtoi(parts[i], &nums[i]);
  }
  if (!ok) {
    return Error(ErrorCode::kIncompatibleVersion, absl::StrCat("malformed version \"", v, "\""));
  }
  return SemVer{nums[0], nums[1], nums[2]};
}

int CompareVersions(absl::string_view a, absl::string_view b) {
  absl::StatusOr<SemVer> va = ParseVersion(a);
  absl::StatusOr<SemVer> vb = ParseVersion(b);
  if (!va.ok() && !vb.ok()) return a.compare(b) < 0 ? -1 : (a == b ? 0 : 1);
  if (!va.ok()) return -1;
  if (!vb.ok()) return 1;
  if (*va < *vb) return -1;
  return *va == *vb ? 0 : 1;
}

bool VersionAtLeast(absl::string_view a, absl::string_view b) {
  absl::StatusOr<SemVer> va = ParseVersion(a);
  absl::StatusOr<SemVer> vb = ParseVersion(b);
  return va.ok() && vb.ok() && *va >= *vb;
}

Json VersionInfoJson(absl::string_view cni_version, const std::vector<std::string>& supported) {
  return {{"cniVersion", std::string(cni_version.empty() ? kCurrentVersion : cni_version)},
          {"supportedVersions", supported}};
}

absl::StatusOr<Result> ParseResult(const Json& j, absl::string_view default_version) {
  if (!j.is_object()) {
    return Error(ErrorCode::kDecodingFailure, "a result must be a JSON object");
  }
  ASSIGN_OR_RETURN(std::optional<std::string> own, GetString(j, "cniVersion"), "decoding result");
  // An absent or empty cniVersion takes the caller's (spec: a delegated
  // plugin's result is of the configuration's version), else means 0.1.0.
  std::string version = own.value_or("");
  if (version.empty()) version = std::string(Normalize(default_version));
  if (!IsSupported(version)) return Unsupported("result version", version);

  Result result;
  result.cni_version = version;
  absl::Status s = ShapeOf(version) == Shape::kV02 ? ParseLegacyShape(j, result)
                                                  : ParseListShape(j, result);
  if (s.ok()) s = ParseDnsInto(j, result.dns);
  RETURN_IF_ERROR(s, "decoding ", version, " result");
  return result;
}

absl::StatusOr<Result> ParseResult(absl::string_view bytes, absl::string_view default_version) {
  ASSIGN_OR_RETURN(Json j, ParseJson(bytes), "decoding result");
  return ParseResult(j, default_version);
}

absl::StatusOr<Json> ResultToJson(const Result& result, absl::string_view version) {
  version = Normalize(version);  // upstream convert.Convert: "" means 0.1.0
  RETURN_IF_ERROR(PrintableAt(result, version));
  if (ShapeOf(version) == Shape::kV02) return ToLegacyShape(result, version);
  return ToListShape(result, version);
}

absl::StatusOr<Json> ConvertResult(const Json& result_json, absl::string_view to_version) {
  ASSIGN_OR_RETURN(Result result, ParseResult(result_json));
  return ResultToJson(result, to_version);
}

absl::Status CheckPrintableAt(const Result& result, const NetConf& conf) {
  return PrintableAt(result, Normalize(conf.cni_version));  // spec: no cniVersion is 0.1.0
}

}  // namespace cni

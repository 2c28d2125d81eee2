#include "cni/plugin/ipam_ranges.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "cni/protocol/args.h"
#include "cni/protocol/version.h"

namespace cni::ipam {

using net::IpAddress;
using net::IpPrefix;

namespace {

absl::Status Invalid(absl::string_view msg) { return Error(ErrorCode::kInvalidNetworkConfig, msg); }

// Requested IPs may carry a prefix length ("10.1.2.3/24"); only the address counts.
absl::StatusOr<IpAddress> ParseIpMaybeCidr(absl::string_view text) {
  absl::string_view addr = text.substr(0, text.find('/'));
  if (addr.size() != text.size()) RETURN_IF_ERROR(IpPrefix::Parse(text));
  ASSIGN_OR_RETURN(IpAddress ip, IpAddress::Parse(addr));
  return CanonicalIp(ip);
}

absl::StatusOr<std::optional<IpAddress>> GetIp(const Json& obj, absl::string_view key) {
  ASSIGN_OR_RETURN(std::optional<std::string> s, GetString(obj, key));
  if (!s || s->empty()) return std::optional<IpAddress>();
  ASSIGN_OR_RETURN(IpAddress ip, IpAddress::Parse(*s), key);
  return std::optional<IpAddress>(CanonicalIp(ip));
}

// Parses one {subnet, rangeStart, rangeEnd, gateway} object and canonicalises it.
absl::StatusOr<Range> ParseRange(const Json& j) {
  if (!j.is_object()) return Error(ErrorCode::kDecodingFailure, "range must be an object");
  ASSIGN_OR_RETURN(std::optional<std::string> subnet, GetString(j, "subnet"));
  if (!subnet || subnet->empty()) return Invalid("range has no subnet");
  Range r;
  ASSIGN_OR_RETURN(r.subnet, IpPrefix::Parse(*subnet));
  ASSIGN_OR_RETURN(std::optional<IpAddress> start, GetIp(j, "rangeStart"));
  ASSIGN_OR_RETURN(std::optional<IpAddress> end, GetIp(j, "rangeEnd"));
  ASSIGN_OR_RETURN(std::optional<IpAddress> gw, GetIp(j, "gateway"));
  if (start) r.range_start = *start;
  if (end) r.range_end = *end;
  if (gw) r.gateway = *gw;
  RETURN_IF_ERROR(r.Canonicalize(start.has_value(), end.has_value(), gw.has_value()));
  return r;
}

// A range set: a non-empty list of ranges of one family that do not overlap.
absl::StatusOr<RangeSet> ParseRangeSet(const Json& j) {
  if (!j.is_array()) return Error(ErrorCode::kDecodingFailure, "range set must be a list");
  if (j.empty()) return Invalid("empty range set");
  RangeSet set;
  for (const Json& r : j) {
    ASSIGN_OR_RETURN(Range range, ParseRange(r));
    if (!set.empty() && set.front().subnet.family() != range.subnet.family()) {
      return Invalid("mixed address families");
    }
    set.push_back(std::move(range));
  }
  for (size_t i = 0; i < set.size(); ++i) {
    for (size_t k = i + 1; k < set.size(); ++k) {
      if (set[i].Overlaps(set[k])) {
        return Invalid(
            absl::StrCat("subnets ", set[i].ToString(), " and ", set[k].ToString(), " overlap"));
      }
    }
  }
  return set;
}

// Appends every range set of a "ranges"/"ipRanges" list to `out`.
absl::Status AppendRangeSets(const Json& list, std::vector<Json>& out) {
  if (list.is_null()) return absl::OkStatus();
  if (!list.is_array()) return Error(ErrorCode::kDecodingFailure, "ranges must be a list");
  for (const Json& set : list) out.push_back(set);
  return absl::OkStatus();
}

absl::StatusOr<Route> ParseRoute(const Json& j) {
  if (!j.is_object()) return Error(ErrorCode::kDecodingFailure, "route must be an object");
  ASSIGN_OR_RETURN(std::optional<std::string> dst, GetString(j, "dst"));
  if (!dst) return Invalid("route has no dst");
  Route route;
  ASSIGN_OR_RETURN(route.dst, IpPrefix::Parse(*dst), "route dst");
  ASSIGN_OR_RETURN(route.gw, GetIp(j, "gw"), "route");
  // CNI 1.1 route attributes pass through to the result unchanged.
  struct IntField {
    const char* key;
    std::optional<int>* field;
  } fields[] = {{"mtu", &route.mtu},
                {"advmss", &route.advmss},
                {"priority", &route.priority},
                {"table", &route.table},
                {"scope", &route.scope}};
  for (const IntField& f : fields) {
    ASSIGN_OR_RETURN(std::optional<int64_t> v, GetInt(j, f.key));
    if (v) *f.field = static_cast<int>(*v);
  }
  return route;
}

// Requested IPs from a JSON list of "<ip>[/<prefix>]" strings.
absl::Status AppendIps(const Json& obj, absl::string_view key, absl::string_view where,
                       std::vector<IpAddress>& out) {
  ASSIGN_OR_RETURN(std::optional<std::vector<std::string>> ips, GetStringList(obj, key), where);
  if (!ips) return absl::OkStatus();
  for (const std::string& text : *ips) {
    ASSIGN_OR_RETURN(IpAddress ip, ParseIpMaybeCidr(text), where);
    out.push_back(ip);
  }
  return absl::OkStatus();
}

}  // namespace

IpAddress CanonicalIp(const IpAddress& ip) {
  if (ip.is_v4()) return ip;
  const uint8_t* b = ip.data();
  for (int i = 0; i < 10; ++i) {
    if (b[i] != 0) return ip;
  }
  if (b[10] != 0xff || b[11] != 0xff) return ip;
  return IpAddress::V4({b[12], b[13], b[14], b[15]});
}


absl::Status Range::Canonicalize(bool has_start, bool has_end, bool has_gateway) {
  int bits = subnet.addr().bit_length();
  if (subnet.len() > bits - 2) {
    return Invalid(absl::StrCat("Network ", subnet.ToString(), " too small to allocate from"));
  }
  if (subnet.HasHostBits()) {
    return Invalid(absl::StrCat("Network has host bits set. For a subnet mask of length ",
                                subnet.len(), " the network address is ",
                                subnet.Network().addr().ToString()));
  }
  if (!has_gateway) {
    gateway = subnet.addr().Next();
  } else if (gateway.family() != subnet.family() || !subnet.Contains(gateway)) {
    // Upstream's wording; a gateway of the other family is not in the network either.
    return Invalid(absl::StrCat("gateway ", gateway.ToString(), " not in network ", subnet.ToString()));
  }
  // rangeStart defaults to network+1 even when that is the gateway: the
  // iterator skips the gateway, as upstream does.
  if (has_start) {
    if (!Contains(range_start)) {
      return Invalid(absl::StrCat("RangeStart ", range_start.ToString(), " not in network ",
                                  subnet.ToString()));
    }
  } else {
    range_start = subnet.addr().Next();
  }
  if (has_end) {
    if (!Contains(range_end)) {
      return Invalid(
          absl::StrCat("RangeEnd ", range_end.ToString(), " not in network ", subnet.ToString()));
    }
  } else {
    range_end = subnet.LastAddress();
    if (range_end.is_v4()) range_end = range_end.Prev();  // not the broadcast address
  }
  // Upstream accepts rangeEnd < rangeStart and then hands out nothing
  // useful; reject it here.
  if (range_end < range_start) {
    return Invalid(absl::StrCat("RangeEnd ", range_end.ToString(), " is before RangeStart ",
                                range_start.ToString()));
  }
  return absl::OkStatus();
}

// Contains() is also used while canonicalising, before start/end are final;
// unset (zero) bounds of the wrong family are skipped like upstream's nil checks.
bool Range::Contains(const IpAddress& ip) const {
  if (ip.family() != subnet.family() || !subnet.Contains(ip)) return false;
  if (range_start.family() == ip.family() && !range_start.IsUnspecified() && ip < range_start) {
    return false;
  }
  if (range_end.family() == ip.family() && !range_end.IsUnspecified() && ip > range_end) {
    return false;
  }
  return true;
}

bool Range::Overlaps(const Range& o) const {
  if (subnet.family() != o.subnet.family()) return false;
  return Contains(o.range_start) || Contains(o.range_end) || o.Contains(range_start) ||
         o.Contains(range_end);
}

std::string Range::ToString() const {
  return absl::StrCat(range_start.ToString(), "-", range_end.ToString());
}

const Range* RangeFor(const RangeSet& set, const IpAddress& ip) {
  for (const Range& r : set) {
    if (r.Contains(ip)) return &r;
  }
  return nullptr;
}

bool RangeSetContains(const RangeSet& set, const IpAddress& ip) {
  return RangeFor(set, ip) != nullptr;
}

bool RangeSetsOverlap(const RangeSet& a, const RangeSet& b) {
  for (const Range& x : a) {
    for (const Range& y : b) {
      if (x.Overlaps(y)) return true;
    }
  }
  return false;
}

std::string RangeSetToString(const RangeSet& set) {
  return absl::StrJoin(
      set, ",", [](std::string* out, const Range& r) { absl::StrAppend(out, r.ToString()); });
}

absl::StatusOr<std::vector<RangeSet>> ParseRangeSets(const Json& raw, const Json& ipam,
                                                absl::string_view cni_version) {
  std::vector<Json> sets;
  if (const Json* rc = FindKey(raw, "runtimeConfig"); rc != nullptr && rc->is_object()) {
    if (const Json* ipr = FindKey(*rc, "ipRanges")) {
      RETURN_IF_ERROR(AppendRangeSets(*ipr, sets), "runtimeConfig.ipRanges");
    }
  }
  ASSIGN_OR_RETURN(std::optional<std::string> legacy_subnet, GetString(ipam, "subnet"));
  if (legacy_subnet && !legacy_subnet->empty()) {
    Json legacy = Json::object();
    for (const char* key : {"subnet", "rangeStart", "rangeEnd", "gateway"}) {
      if (const Json* v = FindKey(ipam, key)) legacy[key] = *v;
    }
    sets.push_back(Json::array({legacy}));
  }
  if (const Json* ranges = FindKey(ipam, "ranges")) RETURN_IF_ERROR(AppendRangeSets(*ranges, sets));
  if (sets.empty()) return Invalid("no IP ranges specified");

  std::vector<RangeSet> out;
  int v4 = 0, v6 = 0;
  for (size_t i = 0; i < sets.size(); ++i) {
    ASSIGN_OR_RETURN(RangeSet set, ParseRangeSet(sets[i]), "invalid range set ", i);
    (set.front().subnet.is_v4() ? v4 : v6)++;
    out.push_back(std::move(set));
  }
  if ((v4 > 1 || v6 > 1) && !VersionAtLeast(cni_version.empty() ? "0.1.0" : cni_version, "0.3.0")) {
    return Error(ErrorCode::kIncompatibleVersion,
                 absl::StrCat("CNI version ", cni_version,
                              " does not support more than 1 address per family"));
  }
  for (size_t i = 0; i < out.size(); ++i) {
    for (size_t k = i + 1; k < out.size(); ++k) {
      if (RangeSetsOverlap(out[i], out[k])) {
        return Invalid(absl::StrCat("range set ", i, " overlaps with ", k));
      }
    }
  }
  return out;
}


absl::StatusOr<std::vector<IpAddress>> RequestedIps(const Json& raw, absl::string_view cni_args) {
  std::vector<IpAddress> requested;
  if (!cni_args.empty()) {
    ASSIGN_OR_RETURN(CniArgs args, CniArgs::Parse(cni_args, {"IP"}));
    if (std::optional<std::string> ip = args.Ip(); ip && !ip->empty()) {
      ASSIGN_OR_RETURN(IpAddress parsed, ParseIpMaybeCidr(*ip), "CNI_ARGS IP");
      requested.push_back(parsed);
    }
  }
  if (const Json* args = FindKey(raw, "args"); args != nullptr && args->is_object()) {
    RETURN_IF_ERROR(AppendIps(ArgsCni(*args), "ips", "args.cni.ips", requested));
  }
  if (const Json* rc = FindKey(raw, "runtimeConfig"); rc != nullptr && rc->is_object()) {
    RETURN_IF_ERROR(AppendIps(*rc, "ips", "runtimeConfig.ips", requested));
  }
  std::vector<IpAddress> unique;
  for (const IpAddress& ip : requested) {
    if (std::find(unique.begin(), unique.end(), ip) == unique.end()) unique.push_back(ip);
  }
  return unique;
}


absl::StatusOr<const Json*> IpamObject(const Json& raw) {
  const Json* ipam = FindKey(raw, "ipam");
  if (ipam == nullptr || ipam->is_null()) return Invalid("IPAM config missing 'ipam' key");
  if (!ipam->is_object()) return Error(ErrorCode::kDecodingFailure, "ipam must be an object");
  return ipam;
}

absl::StatusOr<RangeKeys> ParseRangeKeys(const Json& raw, const Json& ipam,
                                         absl::string_view cni_args,
                                         absl::string_view cni_version) {
  RangeKeys k;
  ASSIGN_OR_RETURN(k.requested_ips, RequestedIps(raw, cni_args));
  ASSIGN_OR_RETURN(k.ranges, ParseRangeSets(raw, ipam, cni_version));
  ASSIGN_OR_RETURN(k.routes, ParseRoutes(ipam));
  return k;
}

absl::StatusOr<std::vector<Route>> ParseRoutes(const Json& ipam) {
  std::vector<Route> out;
  const Json* routes = FindKey(ipam, "routes");
  if (routes == nullptr || routes->is_null()) return out;
  if (!routes->is_array()) return Error(ErrorCode::kDecodingFailure, "routes must be a list");
  for (const Json& r : *routes) {
    ASSIGN_OR_RETURN(Route route, ParseRoute(r));
    out.push_back(std::move(route));
  }
  return out;
}

Dns ParseResolvConf(absl::string_view text) {
  Dns dns;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    std::vector<absl::string_view> f =
        absl::StrSplit(line, absl::ByAnyChar(" \t\r\f\v"), absl::SkipEmpty());
    if (f.size() < 2) continue;
    if (f[0] == "nameserver") {
      dns.nameservers.emplace_back(f[1]);
    } else if (f[0] == "domain") {
      dns.domain = std::string(f[1]);
    } else if (f[0] == "search") {
      for (size_t i = 1; i < f.size(); ++i) dns.search.emplace_back(f[i]);
    } else if (f[0] == "options") {
      for (size_t i = 1; i < f.size(); ++i) dns.options.emplace_back(f[i]);
    }
  }
  return dns;
}

std::optional<IpAddress> TakeRequested(const RangeSet& set, std::vector<IpAddress>& requested) {
  for (auto it = requested.begin(); it != requested.end(); ++it) {
    if (RangeSetContains(set, *it)) {
      IpAddress ip = *it;
      requested.erase(it);
      return ip;
    }
  }
  return std::nullopt;
}

absl::Status UnusedRequestedIps(const std::vector<IpAddress>& requested) {
  if (requested.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("failed to allocate all requested IPs: ",
                   absl::StrJoin(requested, " ", [](std::string* out, const IpAddress& ip) {
                     absl::StrAppend(out, ip.ToString());
                   })));
}

IpConfig MakeIpConfig(const IpAddress& ip, const Range& r) {
  IpConfig c;
  c.address = IpPrefix(ip, r.subnet.len());
  c.gateway = r.gateway;
  return c;
}

RangeIter::RangeIter(const RangeSet& set, std::optional<net::IpAddress> last_reserved) : set_(set) {
  // A last reserved address outside the set (the config changed) only costs
  // round-robin order this once.
  if (last_reserved) {
    for (size_t i = 0; i < set_.size(); ++i) {
      if (set_[i].Contains(*last_reserved)) {
        range_idx_ = i;
        cur_ = last_reserved;  // the first Next() advances past it
        return;
      }
    }
  }
}

std::optional<std::pair<net::IpAddress, const Range*>> RangeIter::Next() {
  for (;;) {
    const Range* r = &set_[range_idx_];
    if (!cur_) {
      cur_ = r->range_start;
      start_ = cur_;
      if (*cur_ == r->gateway) continue;
      return std::make_pair(*cur_, r);
    }
    if (*cur_ == r->range_end) {
      range_idx_ = (range_idx_ + 1) % set_.size();
      r = &set_[range_idx_];
      cur_ = r->range_start;
    } else {
      cur_ = cur_->Next();
    }
    if (!start_) {
      start_ = cur_;
    } else if (*cur_ == *start_) {
      return std::nullopt;  // back where we started: everything was offered
    }
    if (*cur_ == r->gateway) continue;
    return std::make_pair(*cur_, r);
  }
}

std::vector<std::string> RangeKeyNames() {
  return {"ranges",  "subnet",       "rangeStart",        "rangeEnd",
          "gateway", "routes",       "runtimeConfig.ipRanges", "args.cni.ips",
          "runtimeConfig.ips"};
}

}  // namespace cni::ipam

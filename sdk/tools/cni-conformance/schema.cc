#include "schema.h"

#include <algorithm>
#include <regex>
#include <set>

#include "absl/strings/str_cat.h"
#include "cni/base/ip.h"
#include "cni/protocol/version.h"

namespace conformance {

// The text of docs/spec/result.schema.json (generated at build time).
extern const char kResultSchemaText[];

namespace {

using cni::Json;

// Keywords that only describe; they constrain nothing.
const std::set<std::string, std::less<>> kAnnotations = {
    "$schema", "$id", "title", "description", "examples", "$defs", "$comment", "default"};

bool HasType(const Json& v, absl::string_view type) {
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "string") return v.is_string();
  if (type == "integer") {
    return v.is_number_integer() || (v.is_number_float() && v.get<double>() == static_cast<double>(
                                                                                 static_cast<long long>(v.get<double>())));
  }
  if (type == "number") return v.is_number();
  if (type == "boolean") return v.is_boolean();
  if (type == "null") return v.is_null();
  return false;
}

class Validator {
 public:
  explicit Validator(const Json& root) : root_(root) {}

  void Check(const Json& schema, const Json& v, const std::string& at) {
    if (!schema.is_object()) {
      Fail(at, "schema is not an object");
      return;
    }
    for (const auto& [key, rule] : schema.items()) {
      if (kAnnotations.count(key) != 0) continue;
      if (key == "$ref") {
        Ref(rule, v, at);
      } else if (key == "type") {
        Type(rule, v, at);
      } else if (key == "required") {
        if (!v.is_object()) continue;
        for (const Json& name : rule) {
          if (name.is_string() && !v.contains(name.get<std::string>())) {
            Fail(at, absl::StrCat("missing required property \"", name.get<std::string>(), "\""));
          }
        }
      } else if (key == "properties") {
        if (!v.is_object()) continue;
        for (const auto& [name, sub] : rule.items()) {
          if (auto it = v.find(name); it != v.end()) Check(sub, *it, absl::StrCat(at, "/", name));
        }
      } else if (key == "items") {
        if (!v.is_array()) continue;
        for (size_t i = 0; i < v.size(); ++i) Check(rule, v[i], absl::StrCat(at, "/", i));
      } else if (key == "pattern") {
        if (!v.is_string() || !rule.is_string()) continue;
        // ECMAScript syntax, as JSON Schema's patterns are; unanchored search.
        if (!std::regex_search(v.get<std::string>(), std::regex(rule.get<std::string>()))) {
          Fail(at, absl::StrCat("\"", v.get<std::string>(), "\" does not match ", rule.get<std::string>()));
        }
      } else if (key == "minimum") {
        if (v.is_number() && v.get<double>() < rule.get<double>()) {
          Fail(at, absl::StrCat(v.dump(), " is below the minimum ", rule.dump()));
        }
      } else if (key == "maximum") {
        if (v.is_number() && v.get<double>() > rule.get<double>()) {
          Fail(at, absl::StrCat(v.dump(), " is above the maximum ", rule.dump()));
        }
      } else if (key == "enum") {
        bool found = false;
        for (const Json& e : rule) found = found || e == v;
        if (!found) Fail(at, absl::StrCat(v.dump(), " is not one of ", rule.dump()));
      } else {
        Fail(at, absl::StrCat("schema keyword \"", key, "\" is not supported by this validator"));
      }
    }
  }

  std::vector<std::string> TakeErrors() { return std::move(errors_); }

 private:
  void Fail(const std::string& at, absl::string_view what) {
    errors_.push_back(absl::StrCat(at.empty() ? "/" : at, ": ", what));
  }

  void Type(const Json& rule, const Json& v, const std::string& at) {
    std::vector<std::string> types;
    if (rule.is_string()) types.push_back(rule.get<std::string>());
    if (rule.is_array()) {
      for (const Json& t : rule) types.push_back(t.get<std::string>());
    }
    for (const std::string& t : types) {
      if (HasType(v, t)) return;
    }
    Fail(at, absl::StrCat(v.dump(), " is not of type ", rule.dump()));
  }

  // Only local references into the schema itself ("#/$defs/Name").
  void Ref(const Json& rule, const Json& v, const std::string& at) {
    std::string ref = rule.is_string() ? rule.get<std::string>() : "";
    if (ref.rfind("#/", 0) != 0) {
      Fail(at, absl::StrCat("schema reference \"", ref, "\" is not local"));
      return;
    }
    const Json* target = &root_;
    for (size_t pos = 2; pos <= ref.size();) {
      size_t end = ref.find('/', pos);
      if (end == std::string::npos) end = ref.size();
      std::string part = ref.substr(pos, end - pos);
      if (!target->is_object() || !target->contains(part)) {
        Fail(at, absl::StrCat("schema reference \"", ref, "\" names nothing"));
        return;
      }
      target = &(*target)[part];
      pos = end + 1;
    }
    Check(*target, v, at);
  }

  const Json& root_;
  std::vector<std::string> errors_;
};

// Spec rules for the values themselves, collected into `errors`.
class ValueRules {
 public:
  explicit ValueRules(std::vector<std::string>& errors) : errors_(errors) {}

  std::optional<cni::net::IpPrefix> Cidr(const Json& obj, const char* key, const std::string& at,
                                         bool required) {
    auto it = obj.find(key);
    if (it == obj.end()) {
      if (required) Fail(at, absl::StrCat("missing \"", key, "\""));
      return std::nullopt;
    }
    if (!it->is_string()) {
      Fail(at + "/" + key, "not a string");
      return std::nullopt;
    }
    absl::StatusOr<cni::net::IpPrefix> p = cni::net::IpPrefix::Parse(it->get<std::string>());
    if (!p.ok()) {
      Fail(at + "/" + key, absl::StrCat("\"", it->get<std::string>(), "\" is not in CIDR notation"));
      return std::nullopt;
    }
    return *p;
  }

  // An IP address; when `family_of` is given, of the same family.
  void Ip(const Json& obj, const char* key, const std::string& at,
          const std::optional<cni::net::IpPrefix>& family_of) {
    auto it = obj.find(key);
    if (it == obj.end()) return;
    if (!it->is_string()) {
      Fail(at + "/" + key, "not a string");
      return;
    }
    absl::StatusOr<cni::net::IpAddress> a = cni::net::IpAddress::Parse(it->get<std::string>());
    if (!a.ok()) {
      Fail(at + "/" + key, absl::StrCat("\"", it->get<std::string>(), "\" is not an IP address"));
    } else if (family_of && a->is_v4() != family_of->addr().is_v4()) {
      Fail(at + "/" + key, absl::StrCat(it->get<std::string>(), " is not of the family of ",
                                       family_of->ToString()));
    }
  }

  void Routes(const Json& obj, const std::string& at) {
    auto it = obj.find("routes");
    if (it == obj.end() || !it->is_array()) return;
    for (size_t i = 0; i < it->size(); ++i) {
      const Json& r = (*it)[i];
      std::string here = absl::StrCat(at, "/routes/", i);
      if (!r.is_object()) continue;  // the schema says so
      std::optional<cni::net::IpPrefix> dst = Cidr(r, "dst", here, true);
      Ip(r, "gw", here, dst);
    }
  }

  void Dns(const Json& obj) {
    auto it = obj.find("dns");
    if (it == obj.end() || !it->is_object()) return;
    auto ns = it->find("nameservers");
    if (ns == it->end() || !ns->is_array()) return;
    for (size_t i = 0; i < ns->size(); ++i) {
      const Json& n = (*ns)[i];
      if (n.is_string() && !cni::net::IpAddress::Parse(n.get<std::string>()).ok()) {
        Fail(absl::StrCat("/dns/nameservers/", i), absl::StrCat("\"", n.get<std::string>(), "\" is not an IP address"));
      }
    }
  }

  void Fail(const std::string& at, absl::string_view what) { errors_.push_back(absl::StrCat(at, ": ", what)); }

 private:
  std::vector<std::string>& errors_;
};

}  // namespace

const Json& ResultSchema() {
  static const Json* schema = new Json(Json::parse(kResultSchemaText));
  return *schema;
}

std::vector<std::string> ValidateAgainstSchema(const Json& schema, const Json& doc) {
  Validator v(schema);
  v.Check(schema, doc, "");
  return v.TakeErrors();
}

std::vector<std::string> ValidateResult(const Json& result, const ResultExpectations& expect) {
  std::vector<std::string> errors;
  if (!result.is_object()) return {"/: the result is not a JSON object"};
  ValueRules rules(errors);
  auto version = result.find("cniVersion");
  if (version == result.end() || !version->is_string() || version->get<std::string>() != expect.version) {
    rules.Fail("/cniVersion", absl::StrCat(version == result.end() ? "missing" : version->dump(),
                                          ", not the version asked for (\"", expect.version, "\")"));
  }
  const bool legacy = cni::CompareVersions(expect.version, "0.3.0") < 0;
  if (legacy) {
    // 0.1.0 / 0.2.0: {"ip4": {"ip", "gateway", "routes"}, "ip6": ..., "dns"}.
    for (const char* key : {"interfaces", "ips"}) {
      if (result.contains(key)) rules.Fail(absl::StrCat("/", key), "not part of a result before 0.3.0");
    }
    for (const char* key : {"ip4", "ip6"}) {
      auto it = result.find(key);
      if (it == result.end()) continue;
      std::string at = absl::StrCat("/", key);
      if (!it->is_object()) {
        rules.Fail(at, "not an object");
        continue;
      }
      std::optional<cni::net::IpPrefix> ip = rules.Cidr(*it, "ip", at, true);
      if (ip && ip->addr().is_v4() != (std::string(key) == "ip4")) rules.Fail(at + "/ip", "of the wrong family");
      rules.Ip(*it, "gateway", at, ip);
      rules.Routes(*it, at);
    }
    rules.Dns(result);
    return errors;
  }
  for (std::string& e : ValidateAgainstSchema(ResultSchema(), result)) errors.push_back("schema: " + e);
  size_t interfaces = 0;
  if (auto it = result.find("interfaces"); it != result.end() && it->is_array()) interfaces = it->size();
  if (auto ips = result.find("ips"); ips != result.end() && ips->is_array()) {
    for (size_t i = 0; i < ips->size(); ++i) {
      const Json& ip = (*ips)[i];
      std::string at = absl::StrCat("/ips/", i);
      if (!ip.is_object()) continue;
      std::optional<cni::net::IpPrefix> addr = rules.Cidr(ip, "address", at, true);
      rules.Ip(ip, "gateway", at, addr);
      if (auto idx = ip.find("interface"); idx != ip.end() && idx->is_number_integer() &&
                                           idx->get<long long>() >= static_cast<long long>(interfaces)) {
        rules.Fail(at + "/interface", absl::StrCat(idx->dump(), " is not an index into \"interfaces\" (",
                                                   interfaces, " entries)"));
      }
      // 0.3.x results name the family; it must be the address's.
      if (auto fam = ip.find("version"); fam != ip.end() && addr) {
        std::string want = addr->addr().is_v4() ? "4" : "6";
        if (!fam->is_string() || fam->get<std::string>() != want) {
          rules.Fail(at + "/version", absl::StrCat(fam->dump(), " for ", addr->ToString()));
        }
      } else if (fam == ip.end() && addr && cni::CompareVersions(expect.version, "0.4.0") <= 0) {
        rules.Fail(at, "missing \"version\" (required up to 0.4.0)");
      }
    }
  }
  rules.Routes(result, "");
  rules.Dns(result);
  return errors;
}

std::vector<std::string> CarriedThrough(const cni::Json& prev, const cni::Json& result) {
  std::vector<std::string> missing;
  auto list = [](const cni::Json& doc, const char* key) {
    auto it = doc.find(key);
    return it != doc.end() && it->is_array() ? *it : cni::Json::array();
  };
  const cni::Json prev_ifs = list(prev, "interfaces"), ifs = list(result, "interfaces");
  // An interface is the same one when name and sandbox match.
  auto same_if = [](const cni::Json& a, const cni::Json& b) {
    return a.value("name", "") == b.value("name", "") && a.value("sandbox", "") == b.value("sandbox", "");
  };
  for (const cni::Json& want : prev_ifs) {
    if (!want.is_object()) continue;
    bool found = false;
    for (const cni::Json& got : ifs) found = found || (got.is_object() && same_if(want, got));
    if (!found) missing.push_back(absl::StrCat("interface ", want.dump(), " dropped"));
  }
  auto interface_of = [](const cni::Json& ip, const cni::Json& ifaces) -> cni::Json {
    auto idx = ip.find("interface");
    if (idx == ip.end() || !idx->is_number_integer()) return nullptr;
    size_t i = idx->get<size_t>();
    return i < ifaces.size() && ifaces[i].is_object() ? ifaces[i] : cni::Json(nullptr);
  };
  for (const cni::Json& want : list(prev, "ips")) {
    if (!want.is_object()) continue;
    bool found = false;
    for (const cni::Json& got : list(result, "ips")) {
      if (!got.is_object() || got.value("address", "") != want.value("address", "")) continue;
      cni::Json wi = interface_of(want, prev_ifs), gi = interface_of(got, ifs);
      found = found || (wi.is_null() ? gi.is_null() : !gi.is_null() && same_if(wi, gi));
    }
    if (!found) missing.push_back(absl::StrCat("ip ", want.dump(), " dropped or moved to another interface"));
  }
  for (const cni::Json& want : list(prev, "routes")) {
    bool found = false;
    for (const cni::Json& got : list(result, "routes")) found = found || got == want;
    if (!found) missing.push_back(absl::StrCat("route ", want.dump(), " dropped"));
  }
  // DNS: every value kept (lists may grow).
  if (auto dns = prev.find("dns"); dns != prev.end() && dns->is_object()) {
    auto got = result.find("dns");
    for (const auto& [key, want] : dns->items()) {
      const cni::Json* have = (got != result.end() && got->is_object() && got->contains(key)) ? &(*got)[key] : nullptr;
      bool kept = have != nullptr && *have == want;
      if (!kept && have != nullptr && want.is_array() && have->is_array()) {
        kept = true;
        for (const cni::Json& e : want) kept = kept && std::find(have->begin(), have->end(), e) != have->end();
      }
      if (!kept) missing.push_back(absl::StrCat("dns \"", key, "\" ", want.dump(), " not kept"));
    }
  }
  return missing;
}

}  // namespace conformance

// A plugin's configuration keys declared as data: one table row per key
// (its JSON name, its type, its allowed values, the Config field it fills),
// walked by one parser. Upstream's Go plugins get the same from struct tags;
// here the table is the single place that says which keys a plugin reads, and
// every plugin's messages come out alike:
//
//   wrong JSON type        code 6  bridge: cannot decode "vlan": expected integer, got string
//   out of range           code 7  bridge: "vlan" must be between 0 and 4094, not 5000
//   not one of the values  code 7  ptp: "ipMasqBackend" must be one of "iptables", "nftables", not "x"
//
// Keys match case-insensitively (cni/base/json.h). Absent or null keeps the field's
// default. Cross-key rules ("vlan and vlanTrunk are exclusive") stay in code,
// after the table, in the plugin's Config::Parse.
//
// ptp's table (plugins/ptp/config.cc), as it is:
//
//   const PluginKeys<Config> Config::kKeys = {
//       .plugin = "ptp",
//       .table = {
//           config::Bool("ipMasq", &Config::ip_masq),
//           config::Parsed("ipMasqBackend", &Config::ip_masq_backend, ParseIpMasqBackendKey),
//           config::Parsed("mtu", &Config::mtu, ParseVethMtuKey),
//           DnsKey<Config>(),
//       },
//       .teardown = {"ipMasq"},
//   };
//   ASSIGN_OR_RETURN(Config c, kKeys.Parse(args));
//
// `table` is a config::Schema, walked by config::ParseKeys; PluginKeys
// (cni/plugin/plugin_keys.h) adds what the plugin's DEL and GC read of it
// and the list of the keys it reads.
//
// Every row reads only the key it names: the typed rows by construction,
// Custom gets the value under its name, Parsed a Field of its name (never
// the whole object), so a table cannot name one key while reading another,
// and KeyNames(kKeys) is exactly the keys a plugin reads.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "cni/base/error.h"
#include "cni/base/json.h"
#include "cni/base/status_macros.h"

namespace cni::config {

// One row: how to read one key of the configuration object into a C.
template <typename C>
struct Key {
  // The JSON name: the only key `read` looks at.
  std::string name;
  // Reads the key `name` from `obj` (the configuration object) into `out`;
  // `plugin` names the plugin in messages.
  std::function<absl::Status(const Json& obj, absl::string_view plugin, C& out)> read;
};

// A plugin's table of keys.
template <typename C>
using Schema = std::vector<Key<C>>;

// An inclusive range for Integer keys.
struct Range {
  int64_t min;  // the smallest value allowed
  int64_t max;  // the largest value allowed
};

namespace internal {

// The field's own type, seen through std::optional (an optional field is set
// only when the key is present).
template <typename T>
struct Unwrap {
  using type = T;
};
template <typename T>
struct Unwrap<std::optional<T>> {
  using type = T;
};

}  // namespace internal

// A JSON boolean.
template <typename C, typename F>
Key<C> Bool(absl::string_view name, F C::*field) {
  std::string key(name);
  return {key, [key, field](const Json& obj, absl::string_view, C& out) -> absl::Status {
            CNI_ASSIGN_OR_RETURN(std::optional<bool> v, GetBool(obj, key));
            if (v) out.*field = *v;
            return absl::OkStatus();
          }};
}

// A JSON string. With `empty_keeps_default`, "" reads like absent (the
// default stays), as upstream does for names such as "bridge".
template <typename C, typename F>
Key<C> String(absl::string_view name, F C::*field, bool empty_keeps_default = false) {
  std::string key(name);
  return {key, [key, field, empty_keeps_default](const Json& obj, absl::string_view,
                                                 C& out) -> absl::Status {
            CNI_ASSIGN_OR_RETURN(std::optional<std::string> v, GetString(obj, key));
            if (v && !(empty_keeps_default && v->empty())) out.*field = *std::move(v);
            return absl::OkStatus();
          }};
}

// A string that must be one of `allowed` ("" is allowed when listed).
template <typename C, typename F>
Key<C> OneOf(absl::string_view name, F C::*field, std::initializer_list<absl::string_view> allowed) {
  std::string key(name);
  std::vector<std::string> values(allowed.begin(), allowed.end());
  return {key, [key, field, values](const Json& obj, absl::string_view plugin,
                                    C& out) -> absl::Status {
            CNI_ASSIGN_OR_RETURN(std::optional<std::string> v, GetString(obj, key));
            if (!v) return absl::OkStatus();
            for (const std::string& ok : values) {
              if (*v == ok) {
                out.*field = *v;
                return absl::OkStatus();
              }
            }
            return InvalidConfig(
                plugin, absl::StrCat("\"", key, "\" must be one of \"", absl::StrJoin(values, "\", \""),
                                     "\", not \"", *v, "\""));
          }};
}

// A whole JSON number within `range` (code 7 outside it).
template <typename C, typename F>
Key<C> Integer(absl::string_view name, F C::*field, Range range) {
  std::string key(name);
  return {key, [key, field, range](const Json& obj, absl::string_view plugin,
                                   C& out) -> absl::Status {
            CNI_ASSIGN_OR_RETURN(std::optional<int64_t> v, GetInt(obj, key));
            if (!v) return absl::OkStatus();
            if (*v < range.min || *v > range.max) {
              return InvalidConfig(plugin, absl::StrCat("\"", key, "\" must be between ", range.min,
                                                        " and ", range.max, ", not ", *v));
            }
            using T = typename internal::Unwrap<F>::type;
            out.*field = static_cast<T>(*v);
            return absl::OkStatus();
          }};
}

// A list of strings.
template <typename C, typename F>
Key<C> StringList(absl::string_view name, F C::*field) {
  std::string key(name);
  return {key, [key, field](const Json& obj, absl::string_view, C& out) -> absl::Status {
            CNI_ASSIGN_OR_RETURN(std::optional<std::vector<std::string>> v, GetStringList(obj, key));
            if (v) out.*field = *std::move(v);
            return absl::OkStatus();
          }};
}

// Any JSON value present under `name`, handed to `parse` (which reports its
// own errors; ParseKeys puts the plugin's name in front). Absent or null
// keeps the default.
template <typename C, typename F, typename Parser>
Key<C> Custom(absl::string_view name, F C::*field, Parser parse) {
  std::string key(name);
  return {key, [key, field, parse](const Json& obj, absl::string_view, C& out) -> absl::Status {
            const Json* v = FindKey(obj, key);
            if (v == nullptr || v->is_null()) return absl::OkStatus();
            CNI_ASSIGN_OR_RETURN(out.*field, parse(*v));
            return absl::OkStatus();
          }};
}

// One key of the configuration object, as a Parsed row's parser sees it: the
// row's own name and the value under it, never the rest of the object, so a
// table cannot name one key while its parser reads another.
class Field {
 public:
  Field(const Json& obj, absl::string_view name) : obj_(obj), name_(name) {}

  // The row's key name (as the table spells it).
  absl::string_view name() const { return name_; }
  // The value, nullptr when the key is absent (null is a value here).
  const Json* value() const { return FindKey(obj_, name_); }
  // cni/json.h's typed getters for this key: nullopt when absent or null,
  // code 6 naming the key for a wrong type. A string:
  absl::StatusOr<std::optional<std::string>> AsString() const { return GetString(obj_, name_); }
  // A whole number:
  absl::StatusOr<std::optional<int64_t>> AsInt() const { return GetInt(obj_, name_); }
  // A list, as given:
  absl::StatusOr<std::optional<Json>> AsArray() const { return GetArray(obj_, name_); }

 private:
  const Json& obj_;
  absl::string_view name_;
};

// A row whose parser handles absent and null itself (the shared key parsers
// of cni/plugin/plugin_keys.h, and a plugin's own): `parse` gets the row's Field and,
// when it takes one, the plugin's name for its messages:
// `StatusOr<T>(const Field&)` or `StatusOr<T>(const Field&, string_view plugin)`.
template <typename C, typename F, typename Parser>
Key<C> Parsed(absl::string_view name, F C::*field, Parser parse) {
  std::string key(name);
  return {key, [key, field, parse](const Json& obj, absl::string_view plugin,
                                   C& out) -> absl::Status {
            const Field f(obj, key);
            if constexpr (std::is_invocable_v<Parser, const Field&, absl::string_view>) {
              CNI_ASSIGN_OR_RETURN(out.*field, parse(f, plugin));
            } else {
              CNI_ASSIGN_OR_RETURN(out.*field, parse(f));
            }
            return absl::OkStatus();
          }};
}

// The key names of `schema`, in table order (what a plugin's README lists).
template <typename C>
std::vector<std::string> KeyNames(const Schema<C>& schema) {
  std::vector<std::string> names;
  names.reserve(schema.size());
  for (const Key<C>& key : schema) names.push_back(key.name);
  return names;
}

// The rows of `schema` named `names`, in table order: the keys a plugin's
// teardown reads (its TeardownConfig), from the one table that defines them.
template <typename C, typename Names>
Schema<C> Only(const Schema<C>& schema, const Names& names) {
  Schema<C> rows;
  for (const Key<C>& key : schema) {
    for (absl::string_view name : names) {
      if (key.name == name) rows.push_back(key);
    }
  }
  return rows;
}

// Walks `schema` over `obj` in table order, stopping at the first error.
// `obj` that is not an object reads as all keys absent. Every error, code 6
// or 7, names the plugin once: "<plugin>: cannot decode ..." (NamedBy).
template <typename C>
absl::Status ParseKeys(const Json& obj, const Schema<C>& schema, absl::string_view plugin, C& out) {
  for (const Key<C>& key : schema) {
    if (absl::Status st = key.read(obj, plugin, out); !st.ok()) return NamedBy(st, plugin);
  }
  return absl::OkStatus();
}

}  // namespace cni::config

#include "cni/base/json.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "cni/base/error.h"

namespace cni {
namespace {

// The JSON type name used in messages, in the words Go's decoder uses.
absl::string_view TypeName(const Json& j) {
  switch (j.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::boolean:
      return "bool";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float:
      return "number";
    case Json::value_t::string:
      return "string";
    case Json::value_t::array:
      return "array";
    case Json::value_t::object:
      return "object";
    default:
      return "value";
  }
}

absl::Status WrongType(absl::string_view key, absl::string_view want, const Json& got) {
  return Error(ErrorCode::kDecodingFailure,
               absl::StrCat("cannot decode \"", key, "\": expected ", want, ", got ", TypeName(got)));
}

// Shared by both FindKey overloads. Go's decoder prefers the field whose name
// matches exactly and only then falls back to a case-insensitive match.
template <typename J>
J* FindKeyImpl(J& obj, absl::string_view key) {
  if (!obj.is_object()) return nullptr;
  // nlohmann's transparent lookup wants a std::string_view.
  auto exact = obj.find(std::string_view(key.data(), key.size()));
  if (exact != obj.end()) return &*exact;
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (absl::EqualsIgnoreCase(it.key(), key)) return &*it;
  }
  return nullptr;
}

// Looks up `key`; a missing key and an explicit null both mean "absent".
const Json* FindPresent(const Json& obj, absl::string_view key) {
  const Json* v = FindKey(obj, key);
  return (v == nullptr || v->is_null()) ? nullptr : v;
}

// A JSON number as int64, accepting floats that are whole and in range.
std::optional<int64_t> AsInt64(const Json& v) {
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
    return static_cast<int64_t>(u);
  }
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_float()) {
    double d = v.get<double>();
    // 2^63 is exactly representable; anything >= it does not fit.
    if (std::trunc(d) != d || d < -9223372036854775808.0 || d >= 9223372036854775808.0) {
      return std::nullopt;
    }
    return static_cast<int64_t>(d);
  }
  return std::nullopt;
}

std::optional<uint64_t> AsUint64(const Json& v) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer()) {
    int64_t i = v.get<int64_t>();
    if (i < 0) return std::nullopt;
    return static_cast<uint64_t>(i);
  }
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (std::trunc(d) != d || d < 0 || d >= 18446744073709551616.0) return std::nullopt;
    return static_cast<uint64_t>(d);
  }
  return std::nullopt;
}

// The deepest nesting of arrays and objects in `bytes` (strings skipped),
// measured before parsing so that a hostile document costs one linear scan.
size_t NestingDepth(absl::string_view bytes) {
  size_t depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : bytes) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

}  // namespace

absl::StatusOr<Json> ParseJson(absl::string_view bytes) {
  // Printing and destroying a value recurse per level; a configuration is a
  // few levels deep. Upstream's decoder refuses deep documents too (code 6).
  if (NestingDepth(bytes) > kMaxJsonDepth) {
    return Error(ErrorCode::kDecodingFailure,
                 absl::StrCat("invalid JSON: nested deeper than ", kMaxJsonDepth, " levels"));
  }
  // The one place nlohmann may throw: turn its parse error into code 6.
  try {
    return Json::parse(bytes.begin(), bytes.end());
  } catch (const Json::exception& e) {
    return Error(ErrorCode::kDecodingFailure, absl::StrCat("invalid JSON: ", e.what()));
  }
}

const Json* FindKey(const Json& obj, absl::string_view key) { return FindKeyImpl(obj, key); }
Json* FindKey(Json& obj, absl::string_view key) { return FindKeyImpl(obj, key); }

absl::StatusOr<std::optional<std::string>> GetString(const Json& obj, absl::string_view key) {
  const Json* v = FindPresent(obj, key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_string()) return WrongType(key, "string", *v);
  return v->get<std::string>();
}

absl::StatusOr<std::optional<bool>> GetBool(const Json& obj, absl::string_view key) {
  const Json* v = FindPresent(obj, key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_boolean()) return WrongType(key, "bool", *v);
  return v->get<bool>();
}

absl::StatusOr<std::optional<int64_t>> GetInt(const Json& obj, absl::string_view key) {
  const Json* v = FindPresent(obj, key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_number()) return WrongType(key, "integer", *v);
  std::optional<int64_t> i = AsInt64(*v);
  if (!i) {
    return Error(ErrorCode::kDecodingFailure,
                 absl::StrCat("cannot decode \"", key, "\": ", v->dump(), " is not a 64-bit integer"));
  }
  return i;
}

absl::StatusOr<std::optional<uint64_t>> GetUint(const Json& obj, absl::string_view key) {
  const Json* v = FindPresent(obj, key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_number()) return WrongType(key, "unsigned integer", *v);
  std::optional<uint64_t> u = AsUint64(*v);
  if (!u) {
    return Error(ErrorCode::kDecodingFailure,
                 absl::StrCat("cannot decode \"", key, "\": ", v->dump(),
                              " is not an unsigned 64-bit integer"));
  }
  return u;
}

absl::StatusOr<std::optional<std::vector<std::string>>> GetStringList(const Json& obj,
                                                                      absl::string_view key) {
  const Json* v = FindPresent(obj, key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_array()) return WrongType(key, "list of strings", *v);
  std::vector<std::string> out;
  out.reserve(v->size());
  for (const Json& item : *v) {
    if (!item.is_string()) return WrongType(key, "list of strings", item);
    out.push_back(item.get<std::string>());
  }
  return out;
}

absl::StatusOr<std::optional<Json>> GetObject(const Json& obj, absl::string_view key) {
  const Json* v = FindPresent(obj, key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_object()) return WrongType(key, "object", *v);
  return *v;
}

absl::StatusOr<std::optional<Json>> GetArray(const Json& obj, absl::string_view key) {
  const Json* v = FindPresent(obj, key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_array()) return WrongType(key, "list", *v);
  return *v;
}

std::string Dump(const Json& j) {
  // Replace invalid UTF-8 (only possible in strings built by code, since the
  // parser rejects it) instead of throwing, so printing can never fail.
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace cni

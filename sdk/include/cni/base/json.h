// JSON helpers shared by every config parser.
//
// Keys match case-insensitively, as upstream's Go decoder does (an exact match
// wins over a case-folded one). Wrong types are reported as a decoding failure
// (code 6) naming the key, never as an exception: nlohmann exceptions are caught
// at the parse boundary only (ParseJson).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace cni {

// The JSON value type of the whole SDK (nlohmann::json).
using Json = nlohmann::json;

// The deepest nesting of arrays and objects ParseJson accepts.
inline constexpr size_t kMaxJsonDepth = 512;

// Parses `bytes` as JSON. Malformed input, or input nested deeper than
// kMaxJsonDepth, is a decoding failure (code 6).
absl::StatusOr<Json> ParseJson(absl::string_view bytes);

// Finds `key` in `obj` (exact match first, then case-insensitive). Returns
// nullptr when `obj` is not an object or has no such key. A JSON null value is
// returned as a pointer to null; callers treat null like "absent" as Go does.
const Json* FindKey(const Json& obj, absl::string_view key);
// FindKey for a mutable object (to edit a value in place).
Json* FindKey(Json& obj, absl::string_view key);

// Typed getters: absent or null -> std::nullopt; wrong type -> code 6 naming
// `key`. Integers accept JSON numbers that are whole.
// A JSON string.
absl::StatusOr<std::optional<std::string>> GetString(const Json& obj, absl::string_view key);
// A JSON boolean.
absl::StatusOr<std::optional<bool>> GetBool(const Json& obj, absl::string_view key);
// A whole JSON number that fits int64_t.
absl::StatusOr<std::optional<int64_t>> GetInt(const Json& obj, absl::string_view key);
// A whole, non-negative JSON number that fits uint64_t.
absl::StatusOr<std::optional<uint64_t>> GetUint(const Json& obj, absl::string_view key);
// An array of strings (any other element type is code 6).
absl::StatusOr<std::optional<std::vector<std::string>>> GetStringList(const Json& obj,
                                                                      absl::string_view key);
// An object value, returned as it is (null/absent -> nullopt).
absl::StatusOr<std::optional<Json>> GetObject(const Json& obj, absl::string_view key);
// An array value, returned as it is (null/absent -> nullopt).
absl::StatusOr<std::optional<Json>> GetArray(const Json& obj, absl::string_view key);

// Compact serialisation used for everything we print or hand to a plugin.
std::string Dump(const Json& j);

}  // namespace cni

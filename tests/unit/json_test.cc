// JSON helpers: parse boundary, case-insensitive key lookup (Go's decoder
// rules) and the typed getters' code-6 errors.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include "cni/base/error.h"
#include "cni/base/json.h"

namespace cni {
namespace {

Json Doc(const std::string& text) {
  absl::StatusOr<Json> j = ParseJson(text);
  REQUIRE(j.ok());
  return *j;
}

// A decoding failure whose message names `key`.
void RequireDecodingFailure(const absl::Status& s, const std::string& key) {
  REQUIRE_FALSE(s.ok());
  CHECK(CodeOf(s) == 6);
  CHECK_THAT(std::string(s.message()), Catch::Contains("\"" + key + "\""));
}

}  // namespace

TEST_CASE("ParseJson accepts well-formed documents", "[json]") {
  absl::StatusOr<Json> j = ParseJson(R"({"a": [1, 2.5, "x", null, true], "b": {}})");
  REQUIRE(j.ok());
  CHECK((*j)["a"].size() == 5);
  CHECK((*j)["b"].is_object());
  CHECK(ParseJson("  42 ").ok());
}

TEST_CASE("ParseJson turns malformed JSON into code 6", "[json]") {
  for (const char* bad : {"", "{", "{\"a\":}", "{\"a\": 1,}", "[1 2]", "{} trailing", "nul",
                          "{'a': 1}", "/* comment */ {}", "{\"a\": \"\xff\"}"}) {
    INFO("input: " << bad);
    absl::StatusOr<Json> j = ParseJson(bad);
    REQUIRE_FALSE(j.ok());
    CHECK(CodeOf(j.status()) == 6);
  }
}

TEST_CASE("FindKey prefers an exact match, then matches case-insensitively", "[json]") {
  Json j = Doc(R"({"name": "exact", "NAME": "upper", "Type": "bridge"})");
  REQUIRE(FindKey(j, "name") != nullptr);
  CHECK(*FindKey(j, "name") == "exact");
  CHECK(*FindKey(j, "NAME") == "upper");
  // No exact "type": the case-folded "Type" is found.
  REQUIRE(FindKey(j, "type") != nullptr);
  CHECK(*FindKey(j, "type") == "bridge");
  CHECK(*FindKey(j, "TYPE") == "bridge");
  CHECK(FindKey(j, "missing") == nullptr);
  // Not a near miss: only case differs.
  CHECK(FindKey(j, "nam") == nullptr);
}

TEST_CASE("FindKey on non-objects returns nullptr", "[json]") {
  CHECK(FindKey(Json::array({1, 2}), "a") == nullptr);
  CHECK(FindKey(Json("str"), "a") == nullptr);
  CHECK(FindKey(Json(), "a") == nullptr);
}

TEST_CASE("FindKey returns JSON null as a null value", "[json]") {
  Json j = Doc(R"({"a": null})");
  const Json* v = FindKey(j, "a");
  REQUIRE(v != nullptr);
  CHECK(v->is_null());
}

TEST_CASE("the mutable FindKey lets callers edit in place", "[json]") {
  Json j = Doc(R"({"Mac": "aa"})");
  Json* v = FindKey(j, "mac");
  REQUIRE(v != nullptr);
  *v = "bb";
  CHECK(j["Mac"] == "bb");
}

TEST_CASE("GetString", "[json]") {
  Json j = Doc(R"({"s": "v", "n": 1, "z": null, "Mixed": "m"})");
  CHECK(GetString(j, "s")->value() == "v");
  CHECK(GetString(j, "mixed")->value() == "m");
  CHECK_FALSE(GetString(j, "missing")->has_value());
  CHECK_FALSE(GetString(j, "z")->has_value());  // null is absent, as in Go
  RequireDecodingFailure(GetString(j, "n").status(), "n");
}

TEST_CASE("GetBool", "[json]") {
  Json j = Doc(R"({"t": true, "f": false, "s": "true", "n": 0})");
  CHECK(GetBool(j, "t")->value());
  CHECK_FALSE(GetBool(j, "f")->value());
  CHECK_FALSE(GetBool(j, "absent")->has_value());
  RequireDecodingFailure(GetBool(j, "s").status(), "s");
  RequireDecodingFailure(GetBool(j, "n").status(), "n");
}

TEST_CASE("GetInt accepts whole numbers only", "[json]") {
  Json j = Doc(R"({"i": -5, "u": 9223372036854775807, "big": 9223372036854775808,
                   "whole": 3.0, "frac": 3.5, "s": "3", "huge": 1e300})");
  CHECK(GetInt(j, "i")->value() == -5);
  CHECK(GetInt(j, "u")->value() == INT64_MAX);
  CHECK(GetInt(j, "whole")->value() == 3);
  CHECK_FALSE(GetInt(j, "absent")->has_value());
  RequireDecodingFailure(GetInt(j, "big").status(), "big");
  RequireDecodingFailure(GetInt(j, "frac").status(), "frac");
  RequireDecodingFailure(GetInt(j, "s").status(), "s");
  RequireDecodingFailure(GetInt(j, "huge").status(), "huge");
}

TEST_CASE("GetUint rejects negatives", "[json]") {
  Json j = Doc(R"({"u": 18446744073709551615, "zero": 0, "neg": -1, "f": 2.0, "nf": -2.0})");
  CHECK(GetUint(j, "u")->value() == UINT64_MAX);
  CHECK(GetUint(j, "zero")->value() == 0);
  CHECK(GetUint(j, "f")->value() == 2);
  RequireDecodingFailure(GetUint(j, "neg").status(), "neg");
  RequireDecodingFailure(GetUint(j, "nf").status(), "nf");
}

TEST_CASE("GetStringList", "[json]") {
  Json j = Doc(R"({"l": ["a", "b"], "e": [], "mixed": ["a", 1], "s": "a"})");
  CHECK(GetStringList(j, "l")->value() == std::vector<std::string>{"a", "b"});
  CHECK(GetStringList(j, "e")->value().empty());
  CHECK_FALSE(GetStringList(j, "absent")->has_value());
  RequireDecodingFailure(GetStringList(j, "mixed").status(), "mixed");
  RequireDecodingFailure(GetStringList(j, "s").status(), "s");
}

TEST_CASE("GetObject and GetArray return values as they are", "[json]") {
  Json j = Doc(R"({"o": {"k": [1]}, "a": [{"x": 1}], "n": null, "s": "x"})");
  CHECK(GetObject(j, "o")->value() == Doc(R"({"k": [1]})"));
  CHECK(GetArray(j, "a")->value().size() == 1);
  CHECK_FALSE(GetObject(j, "n")->has_value());
  CHECK_FALSE(GetArray(j, "n")->has_value());
  RequireDecodingFailure(GetObject(j, "s").status(), "s");
  RequireDecodingFailure(GetObject(j, "a").status(), "a");
  RequireDecodingFailure(GetArray(j, "o").status(), "o");
}

TEST_CASE("Dump is compact and never throws", "[json]") {
  CHECK(Dump(Doc(R"({ "b" : [1, 2], "a" : "x" })")) == R"({"a":"x","b":[1,2]})");
  // A string built in code with invalid UTF-8 is replaced, not thrown on.
  Json bad = std::string("a\xff" "b");
  std::string out;
  REQUIRE_NOTHROW(out = Dump(bad));
  CHECK(out.front() == '"');
}

TEST_CASE("Dump round-trips through ParseJson", "[json]") {
  Json j = Doc(R"({"k": {"nested": [true, false, null, -1, 1.5, "\u00e9\n"]}})");
  absl::StatusOr<Json> again = ParseJson(Dump(j));
  REQUIRE(again.ok());
  CHECK(*again == j);
}

}  // namespace cni

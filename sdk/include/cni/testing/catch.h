// cni::testing (the plugin author's test kit): the Catch2 (v2) part, header
// only, so the kit's library does not depend on the test framework's build.
//
//   CHECK_THAT(plugin.Add(bad_conf), IsCniError(7, "routes"));
//   cni::Result r = MustResult(plugin.Add(conf));        // REQUIREs success
//   CHECK_THAT(r, HasInterface("eth0") && HasRoute("192.0.2.0/24", "10.1.0.1"));
//   CHECK_THAT(r, MatchesGolden(kGoldenDir, "add"));     // every version's file
#pragma once

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cni/base/json.h"
#include "cni/protocol/types.h"
#include "cni/protocol/version.h"
#include "cni/testing/call.h"
#include "cni/testing/golden.h"

namespace cni::testing {

// --- Calls ------------------------------------------------------------------

namespace detail {
class SucceededMatcher : public Catch::MatcherBase<RunResult> {
 public:
  bool match(const RunResult& r) const override { return r.exit_code == 0; }
  std::string describe() const override { return "succeeded (exit status 0)"; }
};
}  // namespace detail

// Exit status 0.
inline detail::SucceededMatcher Succeeded() { return {}; }

namespace detail {
class CniErrorMatcher : public Catch::MatcherBase<RunResult> {
 public:
  CniErrorMatcher(int code, std::string msg_contains) : code_(code), msg_(std::move(msg_contains)) {}
  bool match(const RunResult& r) const override {
    if (r.exit_code == 0 || ErrorCode(r) != code_) return false;
    Json j = Json::parse(r.out, nullptr, false);
    return j["msg"].is_string() && j["msg"].get<std::string>().find(msg_) != std::string::npos;
  }
  std::string describe() const override {
    return absl::StrCat("is CNI error code ", code_, msg_.empty() ? "" : " with a message containing \"",
                        msg_, msg_.empty() ? "" : "\"");
  }

 private:
  int code_;
  std::string msg_;
};
}  // namespace detail

// A CNI error as the spec prescribes it: a non-zero exit status and an error
// document on stdout with `code` and a "msg" containing `msg_contains`.
inline detail::CniErrorMatcher IsCniError(int code, std::string msg_contains = "") {
  return detail::CniErrorMatcher(code, std::move(msg_contains));
}

// REQUIREs exit status 0, reporting `what` (when given) and the call if not.
inline void MustSucceed(const RunResult& r, absl::string_view what = {}) {
  INFO((what.empty() ? "" : absl::StrCat(what, ": ")) << Describe(r));
  REQUIRE(r.exit_code == 0);
}

// MustSucceed, then REQUIREs stdout to parse as a CNI result, and returns it.
inline Result MustResult(const RunResult& r) {
  MustSucceed(r);
  absl::StatusOr<Result> res = ParseResult(absl::string_view(r.out));
  INFO(res.status().ToString() << " in " << r.out);
  REQUIRE(res.ok());
  return *res;
}

// The same for a runtime library call (cni/runtime/runtime.h) that returned a document.
inline Result MustResult(const absl::StatusOr<Json>& j) {
  INFO((j.ok() ? std::string() : j.status().ToString()));
  REQUIRE(j.ok());
  absl::StatusOr<Result> res = ParseResult(*j);
  INFO(res.status().ToString() << " in " << j->dump());
  REQUIRE(res.ok());
  return *res;
}

// --- Results ----------------------------------------------------------------

namespace detail {
class HasInterfaceMatcher : public Catch::MatcherBase<Result> {
 public:
  HasInterfaceMatcher(std::string name, std::string sandbox) : name_(std::move(name)), sandbox_(std::move(sandbox)) {}
  bool match(const Result& r) const override {
    for (const Interface& i : r.interfaces) {
      if (i.name == name_ && (sandbox_.empty() || i.sandbox == sandbox_)) return true;
    }
    return false;
  }
  std::string describe() const override {
    return absl::StrCat("has interface ", name_, sandbox_.empty() ? "" : " in ", sandbox_);
  }

 private:
  std::string name_, sandbox_;
};
}  // namespace detail

// An interface named `name` (in sandbox `sandbox`, when given).
inline detail::HasInterfaceMatcher HasInterface(std::string name, std::string sandbox = "") {
  return detail::HasInterfaceMatcher(std::move(name), std::move(sandbox));
}

namespace detail {
class HasIpMatcher : public Catch::MatcherBase<Result> {
 public:
  HasIpMatcher(std::string address, std::string gateway, std::string ifname)
      : address_(std::move(address)), gateway_(std::move(gateway)), ifname_(std::move(ifname)) {}
  bool match(const Result& r) const override {
    for (const IpConfig& ip : r.ips) {
      if (ip.address.ToString() != address_) continue;
      if (!gateway_.empty() && (!ip.gateway || ip.gateway->ToString() != gateway_)) continue;
      if (!ifname_.empty()) {
        if (!ip.interface || *ip.interface < 0 || static_cast<size_t>(*ip.interface) >= r.interfaces.size()) continue;
        if (r.interfaces[static_cast<size_t>(*ip.interface)].name != ifname_) continue;
      }
      return true;
    }
    return false;
  }
  std::string describe() const override {
    return absl::StrCat("has IP ", address_, gateway_.empty() ? "" : " gateway ", gateway_,
                        ifname_.empty() ? "" : " on ", ifname_);
  }

 private:
  std::string address_, gateway_, ifname_;
};
}  // namespace detail

// An IP "addr/len" (with gateway `gateway`, and on interface `ifname`, when given).
inline detail::HasIpMatcher HasIp(std::string address, std::string gateway = "", std::string ifname = "") {
  return detail::HasIpMatcher(std::move(address), std::move(gateway), std::move(ifname));
}

namespace detail {
class HasRouteMatcher : public Catch::MatcherBase<Result> {
 public:
  HasRouteMatcher(std::string dst, std::string gw) : dst_(std::move(dst)), gw_(std::move(gw)) {}
  bool match(const Result& r) const override {
    for (const Route& route : r.routes) {
      if (route.dst.ToString() != dst_) continue;
      if (gw_ == "-" && route.gw) continue;
      if (!gw_.empty() && gw_ != "-" && (!route.gw || route.gw->ToString() != gw_)) continue;
      return true;
    }
    return false;
  }
  std::string describe() const override {
    return absl::StrCat("has a route to ", dst_, gw_.empty() ? "" : gw_ == "-" ? " without a gateway" : " via ",
                        gw_ == "-" ? "" : gw_);
  }

 private:
  std::string dst_, gw_;
};
}  // namespace detail

// A route to `dst` (via `gw` when given; "-" requires no gateway).
inline detail::HasRouteMatcher HasRoute(std::string dst, std::string gw = "") {
  return detail::HasRouteMatcher(std::move(dst), std::move(gw));
}

namespace detail {
class GoldenMatcher : public Catch::MatcherBase<Result> {
 public:
  GoldenMatcher(std::filesystem::path dir, std::string name, GoldenOptions options)
      : dir_(std::move(dir)), name_(std::move(name)), options_(std::move(options)) {}
  bool match(const Result& r) const override {
    problems_ = CompareGolden(r, dir_, name_, options_);
    return problems_.empty();
  }
  std::string describe() const override {
    std::string what = absl::StrCat("matches the golden files ", (dir_ / name_).string(), "@<version>.json");
    if (!problems_.empty()) absl::StrAppend(&what, ":\n", absl::StrJoin(problems_, "\n"));
    return what;
  }

 private:
  std::filesystem::path dir_;
  std::string name_;
  GoldenOptions options_;
  mutable std::vector<std::string> problems_;  // of the last match, for describe()
};
}  // namespace detail

// The result printed at every version equals the golden files (golden.h).
inline detail::GoldenMatcher MatchesGolden(std::filesystem::path dir, std::string name, GoldenOptions options = {}) {
  return detail::GoldenMatcher(std::move(dir), std::move(name), std::move(options));
}

}  // namespace cni::testing

// How Catch prints a call and a result in a failed assertion.
namespace Catch {
// A call as cni::testing::Describe prints it: exit status, stdout, stderr.
template <>
struct StringMaker<cni::testing::RunResult> {
  // Describe(r).
  static std::string convert(const cni::testing::RunResult& r) { return cni::testing::Describe(r); }
};
// A result as its 1.1.0 JSON.
template <>
struct StringMaker<cni::Result> {
  // The JSON text, or why the result cannot be printed.
  static std::string convert(const cni::Result& r) {
    absl::StatusOr<cni::Json> j = cni::ResultToJson(r, cni::kCurrentVersion);
    return j.ok() ? j->dump() : j.status().ToString();
  }
};
}  // namespace Catch

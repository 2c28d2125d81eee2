// The outcome of every check, printed as a table or as JSON.
#pragma once

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "cni/base/json.h"

namespace conformance {

// What one check found. kKnownFail: failed, and expected to (--xfail).
enum class Outcome { kPass, kFail, kSkip, kKnownFail };

// "pass", "fail", "skip" or "xfail".
absl::string_view OutcomeName(Outcome o);

// One row of the report.
struct CheckRecord {
  std::string name;    // what was checked ("ADD 1.0.0: result valid")
  Outcome outcome = Outcome::kPass;
  std::string detail;  // why it failed or was skipped, or what was seen
};

// The rows, in the order the checks ran.
class Report {
 public:
  // Checks whose name matches one of `patterns` (ECMAScript regular
  // expressions, searched) are known to fail: a failure is recorded as
  // kKnownFail, and a pass as a failure (the list must stay true).
  void ExpectFailures(std::vector<std::string> patterns) { xfail_ = std::move(patterns); }
  // Records a check.
  void Add(std::string name, Outcome outcome, std::string detail = {});
  // Pass when `failures` is empty, else fail with them joined by "; ".
  void Expect(std::string name, const std::vector<std::string>& failures, std::string pass_detail = {});

  // The rows so far.
  const std::vector<CheckRecord>& rows() const { return rows_; }
  // Number of rows with outcome `o`.
  int Count(Outcome o) const;
  // True when no row failed (known failures do not count).
  bool Passed() const { return Count(Outcome::kFail) == 0; }

  // A fixed-width table with a summary line; details longer than
  // `detail_width` are cut (the JSON has them whole).
  std::string Table(size_t detail_width = 100) const;
  // {"plugin", "config", "checks": [{"name","result","detail"}],
  //  "summary": {"pass","fail","skip","xfail"}}.
  cni::Json ToJson(absl::string_view plugin, absl::string_view config) const;

 private:
  std::vector<CheckRecord> rows_;
  std::vector<std::string> xfail_;
};

}  // namespace conformance

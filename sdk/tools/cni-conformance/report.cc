#include "report.h"

#include <algorithm>
#include <regex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"

namespace conformance {

absl::string_view OutcomeName(Outcome o) {
  switch (o) {
    case Outcome::kPass:
      return "pass";
    case Outcome::kFail:
      return "fail";
    case Outcome::kSkip:
      return "skip";
    case Outcome::kKnownFail:
      return "xfail";
  }
  return "?";
}

void Report::Add(std::string name, Outcome outcome, std::string detail) {
  for (const std::string& pattern : xfail_) {
    if (!std::regex_search(name, std::regex(pattern))) continue;
    if (outcome == Outcome::kFail) {
      outcome = Outcome::kKnownFail;
    } else if (outcome == Outcome::kPass) {
      outcome = Outcome::kFail;
      detail = absl::StrCat("passes, but --xfail \"", pattern, "\" says it fails: drop it. ", detail);
    }
    break;
  }
  rows_.push_back({std::move(name), outcome, std::move(detail)});
}

void Report::Expect(std::string name, const std::vector<std::string>& failures, std::string pass_detail) {
  if (failures.empty()) {
    Add(std::move(name), Outcome::kPass, std::move(pass_detail));
  } else {
    Add(std::move(name), Outcome::kFail, absl::StrJoin(failures, "; "));
  }
}

int Report::Count(Outcome o) const {
  return static_cast<int>(std::count_if(rows_.begin(), rows_.end(), [o](const CheckRecord& r) { return r.outcome == o; }));
}

std::string Report::Table(size_t detail_width) const {
  size_t name_width = 5;
  for (const CheckRecord& r : rows_) name_width = std::max(name_width, r.name.size());
  std::string out = absl::StrCat("CHECK", std::string(name_width - 5 + 2, ' '), "RESULT  DETAIL\n");
  for (const CheckRecord& r : rows_) {
    std::string detail = absl::StrReplaceAll(r.detail, {{"\n", " "}});
    if (detail.size() > detail_width) detail = detail.substr(0, detail_width - 3) + "...";
    absl::StrAppend(&out, r.name, std::string(name_width - r.name.size() + 2, ' '), OutcomeName(r.outcome),
                    std::string(8 - OutcomeName(r.outcome).size(), ' '), detail, "\n");
  }
  absl::StrAppend(&out, Count(Outcome::kPass), " passed, ", Count(Outcome::kFail), " failed, ",
                  Count(Outcome::kSkip), " skipped");
  if (int known = Count(Outcome::kKnownFail); known != 0) absl::StrAppend(&out, ", ", known, " known failures");
  out += "\n";
  return out;
}

cni::Json Report::ToJson(absl::string_view plugin, absl::string_view config) const {
  cni::Json checks = cni::Json::array();
  for (const CheckRecord& r : rows_) {
    checks.push_back({{"name", r.name}, {"result", std::string(OutcomeName(r.outcome))}, {"detail", r.detail}});
  }
  return {{"plugin", std::string(plugin)},
          {"config", std::string(config)},
          {"checks", std::move(checks)},
          {"summary",
           {{"pass", Count(Outcome::kPass)}, {"fail", Count(Outcome::kFail)}, {"skip", Count(Outcome::kSkip)},
            {"xfail", Count(Outcome::kKnownFail)}}}};
}

}  // namespace conformance

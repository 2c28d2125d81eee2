#include "cni/fw/validate.h"

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"

namespace cni::fw {
namespace {

absl::Status Bad(absl::string_view what, absl::string_view why) {
  return Error(ErrorCode::kInvalidNetworkConfig, absl::StrCat("invalid ", what, ": ", why));
}

}  // namespace

absl::Status ValidateRuleText(absl::string_view what, absl::string_view text) {
  if (text.empty()) return Bad(what, "empty");
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f) return Bad(what, "control or non-ASCII character (newlines are refused)");
    // ';' and newline end a command in an nft script; '#' starts a comment;
    // quotes and backslashes would change how a restore line is split.
    if (c == ';' || c == '#' || c == '"' || c == '\'' || c == '\\' || c == '`') {
      return Bad(what, absl::StrCat("character '", std::string(1, c), "' is not allowed"));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateRuleTexts(absl::string_view what, const std::vector<std::string>& texts) {
  for (size_t i = 0; i < texts.size(); ++i) {
    if (absl::Status st = ValidateRuleText(absl::StrCat(what, "[", i, "]"), texts[i]); !st.ok()) return st;
  }
  return absl::OkStatus();
}

namespace {
absl::Status ValidateChars(absl::string_view what, absl::string_view s, size_t max, absl::string_view extra) {
  if (s.empty() || s.size() > max) return Bad(what, absl::StrCat("length must be 1-", max));
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              extra.find(c) != absl::string_view::npos;
    if (!ok) return Bad(what, absl::StrCat("character '", std::string(1, c), "' is not allowed"));
  }
  return absl::OkStatus();
}
}  // namespace

absl::Status ValidateChainName(absl::string_view what, absl::string_view name) {
  return ValidateChars(what, name, 28, "_.-");
}

absl::Status ValidateIdentifier(absl::string_view what, absl::string_view name) {
  return ValidateChars(what, name, 200, "_.@:-");
}

}  // namespace cni::fw

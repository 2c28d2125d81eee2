// Checks on anything that ends up inside a rule, done before any batch is
// built (DESIGN rule 3). Batches are text (nft scripts, iptables-restore
// input), so a value carrying a newline or ';' could smuggle in a command:
// such values are refused with code 7.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace cni::fw {

// One iptables argument or nft expression word list: printable ASCII only,
// no newline, ';', '#', quotes, backslash or backtick. `what` names it in the
// error ("conditionsV4[2]").
absl::Status ValidateRuleText(absl::string_view what, absl::string_view text);
// ValidateRuleText for each element, named `what`[i]; the first failure is returned.
absl::Status ValidateRuleTexts(absl::string_view what, const std::vector<std::string>& texts);
// An iptables chain name: 1-28 of [A-Za-z0-9_.-] (what we create and jump to).
absl::Status ValidateChainName(absl::string_view what, absl::string_view name);
// An nft identifier or interface name we quote: 1-200 of [A-Za-z0-9_.@:-].
absl::Status ValidateIdentifier(absl::string_view what, absl::string_view name);

}  // namespace cni::fw

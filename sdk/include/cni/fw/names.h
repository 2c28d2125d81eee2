// Names and comments shared with upstream (pkg/utils), so a node can switch
// between upstream's plugins and ours without leaking rules (DESIGN rule 10).
#pragma once

#include <string>

#include "absl/strings/string_view.h"

namespace cni::fw {

// "CNI-" + prefix + hex(sha512(name + id)), cut to 28 characters (iptables'
// chain-name limit): upstream's MustFormatChainNameWithPrefix.
std::string ChainName(absl::string_view name, absl::string_view id, absl::string_view prefix = "");
// `name: "<name>" id: "<id>"` (Go's %q quoting): upstream's FormatComment.
std::string Comment(absl::string_view name, absl::string_view id);

}  // namespace cni::fw

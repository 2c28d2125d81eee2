// How messages name an object: in double quotes, as upstream's errors do
// (`creating veth "veth1a2b3c4d": file exists`).
#pragma once

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace cni {

// `name` in double quotes, for error messages.
inline std::string Quoted(absl::string_view name) { return absl::StrCat("\"", name, "\""); }

}  // namespace cni

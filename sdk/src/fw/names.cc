#include "cni/fw/names.h"

#include "absl/strings/str_cat.h"
#include "cni/base/hash.h"

namespace cni::fw {
namespace {

// Go's %q for the strings we meet (IDs and names are printable ASCII; other
// bytes are escaped the way strconv.Quote does for ASCII).
std::string GoQuote(absl::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      static const char* kHex = "0123456789abcdef";
      out += "\\x";
      out += kHex[(static_cast<unsigned char>(c) >> 4) & 0xf];
      out += kHex[static_cast<unsigned char>(c) & 0xf];
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

// `s` without quotes, backslashes and control characters: safe inside nft's
// quoted comment.
std::string CommentSafe(absl::string_view s) {
  std::string out;
  for (char c : s) {
    if (c != '"' && c != '\\' && static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out;
}

constexpr size_t kNftCommentMax = 128;  // knftables.CommentLengthMax

}  // namespace

std::string ChainName(absl::string_view name, absl::string_view id, absl::string_view prefix) {
  return HashWithPrefix(28, absl::StrCat("CNI-", prefix), absl::StrCat(name, id));
}

std::string Comment(absl::string_view name, absl::string_view id) {
  return absl::StrCat("name: ", GoQuote(name), " id: ", GoQuote(id));
}

std::string NetworkHash(absl::string_view network) { return HashWithPrefix(16, "", network); }

std::string AttachmentHash(absl::string_view network, absl::string_view instance) {
  return absl::StrCat(NetworkHash(network), "-", HashWithPrefix(16, "", instance));
}

std::string NativeComment(absl::string_view hash,
                          std::initializer_list<std::pair<absl::string_view, absl::string_view>> fields) {
  std::string c(hash);
  for (const auto& [label, value] : fields) absl::StrAppend(&c, ", ", label, ": ", CommentSafe(value));
  if (c.size() > kNftCommentMax) c.resize(kNftCommentMax);
  return c;
}

}  // namespace cni::fw

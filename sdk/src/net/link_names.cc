#include "link_names.h"

#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/quoted.h"
#include "cni/net/link.h"

namespace cni::net::internal {

std::optional<std::string> LinkName(NetlinkSocket& sock, int ifindex) {
  absl::StatusOr<LinkInfo> link = LinkByIndex(sock, ifindex);
  if (!link.ok()) return std::nullopt;
  return link->name;
}

absl::Status NameLinks(const absl::Status& failed, absl::string_view what,
                       const std::function<std::string()>& named) {
  if (failed.ok() || !absl::StartsWith(failed.message(), what)) return failed;
  return WithMessage(failed, absl::StrCat(named(), failed.message().substr(what.size())));
}

absl::Status TransactNamingLinks(NetlinkSocket& sock, nl_msg* msg, const std::string& what) {
  return NameLinks(sock.Transact(msg, what), what, [&] {
    static constexpr std::string_view kMark = "link #";
    std::string out;
    size_t from = 0;
    for (size_t at = what.find(kMark); at != std::string::npos; at = what.find(kMark, from)) {
      size_t end = at + kMark.size();
      while (end < what.size() && absl::ascii_isdigit(static_cast<unsigned char>(what[end]))) ++end;
      int ifindex = 0;
      std::optional<std::string> name;
      if (absl::SimpleAtoi(what.substr(at + kMark.size(), end - at - kMark.size()), &ifindex)) {
        name = LinkName(sock, ifindex);
      }
      absl::StrAppend(&out, what.substr(from, at - from), name ? Quoted(*name) : what.substr(at, end - at));
      from = end;
    }
    absl::StrAppend(&out, what.substr(from));
    return out;
  });
}

}  // namespace cni::net::internal

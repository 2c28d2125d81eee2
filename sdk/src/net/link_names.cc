#include "link_names.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
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

}  // namespace cni::net::internal

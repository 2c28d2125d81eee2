#include "cni/fw/backend.h"

#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"

namespace cni::fw {

Backend DefaultBackend() {
  // Upstream asks exec.LookPath("iptables"); these are the places Debian and
  // every other distribution put it.
  for (const char* p : {"/usr/sbin/iptables", "/sbin/iptables", "/usr/bin/iptables", "/bin/iptables"}) {
    if (access(p, X_OK) == 0) return Backend::kIptables;
  }
  return Backend::kNftables;
}

absl::StatusOr<Backend> SelectBackend(absl::string_view configured) {
  if (configured.empty()) return DefaultBackend();
  if (configured == "iptables") return Backend::kIptables;
  if (configured == "nftables") return Backend::kNftables;
  return Error(ErrorCode::kInvalidNetworkConfig,
               absl::StrCat("unknown firewall backend \"", configured, "\" (want \"iptables\" or \"nftables\")"));
}

const char* BackendName(Backend b) { return b == Backend::kIptables ? "iptables" : "nftables"; }

}  // namespace cni::fw

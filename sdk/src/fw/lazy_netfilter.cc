#include "cni/base/status_macros.h"
#include "cni/fw/nft.h"

namespace cni::fw {

absl::StatusOr<net::NetlinkSocket*> LazyNetfilter::Get() {
  if (!nl_.has_value()) {
    CNI_ASSIGN_OR_RETURN(nl_, nft::OpenSocket());
  }
  return &*nl_;
}

}  // namespace cni::fw

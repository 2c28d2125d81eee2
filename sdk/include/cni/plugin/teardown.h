// DEL's (and GC's) common steps: go on past a failure and report them all,
// and release the IPAM address first.
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "cni/protocol/skel.h"

namespace cni {

// The failures of a DEL or GC that keeps going past each one.
class Failures {
 public:
  // Keeps `st` when it failed, with `context` in front when given.
  void Keep(const absl::Status& st, absl::string_view context = {});
  // All of them in one status (JoinErrors): OK when none failed.
  absl::Status Joined() const;

 private:
  std::vector<absl::Status> failures_;
};

// DEL's first step: IPAM DEL when `ipam_type` is set, whatever the
// namespace's state, so that a namespace already gone does not leak the
// address. A failure a retry may get past (IpamDelMayFinishOnRetry) is
// returned: DEL stops there and keeps the interface for that retry, whose
// IPAM DEL may need it (dhcp releases through it). Any other failure joins
// `failures` and DEL goes on. Messages: "<plugin>: releasing the IPAM address: ...".
absl::Status ReleaseIpamFirst(const CmdArgs& args, absl::string_view ipam_type, absl::string_view plugin,
                              Failures& failures);

}  // namespace cni

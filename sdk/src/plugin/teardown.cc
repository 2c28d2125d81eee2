#include "cni/plugin/teardown.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/protocol/invoke.h"

namespace cni {

void Failures::Keep(const absl::Status& st, absl::string_view context) {
  if (st.ok()) return;
  failures_.push_back(context.empty() ? st : Annotate(st, context));
}

absl::Status Failures::Joined() const { return JoinErrors(failures_); }

absl::Status ReleaseIpamFirst(const CmdArgs& args, absl::string_view ipam_type, absl::string_view plugin,
                              Failures& failures) {
  if (ipam_type.empty()) return absl::OkStatus();
  absl::Status st = DelegateDel(ipam_type, args);
  const std::string context = absl::StrCat(plugin, ": releasing the IPAM address");
  if (IpamDelMayFinishOnRetry(st)) return Annotate(st, context);
  failures.Keep(st, context);
  return absl::OkStatus();
}

}  // namespace cni

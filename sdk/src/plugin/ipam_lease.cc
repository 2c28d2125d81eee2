#include "cni/plugin/ipam_lease.h"

#include <utility>

#include "cni/base/error.h"
#include "cni/protocol/invoke.h"
#include "cni/protocol/version.h"

namespace cni {

absl::StatusOr<IpamLease> IpamLease::Acquire(const CmdArgs& args, absl::string_view type,
                                             absl::string_view conf_bytes) {
  absl::StatusOr<Result> result = DelegateAdd(type, args, conf_bytes);
  if (!result.ok()) {
    // An IPAM plugin that died without answering (killed, crashed, timed
    // out) may have taken an address all the same (the dhcp daemon finishes
    // an ADD whose plugin is gone). Release it now, while the interface it
    // may need for that is still there: the runtime's DEL comes after the
    // ADD's rollback has removed it.
    if (CodeOf(result.status()) == static_cast<int>(ErrorCode::kInternal) &&
        ErrorDocumentOf(result.status()).empty()) {
      (void)DelegateDel(type, args, conf_bytes);
    }
    return result.status();
  }
  return IpamLease(args, std::string(type), std::string(conf_bytes), *std::move(result));
}

IpamLease::IpamLease(IpamLease&& other) noexcept
    : args_(std::exchange(other.args_, nullptr)),
      type_(std::move(other.type_)),
      conf_bytes_(std::move(other.conf_bytes_)),
      result_(std::move(other.result_)) {}

IpamLease::~IpamLease() {
  // Best effort: the ADD is failing already, and its error is the one to report.
  if (args_ != nullptr) (void)DelegateDel(type_, *args_, conf_bytes_);
}

absl::Status IpamLease::RequireAddresses() const {
  if (!result_.ips.empty()) return absl::OkStatus();
  return Error(ErrorCode::kInvalidNetworkConfig, "IPAM plugin returned missing IP config");
}

absl::Status IpamLease::Commit(const Result& final_result) {
  if (args_ == nullptr) return absl::OkStatus();
  if (absl::Status st = CheckPrintableAt(final_result, args_->conf); !st.ok()) {
    return Annotate(st, "IPAM result");
  }
  Keep();
  return absl::OkStatus();
}

void IpamLease::CopyInto(Result& result, int interface_index) const {
  result.ips = result_.ips;
  for (IpConfig& ip : result.ips) ip.interface = interface_index;
  result.routes = result_.routes;
  result.dns = result_.dns;
}

}  // namespace cni

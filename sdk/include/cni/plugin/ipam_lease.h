// An address lease from the configuration's IPAM plugin, released unless the
// ADD that took it succeeds: the "delegate ADD, register its rollback, check
// the result is printable" steps every interface plugin takes (DESIGN rule 7).
//
//   ASSIGN_OR_RETURN(IpamLease lease, IpamLease::Acquire(args, config.ipam_type));
//   RETURN_IF_ERROR(lease.RequireAddresses());
//   Result result = ...;                  // built from lease.result()
//   RETURN_IF_ERROR(lease.Commit(result));  // last step of ADD
//   return result;
//
// Every return before Commit, on error or not, sends DEL to the IPAM plugin.
#pragma once

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"

namespace cni {

// Move-only: one owner releases.
class IpamLease {
 public:
  // Delegates ADD to the IPAM plugin `type` with `conf_bytes` (default: the
  // caller's own configuration). The IPAM plugin's error passes through as it
  // printed it; one that died without printing one gets an IPAM DEL at once
  // (it may have allocated). `args` must outlive the lease (it is the
  // handler's CmdArgs).
  static absl::StatusOr<IpamLease> Acquire(const CmdArgs& args, absl::string_view type,
                                           absl::string_view conf_bytes = {});

  IpamLease(IpamLease&& other) noexcept;
  IpamLease& operator=(IpamLease&&) = delete;
  IpamLease(const IpamLease&) = delete;
  IpamLease& operator=(const IpamLease&) = delete;
  // Releases the lease (IPAM DEL) unless Commit or Keep succeeded.
  ~IpamLease();

  // The IPAM plugin's result, as it returned it (the plugin may edit its copy).
  const Result& result() const { return result_; }
  Result& result() { return result_; }  // the same, to edit in place

  // Code 7 "IPAM plugin returned missing IP config" when the result holds no
  // address (an interface plugin cannot configure an interface without one).
  absl::Status RequireAddresses() const;

  // Copies the lease's addresses (each pointing at interface
  // `interface_index` of `result`), routes and DNS into `result`: what an
  // interface plugin reports for the one interface it configured.
  void CopyInto(Result& result, int interface_index) const;

  // The last step of ADD: checks that `final_result` can be printed at the
  // configuration's cniVersion (skel prints it only after the handler
  // returns, when no rollback could run any more) and, if so, keeps the lease.
  absl::Status Commit(const Result& final_result);

  // Keeps the lease without a check (a plugin that returns no result of its own).
  void Keep() { args_ = nullptr; }

 private:
  IpamLease(const CmdArgs& args, std::string type, std::string conf_bytes, Result result)
      : args_(&args), type_(std::move(type)), conf_bytes_(std::move(conf_bytes)),
        result_(std::move(result)) {}

  const CmdArgs* args_;  // null once kept (or moved from)
  std::string type_;
  std::string conf_bytes_;
  Result result_;
};

}  // namespace cni

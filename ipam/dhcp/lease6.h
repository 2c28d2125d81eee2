// One attachment's DHCPv6 lease (RFC 8415, one IA_NA): acquired on ADD
// (SOLICIT/ADVERTISE/REQUEST/REPLY, or SOLICIT/REPLY when the server does
// Rapid Commit) together with the link's router advertisement, kept by a
// maintenance thread (RENEW at T1, REBIND at T2), released (RELEASE) on DEL.
// Like the IPv4 Lease, it holds no socket or namespace between exchanges.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client6.h"
#include "lease.h"
#include "packet6.h"

namespace cni::dhcp {

// The CNI result of an IPv6 lease: the address with the prefix length of the
// RA's on-link prefix that contains it (/128 when none does), the router as
// gateway and a default route via it when the RA names it a default router
// (router lifetime > 0), a route via it for each RFC 4191 route with a
// non-zero lifetime, DNS servers (23) and search list (24) of the REPLY.
Result ResultFromLease6(const net::IpAddress& addr, const RouterAdvert& ra, const v6::Message& reply, int priority);

// T1, T2 and expiry of an IA address: T1/T2 of the IA, or (when the server
// leaves them 0) half and 80 % of the preferred lifetime (RFC 8415 21.4);
// expiry at the valid lifetime. An infinite (0xffffffff) time is ten years.
LeaseTimes TimesOf6(uint32_t t1, uint32_t t2, const v6::IaAddress& addr, absl::Time bound_at);

// The IAID of the attachment: stable for it (a hash of its client id).
uint32_t IaidOf(const LeaseSpec& spec);

class Lease6 : public LeaseBase {
 public:
  Lease6(LeaseSpec spec, Timing timing, std::function<void()> on_change);
  ~Lease6() override;
  Lease6(const Lease6&) = delete;
  Lease6& operator=(const Lease6&) = delete;

  absl::Status Acquire(absl::Time deadline) override;
  // Takes over a record of ToJson() after a restart and renews it at once.
  absl::Status Resume(const Json& record);
  absl::Status Stop(bool release) override;
  void Cancel() override;
  const LeaseSpec& spec() const override { return spec_; }
  State state() const override;
  absl::StatusOr<Result> CurrentResult() const override;
  Json ToJson() const override;
  int renewals() const override;

 private:
  struct Bound {
    v6::Message reply;
    std::string server_id;
    v6::IaAddress addr;
    uint32_t t1 = 0, t2 = 0;
    RouterAdvert ra;
    absl::Time bound_at;
  };
  v6::Message NewMessage(v6::MessageType type) const;
  // The REPLY's usable address for our IA, or an error naming the status.
  absl::StatusOr<Bound> BoundOf(const v6::Message& reply, const RouterAdvert& ra) const;
  absl::StatusOr<Bound> Solicit(Conn6& conn, absl::Time deadline);
  // RENEW (or REBIND) of the bound address; a REPLY whose IA says
  // NoBinding (the server lost it) is followed by a REQUEST for it.
  absl::StatusOr<Bound> Renew(Conn6& conn, absl::Time deadline, bool rebind);
  // True when `reply` has our IA with status NoBinding.
  bool NoBinding(const v6::Message& reply) const;
  absl::Status SendRelease();
  void ReleaseOnce(Conn6& conn, const std::string& server_id, const net::IpAddress& addr);
  void Decline(Conn6& conn, const std::string& server_id, const net::IpAddress& addr);
  void Commit(Bound b, bool notify);
  void Maintain(bool renew_now);
  void Log(absl::string_view msg) const;
  bool Pause(absl::Duration d);

  const LeaseSpec spec_;
  const Timing timing_;
  const std::function<void()> on_change_;
  UniqueFd cancel_;
  std::string duid_;  // set on Acquire/Resume, then constant
  const uint32_t iaid_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  State state_ = State::kBound;
  std::optional<Bound> bound_;
  int renewals_ = 0;
  std::thread thread_;
};

}  // namespace cni::dhcp

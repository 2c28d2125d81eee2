// One attachment's DHCP lease: acquired on ADD (DISCOVER/OFFER/REQUEST/ACK),
// then kept by a maintenance thread of its own (renew at T1 by unicast to the
// server, rebind at T2 by a fresh broadcast exchange, as upstream; link down
// when the lease expires unrenewed), released (DHCPRELEASE) on DEL.
//
// Between exchanges a lease holds no socket and no namespace reference: each
// exchange opens the namespace by path, so a container whose namespace is gone
// is noticed (the lease is forgotten) and never kept alive by the daemon.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client.h"
#include "cni/base/fs.h"
#include "cni/base/json.h"
#include "cni/protocol/types.h"
#include "packet.h"

namespace cni::dhcp {

// What identifies an attachment and what its client sends.
struct LeaseSpec {
  std::string container_id;
  std::string network;
  std::string ifname;
  std::string netns;  // absolute path (the daemon's -hostprefix applied)
  // Option 55's codes ("request"; default: routers, subnet-mask and the ones the result reads).
  std::string parameter_list;
  // "provide": options sent as given (they replace the client's own, e.g. 61).
  std::vector<std::pair<uint8_t, std::string>> provide;
  int priority = 0;  // route metric in the result, 0: none
  // "family": which leases the attachment has (IPv4, IPv6 or both).
  bool v4 = true;
  bool v6 = false;
  // DHCPv6: the client's DUID ("provide" of dhcp6.client-id; empty: DUID-LL
  // of the interface's MAC address), the options to ask for (option 6, after
  // 23 and 24) and the options sent as given (e.g. 39, the FQDN).
  std::string duid;
  std::vector<uint16_t> request6;
  std::vector<std::pair<uint16_t, std::string>> provide6;
  bool rapid_commit = true;  // SOLICIT carries the Rapid Commit option

  // Upstream's client identifier: "<containerID>/<network>/<ifname>", cut at
  // 254 bytes; it goes out as option 61 of type 0 and keys the lease table.
  std::string ClientId() const;

  Json ToJson() const;
  static absl::StatusOr<LeaseSpec> FromJson(const Json& j);
};

// The CNI result for an ACK: address and mask, the first router as gateway,
// routes from option 121 (RFC 3442: then 33 and the router are ignored) or
// else option 33 plus a default route via the router, DNS servers (6) and
// domain (15). Code 999 when the ACK has no subnet mask (as upstream).
absl::StatusOr<Result> ResultFromAck(const Message& ack, int priority);

// What the daemon needs of one lease, IPv4 (Lease) or IPv6 (Lease6).
class LeaseBase {
 public:
  enum class State { kBound, kExpired, kGone };
  virtual ~LeaseBase() = default;
  // Runs the first exchange on the calling thread; on success starts the
  // maintenance thread. Code 11 when no server answers by `deadline`.
  virtual absl::Status Acquire(absl::Time deadline) = 0;
  // Stops the maintenance thread and, when `release`, releases the lease.
  virtual absl::Status Stop(bool release) = 0;
  // Makes an exchange in progress (Acquire's, from another thread) give up
  // with Cancelled, and keeps a maintenance thread from starting.
  virtual void Cancel() = 0;
  virtual const LeaseSpec& spec() const = 0;
  virtual State state() const = 0;
  virtual absl::StatusOr<Result> CurrentResult() const = 0;
  // The state file's record.
  virtual Json ToJson() const = 0;
  // Number of renewals acknowledged so far.
  virtual int renewals() const = 0;
};

class Lease : public LeaseBase {
 public:

  // `on_change` runs (on the maintenance thread) after every renewal or state
  // change, so the daemon can persist its table.
  Lease(LeaseSpec spec, Timing timing, std::function<void()> on_change);
  ~Lease() override;  // stops the maintenance thread (without RELEASE)
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;

  // Runs the first exchange on the calling thread; on success starts the
  // maintenance thread. Code 11 when no server answers by `deadline`.
  absl::Status Acquire(absl::Time deadline) override;
  // Takes over a lease the daemon persisted before a restart and renews it at
  // once (unicast to its server), then maintains it as usual.
  void Resume(Message ack, net::MacAddress server_mac, absl::Time bound_at);
  // Stops the maintenance thread and, when `release`, sends DHCPRELEASE.
  absl::Status Stop(bool release) override;
  // Makes an exchange in progress (Acquire's, from another thread) give up
  // with Cancelled, and keeps a maintenance thread from starting. Stop()
  // still ends the lease.
  void Cancel() override;

  const LeaseSpec& spec() const override { return spec_; }
  State state() const override;
  absl::StatusOr<Result> CurrentResult() const override;
  // The state file's record: spec, the last ACK (hex), the server's link
  // address and when the lease was bound (Unix seconds).
  Json ToJson() const override;
  // Number of renewals (unicast or rebinding) acknowledged so far.
  int renewals() const override;

 private:
  struct Bound {
    Message ack;
    net::MacAddress server_mac;
    absl::Time bound_at;
  };
  Message NewMessage(MessageType type, uint32_t xid, const net::MacAddress& mac) const;
  absl::StatusOr<Bound> Discover(Conn& conn, absl::Time deadline);
  absl::StatusOr<Bound> Renew(Conn& conn, absl::Time deadline);
  absl::Status SendRelease();
  // Takes `b` as the current lease; runs on_change when `notify`.
  void Commit(Bound b, bool notify);
  void Maintain(bool renew_now);
  void Log(absl::string_view msg) const;
  // Waits `d` unless Stop() comes first (then false).
  bool Pause(absl::Duration d);

  const LeaseSpec spec_;
  const Timing timing_;
  const std::function<void()> on_change_;
  UniqueFd cancel_;  // eventfd: wakes an exchange in progress on Stop

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  State state_ = State::kBound;
  std::optional<Bound> bound_;
  int renewals_ = 0;
  std::thread thread_;
};

// Times of a bound lease: lease time (51, default 1 h), T1 (58, default half
// of it) and T2 (59, default 85 % of it, as upstream), from `bound_at`.
struct LeaseTimes {
  absl::Time renew;
  absl::Time rebind;
  absl::Time expire;
};
LeaseTimes TimesOf(const Message& ack, absl::Time bound_at);

}  // namespace cni::dhcp

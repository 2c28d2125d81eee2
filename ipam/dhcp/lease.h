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

class Lease {
 public:
  enum class State { kBound, kExpired, kGone };

  // `on_change` runs (on the maintenance thread) after every renewal or state
  // change, so the daemon can persist its table.
  Lease(LeaseSpec spec, Timing timing, std::function<void()> on_change);
  ~Lease();  // stops the maintenance thread (without RELEASE)
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;

  // Runs the first exchange on the calling thread; on success starts the
  // maintenance thread. Code 11 when no server answers by `deadline`.
  absl::Status Acquire(absl::Time deadline);
  // Takes over a lease the daemon persisted before a restart and renews it at
  // once (unicast to its server), then maintains it as usual.
  void Resume(Message ack, net::MacAddress server_mac, absl::Time bound_at);
  // Stops the maintenance thread and, when `release`, sends DHCPRELEASE.
  absl::Status Stop(bool release);
  // Makes an exchange in progress (Acquire's, from another thread) give up
  // with Cancelled, and keeps a maintenance thread from starting. Stop()
  // still ends the lease.
  void Cancel();

  const LeaseSpec& spec() const { return spec_; }
  State state() const;
  absl::StatusOr<Result> CurrentResult() const;
  // The state file's record: spec, the last ACK (hex), the server's link
  // address and when the lease was bound (Unix seconds).
  Json ToJson() const;
  // Number of renewals (unicast or rebinding) acknowledged so far.
  int renewals() const;

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

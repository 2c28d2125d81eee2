// Traffic control through rtnetlink, as the bandwidth plugin needs it: a TBF
// (token bucket filter) root qdisc, the ingress qdisc, a u32 match-all filter
// whose mirred action redirects everything to another device (an ifb), and
// listing/deleting qdiscs. No `tc` process is ever run.
//
// Every call works in the namespace of the socket it is given. Errors name the
// operation and the device, with the kernel's errno as the canonical code
// (absl::IsAlreadyExists, absl::IsNotFound, see netlink.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cni/net/netlink.h"

namespace cni::net {

// Handles as the kernel spells them (TC_H_MAKE(major, minor)).
inline constexpr uint32_t TcHandle(uint32_t major, uint32_t minor) { return (major << 16) | minor; }
inline constexpr uint32_t kTcRoot = 0xFFFFFFFFu;      // TC_H_ROOT
inline constexpr uint32_t kTcIngress = 0xFFFFFFF1u;   // TC_H_INGRESS
// ffff:, the handle of the ingress qdisc itself (and the parent of its filters).
inline constexpr uint32_t kIngressHandle = TcHandle(0xFFFF, 0);

// TBF parameters exactly as the kernel takes them (struct tc_tbf_qopt):
// rate in bytes per second, limit in bytes, buffer in scheduler ticks.
struct TbfParams {
  uint64_t rate = 0;     // bytes per second
  uint32_t limit = 0;    // bytes that may queue
  uint32_t buffer = 0;   // bucket size, in scheduler ticks (see TicksPerUsec)
  friend bool operator==(const TbfParams&, const TbfParams&) = default;
};

// What a qdisc dump says.
struct QdiscInfo {
  int ifindex = 0;                // the device it is attached to
  uint32_t handle = 0;            // its handle (TcHandle(major, 0))
  uint32_t parent = 0;            // kTcRoot, kTcIngress, or a class handle
  std::string kind;               // "tbf", "ingress", "noqueue", ...
  std::optional<TbfParams> tbf;   // for kind "tbf"
};

// Scheduler ticks per microsecond, from /proc/net/psched (15.625 on current
// kernels); the unit of TbfParams::buffer. Falls back to 1 if unreadable.
double TicksPerUsec();

// Adds a TBF as the root qdisc (handle `handle`) of `ifindex`. The options
// are sent as given (no rate table; rates of 2^32 bytes/s and more go in
// TCA_TBF_RATE64), so the kernel holds exactly these numbers.
absl::Status AddTbfQdisc(NetlinkSocket& sock, int ifindex, uint32_t handle, const TbfParams& params);

// Adds the ingress qdisc (ffff:) to `ifindex`.
absl::Status AddIngressQdisc(NetlinkSocket& sock, int ifindex);

// Adds, under the ingress qdisc of `ifindex`, a u32 filter (priority `prio`,
// all protocols) that matches every packet and redirects it, through a mirred
// action, to the egress of `target_ifindex`.
absl::Status AddRedirectFilter(NetlinkSocket& sock, int ifindex, int target_ifindex, uint16_t prio = 1);

// The qdiscs of `ifindex`. The kernel dumps every link's qdiscs (a dump
// cannot be filtered by link), so the cost grows with the links in the
// namespace: a caller that wants one qdisc should use GetQdisc.
absl::StatusOr<std::vector<QdiscInfo>> ListQdiscs(NetlinkSocket& sock, int ifindex);

// The qdisc of `ifindex` under `parent` (kTcRoot or kTcIngress), from one
// GET; nullopt when there is none (no ingress qdisc).
absl::StatusOr<std::optional<QdiscInfo>> GetQdisc(NetlinkSocket& sock, int ifindex, uint32_t parent);

// Deletes the qdisc of `ifindex` under `parent` (kTcRoot or kTcIngress) with
// its filters. A missing qdisc or device is absl::NotFound.
absl::Status DeleteQdisc(NetlinkSocket& sock, int ifindex, uint32_t parent);

}  // namespace cni::net

// Configuration of the bandwidth plugin: rates in bits per second and bursts
// in bits, from the config's own keys or, when none of the four is there, from
// the `bandwidth` runtimeConfig capability. Validated as upstream does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cni/net/qdisc.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"

namespace cni::bandwidth {

struct Limits {
  uint64_t ingress_rate = 0;   // traffic to the container: TBF on the host veth
  uint64_t ingress_burst = 0;
  uint64_t egress_rate = 0;    // traffic from the container: TBF on the ifb
  uint64_t egress_burst = 0;
  bool IsZero() const {
    return ingress_rate == 0 && ingress_burst == 0 && egress_rate == 0 && egress_burst == 0;
  }
  bool HasIngress() const { return ingress_rate > 0 && ingress_burst > 0; }
  bool HasEgress() const { return egress_rate > 0 && egress_burst > 0; }
};

struct Config {
  std::string name;               // the network's name (part of the ifb name)
  Limits limits;                  // all zero: nothing to shape
  // prevResult as parsed: ADD and CHECK require one (and fail on a bad one);
  // DEL uses it only when it parsed; GC and STATUS do not look at it.
  absl::StatusOr<std::optional<Result>> prev_result = std::optional<Result>();

  // Parses and validates. Wrong types (negative numbers included) are code 6;
  // a rate without a burst or the reverse, a burst of 4 GB or more (upstream's
  // limits) and a rate below 8 bit/s (0 bytes/s for the kernel) are code 7.
  static absl::StatusOr<Config> Parse(const CmdArgs& args);
  // The configuration keys Parse reads (its key table's names and the keys
  // read beside it, with their path: "runtimeConfig.mac"). The README's
  // "## Keys" table lists exactly these (tests/unit/readme_keys).
  static std::vector<std::string> KeyNames();
};

// The configuration DEL and GC read: the network's name and prevResult
// (when it parses), never the limits, so that an ADD refused for a bad rate
// or burst leaves a DEL that succeeds, and limits broken since ADD still let
// DEL remove the ifb device and the qdiscs.
struct TeardownConfig : Config {
  static absl::StatusOr<TeardownConfig> Parse(const CmdArgs& args);
};

// The TBF numbers upstream computes for a rate (bit/s) and burst (bit): rate
// and burst in bytes, buffer = burst's transmit time in ticks, limit = 25 ms
// of traffic plus the burst. Same integer truncations as upstream.
net::TbfParams TbfFor(uint64_t rate_bits, uint64_t burst_bits, double ticks_per_usec);

// "bwp" + hex(sha512(network + containerID)), cut to 15 characters.
std::string IfbName(const std::string& network, const std::string& container_id);

}  // namespace cni::bandwidth

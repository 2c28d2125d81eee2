// Configuration of the sbr (source-based routing) plugin: its keys, parsed
// and validated before any side effect (DESIGN rule 3).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/base/ip.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"

namespace cni::sbr {

// Where the first routing table is looked for when `table` is not set.
inline constexpr uint32_t kFirstTable = 100;

struct Config {
  // `table`: every rule points at this table and no route is moved (the
  // routes come with it from IPAM, CNI 1.1 route "table"). Unset: a free table
  // per address, from kFirstTable on, with the interface's routes moved there.
  std::optional<uint32_t> table;
  // `gateways`: at most one per family, used instead of prevResult's.
  std::optional<net::IpAddress> gateway_v4, gateway_v6;
  bool add_source_hints = false;  // `addSourceHints`

  // prevResult as parsed: ADD and CHECK require one (and fail on a bad one);
  // DEL uses it when there is one.
  absl::StatusOr<std::optional<Result>> prev_result = std::optional<Result>();

  // The static gateway for `family`, if `gateways` gives one.
  const std::optional<net::IpAddress>& Gateway(net::Family family) const {
    return family == net::Family::kV4 ? gateway_v4 : gateway_v6;
  }

  // Wrong JSON types are code 6; a table outside 1 ... 2^32-1, a gateway that
  // does not parse, more than two gateways or two of one family: code 7.
  static absl::StatusOr<Config> Parse(const CmdArgs& args);
  // The configuration keys Parse reads (its key table's names and the keys
  // read beside it, with their path: "runtimeConfig.mac"). The README's
  // "## Keys" table lists exactly these (tests/unit/readme_keys).
  static std::vector<std::string> KeyNames();
};

// The configuration DEL reads: "table" (which rules are the attachment's)
// and prevResult (when it parses), not "gateways" or "addSourceHints", so
// that an ADD refused for a bad gateway leaves a DEL that succeeds, and a
// gateway broken since ADD still lets DEL remove the rules and routes.
struct TeardownConfig : Config {
  static absl::StatusOr<TeardownConfig> Parse(const CmdArgs& args);
};

// The addresses of prevResult that belong to `ifname`, as upstream picks
// them: those with no interface index, an index out of range, or the index of
// an interface called `ifname`.
std::vector<IpConfig> AddressesOf(const Result& prev, absl::string_view ifname);

}  // namespace cni::sbr

// What a plugin may leave behind, as a set of lines to compare before and
// after: links, addresses, routes (every table) and policy rules of a network
// namespace; the nftables ruleset (iptables-nft rules included); the files
// under watched data directories.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace conformance {

// One line per kernel object or file, e.g. "host link cni0 bridge up",
// "ctr addr eth0 10.1.0.2/24", "host nft table ip nat / chain POSTROUTING:
// ip saddr 10.1.0.2 jump CNI-...", "file /var/lib/cni/networks/n/10.1.0.2".
using State = std::set<std::string>;

// Links, addresses, routes (the local table left out: it mirrors the
// addresses) and rules of the namespace at `netns_path` ("" =
// the private host namespace), each line prefixed with `label`. IPv6
// link-local and multicast addresses and routes, and lo's 127.0.0.0/8 and
// ::1, are left out: the kernel adds them on its own when a link comes up
// (and keeps lo's when it goes down).
absl::StatusOr<State> NetState(const std::string& netns_path, absl::string_view label);

// `nft -s list ruleset` of the private host namespace, one line per table,
// chain and rule (each rule prefixed with its table and chain). Empty when
// nft is not installed.
absl::StatusOr<State> NetfilterState();

// Every file (not directory) under each of `dirs`, as "file <path>".
State FileState(const std::vector<std::string>& dirs);

// Lines of `after` not in `before` ("left: ...") and of `before` not in
// `after` ("gone: ..."), at most `limit` of them (then "... and N more").
std::vector<std::string> Differences(const State& before, const State& after, size_t limit = 12);

}  // namespace conformance

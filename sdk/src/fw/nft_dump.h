// Listing nf_tables rules and chains straight from the kernel (a netlink dump
// over NETLINK_NETFILTER, through net::NetlinkSocket), without libnftables.
//
// Why: to find a container's rules (by comment) and their handles, listing
// through libnftables turns every rule of the table back into nft syntax.
// With 1,000 containers' port mappings that is ~80 ms per listing, and
// portmap lists on every ADD and DEL. The dump only reads the attributes we
// need (table, chain, handle, comment, jump target): the cost no longer grows
// with the rules' size, only (cheaply) with their number. Changes go through
// NftBatch, as one transaction over netlink.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/fw/nft.h"
#include "cni/net/netlink.h"

struct nlmsghdr;

namespace cni::fw::internal {

// The rules of table `family` `table` (every chain, or only `chain`), in the
// kernel's order; at most `limit` of them unless it is 0; empty when the
// table does not exist.
absl::StatusOr<std::vector<NftRule>> DumpRules(net::NetlinkSocket& nl, NftFamily family,
                                               absl::string_view table, absl::string_view chain, size_t limit);

// A NEWRULE message (listed or echoed) as an NftRule: table, chain, handle
// and comment; the family is the caller's to fill in.
NftRule RuleFromMessage(nlmsghdr* h);

// The comment nft stores in a rule's user data (a TLV list; the comment is
// type 0, NUL-terminated), "" when none.
std::string CommentFromUserData(const uint8_t* data, size_t len);

}  // namespace cni::fw::internal

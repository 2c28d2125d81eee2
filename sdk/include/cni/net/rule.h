// Policy routing rules (`ip rule`) through an rtnetlink socket: add, delete,
// list. Only what the plugins need: rules that pick a table by source and/or
// destination prefix, with an optional priority.
//
// Every call works in the namespace of the socket it is given. Errors name the
// operation and the rule (`adding rule "from 10.1.2.3/32 lookup 100": File
// exists`) and keep the kernel's errno as the canonical code (see KernelError
// in netlink.h): absl::IsAlreadyExists on add, absl::IsNotFound on delete.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cni/base/ip.h"
#include "cni/net/netlink.h"

namespace cni::net {

// A "lookup TABLE" rule (FR_ACT_TO_TBL). Unset optional fields are left to
// the kernel (add) or match anything (delete).
struct RuleSpec {
  Family family = Family::kV4;     // the rule's family (ip -4 / -6 rule)
  std::optional<IpPrefix> src;     // "from": source prefix; none: from all
  std::optional<IpPrefix> dst;     // "to": destination prefix; none: to all
  int table = 0;                   // the table to look up (RT_TABLE_*, 1 ... 2^32-1)
  // Preference; on add, unset lets the kernel pick one just above the
  // highest-priority rule after 0 (32765 on a fresh namespace), as `ip rule
  // add` does.
  std::optional<uint32_t> priority;
  // RTPROT_*; the kernel reports 0 (unspec) for rules added without one,
  // which upstream's netlink library does.
  int protocol = 0;

  // "from 10.1.2.3/32 lookup 100 pref 32765", for messages.
  std::string ToString() const;
  // Field-wise, unset and explicit values differ.
  friend bool operator==(const RuleSpec&, const RuleSpec&) = default;
};

// Adds `rule`; an identical one (same selector, table and preference) already
// present is absl::AlreadyExists (NLM_F_EXCL).
absl::Status AddRule(NetlinkSocket& sock, const RuleSpec& rule);
// Deletes the first rule that matches `rule` (unset fields match anything);
// none is absl::NotFound.
absl::Status DeleteRule(NetlinkSocket& sock, const RuleSpec& rule);
// The rules of `family` (nullopt: IPv4 and IPv6) whose action is a table
// lookup, as the kernel lists them, priority filled in. Rules of other
// actions (goto, blackhole, ...) are left out.
absl::StatusOr<std::vector<RuleSpec>> ListRules(NetlinkSocket& sock,
                                                std::optional<Family> family = std::nullopt);

// Which request BuildRuleRequest builds: RTM_NEWRULE with NLM_F_EXCL or
// RTM_DELRULE.
enum class RuleOp { kAdd, kDelete };
// The request AddRule / DeleteRule send (for tests and tools; no I/O).
absl::StatusOr<NlMsgPtr> BuildRuleRequest(const RuleSpec& rule, RuleOp op);

}  // namespace cni::net

// The addresses an iptables ADD is about to let through, written down before
// it changes anything. Upstream's rules in CNI-FORWARD carry no owner, and
// the handle record (cni/fw/rule_record.h) can only be written after the
// commit that made them: a plugin killed between the two left rules that a
// DEL without prevResult (what a runtime sends after a failed ADD) could not
// find. With the intent written first, DEL and GC always know which
// addresses' rules belong to the attachment.
//
// One small file per attachment under /run/cni/firewall/iptables-addresses,
// named "<netns cookie>-<record key>" (rules belong to a host namespace), one
// address per line. Written atomically; removed only once the rules are gone.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "cni/base/ip.h"

namespace cni::firewall {

class AddressIntents {
 public:
  // The intents of the calling thread's network namespace. Without netns
  // cookies (Linux before 5.14) nothing is kept, as with the handle records.
  static AddressIntents ForCurrentNetns();

  // The addresses written for `key`; none when there is no (readable) intent.
  std::vector<net::IpPrefix> Load(const std::string& key) const;
  // Whether an intent for `key` exists.
  bool Has(const std::string& key) const;
  // Writes `addresses` for `key` (replacing what was there). Fails when the
  // file cannot be written: the ADD must then change nothing.
  absl::Status Save(const std::string& key, const std::vector<net::IpPrefix>& addresses) const;
  // Forgets `key` (and a temporary file a killed Save left); none is fine.
  void Remove(const std::string& key) const;
  // The keys of this namespace's intents that start with `prefix` (also
  // those of which only a killed Save's temporary file is left).
  std::vector<std::string> KeysWithPrefix(const std::string& prefix) const;

 private:
  explicit AddressIntents(std::string prefix) : prefix_(std::move(prefix)) {}
  std::string PathOf(const std::string& key) const;

  std::string prefix_;  // "<netns cookie>-"; empty when disabled
};

}  // namespace cni::firewall

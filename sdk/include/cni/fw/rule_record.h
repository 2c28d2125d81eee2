// What a plugin remembers of the nf_tables rules it made for a container,
// so that DEL (and a repeated ADD) find them by handle instead of listing
// every rule of a shared chain. A listing costs time in proportion
// to all the containers' rules (the kernel serialises each one); a lookup by
// handle does not, which keeps ADD and DEL flat as a node fills up.
// portmap keeps, with nftables, every rule the container has in the
// cni_hostport tables; with iptables (iptables-nft only, whose tables are
// nf_tables tables) the jumps from CNI-HOSTPORT-DNAT into the container's
// chain. firewall keeps the container's rules in CNI-FORWARD (or its own
// table). ipMasq keeps, with iptables-nft, the container's POSTROUTING
// jumps, and with nftables its rules in inet cni_plugins_masquerade.
//
// One small JSON file per container (a key the plugin chooses) in a
// directory of the plugin's under /run/cni, named after the host network namespace's cookie and the container ID:
// handles mean nothing in another namespace, and /run, like the rules, does
// not outlive a reboot.
//
// A record is a hint, never the truth. It is used only while each table it
// names still has the handle it had when the rules were made (a table made
// again numbers its rules from the start), and whatever goes wrong using it
// (a rule already deleted by someone else, an unreadable file) falls back
// to listing, as upstream's plugins always do.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "cni/fw/nft.h"
#include "cni/fw/protocols.h"
#include "cni/net/netlink.h"

namespace cni::fw {

// The rules one ADD made.
struct RuleRecord {
  std::map<NftFamily, uint64_t> tables;  // family (kIp, kIp6, kInet) -> the handle its table had then
  std::vector<NftRule> rules;            // each with family, table, chain and handle
};

// Whether `family`'s `table` still has the handle `record` noted for it:
// only then do the record's rule handles name the rules it made. False when
// none was noted or the lookup fails.
bool TableUnchanged(net::NetlinkSocket& nl, const RuleRecord& record, NftFamily family, const char* table);
// Notes the handle `family`'s `table` has now. False when it has none or the
// lookup fails: nothing may then be recorded for that table.
bool NoteTable(net::NetlinkSocket& nl, RuleRecord& record, NftFamily family, const char* table);

// The records of the calling thread's network namespace.
class RuleRecordStore {
 public:
  // Without netns cookies (Linux before 5.14) the store is disabled: Load
  // finds nothing and Save keeps nothing. A non-empty `scope` (a network's
  // NetworkHash, cni/fw/names.h) confines the store to that scope's records:
  // each file is "<netns cookie>-<scope>-<key>", and every listing (GC's
  // RemoveAllBut, RecordsNotIn, RemoveTemporariesBut) sees only those, so
  // one network's GC never forgets another network's records.
  static RuleRecordStore ForCurrentNetns(std::string dir, absl::string_view scope = "");

  // Whether records are kept at all.
  bool enabled() const { return !prefix_.empty(); }
  // The container's record; nullopt when there is none or it is unreadable.
  std::optional<RuleRecord> Load(const std::string& id) const;
  // Replaces the container's record (written to a temporary file, then
  // renamed, so a reader never sees half of it). Best effort: on failure
  // the old record is removed, never left to describe other rules.
  void Save(const std::string& id, const RuleRecord& record) const;
  // Forgets the container: its record and the temporary file of a Save that
  // was killed midway ("<record>~"); none is fine.
  void Remove(const std::string& id) const;
  // Forgets every container of this namespace that is not in `valid_ids`,
  // temporary files included (GC). A listed container's temporary file stays:
  // its ADD may be writing it.
  void RemoveAllBut(const std::vector<std::string>& valid_ids) const;
  // Only the temporary files of containers not in `valid_ids` whose ID
  // starts with `id_prefix` (GC of a backend whose records of other
  // networks' containers must stay: their IDs start otherwise).
  void RemoveTemporariesBut(const std::vector<std::string>& valid_ids, absl::string_view id_prefix = "") const;
  // The IDs of this namespace's records whose container is not in
  // `valid_ids` (GC of rules a plugin can find only through its records).
  std::vector<std::string> RecordsNotIn(const std::vector<std::string>& valid_ids) const {
    return IdsNotIn(valid_ids, /*records=*/true, /*temporaries=*/false);
  }

  // For an ADD that replaces the container's rules: those its record names,
  // when every table the record noted (each family's `table`) still has its
  // handle; none when there is no record (a new container: the spec forbids
  // a second ADD without a DEL between); nullopt when records are disabled or
  // this one cannot be trusted: the caller lists.
  std::optional<std::vector<NftRule>> RulesToReplace(net::NetlinkSocket& nl, const std::string& id,
                                                     const char* table) const;
  // For a DEL: deletes the rules the container's record names, in one
  // transaction, then forgets the record. False, with nothing deleted, when
  // there is no trusted record or a recorded rule is gone (someone else
  // deleted it): the caller lists.
  bool DeleteRecorded(net::NetlinkSocket& nl, const std::string& id, const char* table) const;

 private:
  RuleRecordStore(std::string dir, std::string prefix) : dir_(std::move(dir)), prefix_(std::move(prefix)) {}
  // The IDs of this namespace's files (records, and with `temporaries`
  // temporary files) whose container is not in `valid_ids`.
  std::vector<std::string> IdsNotIn(const std::vector<std::string>& valid_ids, bool records, bool temporaries) const;
  std::string PathOf(const std::string& id) const;

  std::string dir_;
  std::string prefix_;  // "<netns cookie>-"; empty when disabled
};

}  // namespace cni::fw

// What a plugin remembers of the nf_tables rules it made for an attachment,
// so that DEL (and a repeated ADD) find them by handle instead of listing
// every rule of a shared chain. A listing costs time in proportion
// to all the containers' rules (the kernel serialises each one); a lookup by
// handle does not, which keeps ADD and DEL flat as a node fills up.
// portmap keeps, with nftables, every rule the container has in the
// cni_hostport tables; with iptables (iptables-nft only, whose tables are
// nf_tables tables) the jumps from CNI-HOSTPORT-DNAT into the container's
// chain. firewall keeps the attachment's rules in CNI-FORWARD (or its own
// table), and per bridge its isolation rules. ipMasq keeps, with
// iptables-nft, the attachment's POSTROUTING jumps, and with nftables its
// rules in inet cni_plugins_masquerade.
//
// One small JSON file per attachment in a directory of the plugin's under
// /run/cni, named "<host netns cookie>-<network hash>-<key>": handles mean
// nothing in another namespace, /run, like the rules, does not outlive a
// reboot, and every lookup and every GC sees only its own network's records
// (one network's GC never forgets another network's).
//
// A record is a hint, never the truth. It is used only while each table it
// names still has the handle it had when the rules were made (a table made
// again numbers its rules from the start), and whatever goes wrong using it
// (a rule already deleted by someone else, an unreadable file) falls back
// to listing, as upstream's plugins always do.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "cni/fw/nft.h"
#include "cni/fw/nft_batch.h"
#include "cni/fw/protocols.h"
#include "cni/net/netlink.h"

namespace cni::fw {

// How a plugin tells an attachment's rules in a listing.
struct OwnedRules {
  // Where they live: each family's chain of the records' table ("" for the
  // whole table).
  std::vector<std::pair<NftFamily, std::string>> chains;
  // Which rules there (or added by a commit) are the attachment's: by their
  // comment, say.
  std::function<bool(const NftRule&)> owns;
};

// The records of one network's attachments in the calling thread's network
// namespace, for rules in `table` (the same name in every family). Without
// netns cookies (Linux before 5.14) nothing is kept: every lookup lists.
class RuleRecords {
 public:
  // `dir`: the plugin's directory under /run/cni. `network` "": records of
  // no network (firewall's per-bridge isolation rules, and the files of
  // versions before records were scoped).
  RuleRecords(std::string dir, std::string table, absl::string_view network = "");

  // --- The whole life, for rules that carry the attachment in a comment in
  // shared chains (the native nftables layouts).

  // ADD: one transaction deletes the attachment's earlier rules and adds
  // what `build` puts in the batch, then the rules of it that `mine` owns
  // are recorded. The earlier rules come from the record while it holds,
  // else (none at all: a new attachment, as the spec forbids a second ADD
  // without a DEL between) there are none; an untrusted record and every
  // retry list them. Retried on conflict (cni/fw/iptables.h). A batch with
  // nft text (nft::Apply) tells no handles: then nothing is recorded.
  absl::Status Replace(net::NetlinkSocket& nl, const std::string& key, const OwnedRules& mine,
                       const std::function<absl::Status(NftBatch&)>& build) const;
  // DEL: the attachment's rules, by the record's handles while it holds,
  // else those `mine` lists; then the record goes. Retried on conflict.
  absl::Status Delete(net::NetlinkSocket& nl, const std::string& key, const OwnedRules& mine) const;
  // GC: deletes the rules `stale` lists (one transaction), then forgets
  // every record of this network whose key is not in `valid_keys`.
  absl::Status Collect(net::NetlinkSocket& nl, const OwnedRules& stale, const std::vector<std::string>& valid_keys) const;

  // --- The pieces, for the iptables-nft paths, where a record covers part
  // of what the attachment has (its jumps) and the rest is found otherwise.

  // Whether a record of `key` exists (its ADD was made before).
  bool Has(const std::string& key) const;
  // The recorded rules of `family` while the record holds (the table still
  // has the handle noted with them); nullopt when it does not or there are
  // none of that family.
  std::optional<std::vector<NftRule>> Recorded(net::NetlinkSocket& nl, const std::string& key, NftFamily family) const;
  // Records `rules` (just committed) as `key`'s rules of `family`, with the
  // table's handle now, in place of those recorded before; the other
  // families' stay. When the handle cannot be read, the whole record goes.
  void Note(net::NetlinkSocket& nl, const std::string& key, NftFamily family, const std::vector<NftRule>& rules) const;
  // Forgets `key`: its record, and a killed write's temporary file.
  void Forget(const std::string& key) const;
  // The keys of this network's records that are not in `valid_keys`.
  std::vector<std::string> StaleKeys(const std::vector<std::string>& valid_keys) const;
  // Forgets them, with the temporary files of keys not in `valid_keys` (a
  // listed key's may be its ADD writing right now).
  void ForgetAllBut(const std::vector<std::string>& valid_keys) const;

 private:
  struct Record;
  std::optional<Record> Load(const std::string& key) const;
  void Save(const std::string& key, const Record& record) const;
  // The keys of this network's files (records, or temporary files) not in
  // `valid_keys`.
  std::vector<std::string> KeysNotIn(const std::vector<std::string>& valid_keys, bool temporaries) const;
  std::string PathOf(const std::string& key) const;

  std::string dir_;
  std::string table_;
  std::string prefix_;  // "<netns cookie>-[<network hash>-]"; empty when disabled
};

}  // namespace cni::fw

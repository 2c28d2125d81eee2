// The backup of a link's original attributes, saved by ADD before it changes
// anything and restored by DEL: <dataDir>/<containerID>_<ifname>.json in
// upstream's format, so either implementation can restore what the other set.
//
//   {
//    "mac": "0a:58:0a:f4:00:05",   only the attributes ADD changes;
//    "promisc": false,             others are left out
//    "mtu": 1500,
//    "allmulti": false,
//    "txQLen": 1000,
//    "network": "mynet"            ours only (upstream ignores unknown keys):
//   }                              lets GC tell which network owns the file
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cni::tuning {

struct Backup {
  std::string mac;                 // "" when not saved
  std::optional<bool> promisc;
  int mtu = 0;                     // 0 when not saved
  std::optional<bool> allmulti;
  std::optional<int> txqlen;
  std::string network;             // "" in upstream's files

  std::string ToJson() const;
  // Code 6 if `text` is not a backup document.
  static absl::StatusOr<Backup> Parse(absl::string_view text);
};

// <dir>/<containerID>_<ifname>.json
std::string BackupPath(absl::string_view dir, absl::string_view container_id,
                       absl::string_view ifname);

// The temporary name earlier versions wrote a backup under: "<path>.tmp".
std::string OldTempPath(absl::string_view path);

// Writes the file (creating `dir` if needed) with cni::WriteFileAtomic, so a
// crash never leaves half a backup (at most the temporary "<path>~"). Code 5
// on I/O failure.
absl::Status WriteBackup(const std::string& path, const Backup& backup);
// Reads it (a regular file, bounded): nullopt when there is none; code 5 on
// I/O failure, 6 if malformed.
absl::StatusOr<std::optional<Backup>> ReadBackup(const std::string& path);
// Removes it and any temporary file a killed writer left beside it (ours,
// "<path>~", or an earlier version's "<path>.tmp"); missing files are success.
absl::Status RemoveBackup(const std::string& path);

}  // namespace cni::tuning

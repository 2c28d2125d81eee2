// The host-local reservation store, byte-compatible with upstream's disk
// backend so upstream and this plugin can take turns on one node:
//
//   <dataDir>/<network>/             0755
//     <ip>                           0600, O_EXCL; "<containerID>\r\n<ifname>" (no newline)
//     last_reserved_ip.<rangeSet>    the last address handed out from that range set
//     lock                           flock(LOCK_EX) for a whole operation
//
// plus our owner index (index.h) that upstream ignores. Every method except
// Open/Lock needs the lock held (see StoreLock).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/base/ip.h"
#include "fs.h"
#include "index.h"

namespace cni::hostlocal {

// Address text exactly as Go's net.IP.String() prints it: the reservation file
// name. (glibc's inet_ntop differs for IPv6 addresses in ::/96.)
std::string AddressText(const net::IpAddress& ip);

// Hashes addresses for flat_hash_set (IpAddress has no AbslHashValue).
struct IpAddressHash {
  size_t operator()(const net::IpAddress& ip) const {
    return absl::Hash<absl::string_view>()(absl::string_view(
        reinterpret_cast<const char*>(ip.data()), static_cast<size_t>(ip.byte_length())));
  }
};
using IpAddressSet = absl::flat_hash_set<net::IpAddress, IpAddressHash>;

// The owner key upstream compares trimmed file contents against.
std::string OwnerKey(absl::string_view container_id, absl::string_view ifname);

class Store {
 public:
  // Creates <dir> (mkdir -p, 0755) and the lock file.
  static absl::StatusOr<std::unique_ptr<Store>> Open(const std::string& dir);

  // Takes the lock and makes sure the owner index is complete (rebuilding it
  // with one scan when someone else changed the directory).
  absl::Status Lock();
  // Stamps the index if anything changed, then drops the lock.
  absl::Status Unlock();

  // Creates the reservation file for `ip` (O_EXCL). false: already taken.
  // Records last_reserved_ip.<range_id> as upstream does.
  absl::StatusOr<bool> Reserve(absl::string_view id, absl::string_view ifname,
                               const net::IpAddress& ip, int range_id);
  // The address in last_reserved_ip.<range_id>, if any.
  std::optional<net::IpAddress> LastReservedIp(int range_id);

  // Addresses owned by the attachment (also old files holding only the ID),
  // like upstream's GetByID.
  absl::StatusOr<std::vector<net::IpAddress>> GetByAttachment(absl::string_view id,
                                                              absl::string_view ifname);
  // Whether the attachment owns anything (upstream's FindByID).
  absl::StatusOr<bool> FindByAttachment(absl::string_view id, absl::string_view ifname);
  // Releases every address of the attachment; old ID-only files only when no
  // current-format file matched (upstream's ReleaseByID). Missing is fine.
  absl::Status ReleaseByAttachment(absl::string_view id, absl::string_view ifname);
  // Releases one address if, and only if, the attachment owns it.
  absl::Status ReleaseIp(absl::string_view id, absl::string_view ifname, const net::IpAddress& ip);

  // Every reservation file (full scan, reads contents): for GC.
  absl::StatusOr<std::vector<Reservation>> Scan();
  // Deletes the listed reservations (each verified again) and re-indexes.
  absl::Status ReleaseReservations(const std::vector<Reservation>& victims);
  // Names of every reservation file, parsed (directory listing only; no file
  // is opened). The allocator's fallback when probing keeps hitting taken IPs.
  absl::StatusOr<IpAddressSet> ReservedAddresses();

  // How many times Lock() rebuilt the index (tests).
  int index_rebuilds() const { return rebuilds_; }
  const std::string& dir() const { return dir_; }

 private:
  Store(std::string dir, UniqueFd dir_fd, UniqueFd lock_fd);
  // Rebuilds the owner index from a full scan of the reservation files.
  absl::Status RebuildIndex();
  // Runs an index operation; if it met something other than a file of ours
  // in the index, rebuilds the index and runs it again.
  template <typename Fn>
  auto WithIndex(Fn fn) -> decltype(fn());
  // Deletes `ip_text` if its trimmed content is `owner`; true if deleted.
  absl::StatusOr<bool> ReleaseIfOwned(absl::string_view owner, const std::string& ip_text);
  // Index lookup verified against the files: addresses `owner` really holds.
  absl::StatusOr<std::vector<std::string>> Owned(absl::string_view owner);
  absl::StatusOr<size_t> ReleaseOwner(absl::string_view owner);

  std::string dir_;
  UniqueFd dir_fd_;
  UniqueFd lock_fd_;
  AttachmentIndex index_;
  bool locked_ = false;
  bool dirty_ = false;  // the directory or the index changed under this lock
  int rebuilds_ = 0;
};

// Holds the store lock for a scope. Unlock errors are reported by Release().
class StoreLock {
 public:
  explicit StoreLock(Store& store) : store_(store) {}
  ~StoreLock() {
    if (held_) (void)store_.Unlock();
  }
  absl::Status Acquire() {
    absl::Status st = store_.Lock();
    held_ = true;  // Lock() leaves the flock held even if the index rebuild failed
    return st;
  }
  absl::Status Release() {
    held_ = false;
    return store_.Unlock();
  }

 private:
  Store& store_;
  bool held_ = false;
};

}  // namespace cni::hostlocal

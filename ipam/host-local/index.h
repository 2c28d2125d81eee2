// An owner -> addresses index kept beside upstream's host-local store, so DEL,
// CHECK and the duplicate check of ADD do not read every reservation file.
//
// Layout, inside the network directory:
//   .cni-cpp-index/             (0700) upstream's filepath.Walk descends into it
//     stamp                     "cni-cpp host-local index v1 <sec> <nsec>\n"
//     <3 hex digits>            4096 buckets by FNV-1a-64 hash of the owner key:
//                               "cni-cpp host-local index v1\n" then
//                               "<ip> <percent-escaped owner key>\n" lines
//
// Safety against upstream sharing the store:
// * Upstream reads every file under the network directory and deletes the ones
//   whose trimmed content equals "<id>\r\n<ifname>" or "<id>". Every file of
//   ours contains a space; container IDs and interface names cannot, so
//   upstream never matches (hence never deletes) our files. Their names never
//   parse as IP addresses, so upstream never counts them as reservations.
// * The index is trusted only while it is provably complete: after each of our
//   changes we set the network directory's mtime to a fine-grained timestamp of
//   our own and record it in `stamp`. Anyone else creating or removing a file in
//   the directory (upstream, an operator) makes the kernel set a new mtime; the
//   next operation sees the mismatch and rebuilds the index with one full scan.
// * Entries are always verified against the reservation file's content before
//   anything is deleted, so even a wrong index never releases a foreign address.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/base/fs.h"

namespace cni::hostlocal {

inline constexpr absl::string_view kIndexDirName = ".cni-cpp-index";

// One reservation as found on disk: the file name (the address text) and its
// owner key, the trimmed file content ("<id>\r\n<ifname>", or "<id>" for files
// written by old upstream versions).
struct Reservation {
  std::string ip_text;
  std::string owner;
  friend bool operator==(const Reservation&, const Reservation&) = default;
};

class AttachmentIndex {
 public:
  // `net_dir_fd` is the open network directory; not owned.
  explicit AttachmentIndex(int net_dir_fd) : net_fd_(net_dir_fd) {}
  AttachmentIndex(const AttachmentIndex&) = delete;
  AttachmentIndex& operator=(const AttachmentIndex&) = delete;

  // True when the stamp matches the network directory's mtime, i.e. nobody but
  // us changed the directory since our last commit. An index directory or
  // stamp that is not a plain directory or file of ours (a planted symlink)
  // is not current: the caller rebuilds, which replaces it.
  absl::StatusOr<bool> IsCurrent();

  // Replaces the whole index with `all` (the result of a full scan).
  absl::Status Rebuild(const std::vector<Reservation>& all);

  // Address texts recorded for `owner` (unverified; callers check the files).
  absl::StatusOr<std::vector<std::string>> Lookup(absl::string_view owner);
  absl::Status Add(absl::string_view owner, absl::string_view ip_text);
  absl::Status Remove(absl::string_view owner, absl::string_view ip_text);

  // Stamps the network directory and records the stamp. Call after the last
  // change of an operation, still under the store lock. On a filesystem
  // without nanosecond timestamps the stamp is dropped instead, so the next
  // operation rebuilds: slower there, never wrong.
  absl::Status Commit();

  // The bucket file name for `owner` (exposed for tests).
  static std::string BucketName(absl::string_view owner);

 private:
  // Opens (creating if needed) the index directory. Anything else under its
  // name (a symlink, a file) is removed first: the index is ours to rebuild.
  absl::StatusOr<int> Dir();
  // Opens the index directory if it exists as a real directory.
  bool OpenExisting();
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ReadBucket(
      const std::string& name);
  absl::Status WriteBucket(const std::string& name,
                           const std::vector<std::pair<std::string, std::string>>& entries);

  int net_fd_;
  UniqueFd idx_fd_;
};

}  // namespace cni::hostlocal

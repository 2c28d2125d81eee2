// The store's file helpers that the SDK (cni/base/fs.h) does not have: everything
// is relative to an open directory fd (openat & co.), so a long dataDir path
// is resolved once, and no symlink inside the store is ever followed. The
// owned descriptor, IoError and mkdir -p are the SDK's.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/base/fs.h"
#include "cni/base/quoted.h"

namespace cni::hostlocal {

// The store's messages quote the file they name (cni/base/quoted.h).
using cni::Quoted;

// Reads a whole regular file (at most cni::kMaxConfigFileBytes); nullopt if it
// does not exist. A symlink (ELOOP), FIFO or directory at `name` is an error
// carrying its errno (ELOOP, or EINVAL for "not a regular file"), never
// followed or waited on.
absl::StatusOr<std::optional<std::string>> ReadFileAt(int dir_fd, const std::string& name);

// Writes `content` to `name`, creating it with `mode` or truncating it (as Go's
// os.WriteFile does). The name is ours: a symlink planted there is removed and
// a new file created in its place, never written through.
absl::Status WriteFileAt(int dir_fd, const std::string& name, absl::string_view content, int mode);

// True for the failure ReadFileAt reports when something other than a
// regular file sits under a name that is ours (a planted symlink, a FIFO).
bool IsNotRegularFile(const absl::Status& status);

// One directory entry: its name and d_type (DT_UNKNOWN where the filesystem
// does not say).
struct DirEntry {
  std::string name;
  unsigned char type;
};

// The entries of the open directory `dir_fd`, without "." and "..". A
// failure is IoError(op, Quoted(name)).
absl::StatusOr<std::vector<DirEntry>> ListDirAt(int dir_fd, absl::string_view op,
                                                absl::string_view name);

// Go's strings.TrimSpace for the ASCII whitespace upstream can produce.
absl::string_view TrimSpace(absl::string_view s);

}  // namespace cni::hostlocal

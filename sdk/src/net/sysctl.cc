#include "cni/net/sysctl.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "cni/base/error.h"
#include "cni/base/fs.h"
#include "cni/base/status_macros.h"

namespace cni::net {
namespace {

// Turns `key` into a /proc/sys path, refusing anything outside net/.
absl::StatusOr<std::string> PathOf(absl::string_view key) {
  std::string k(key);
  if (k.find('/') == std::string::npos) k = absl::StrReplaceAll(k, {{".", "/"}});
  bool ok = absl::StartsWith(k, "net/");
  for (absl::string_view part : absl::StrSplit(k, '/')) {
    if (part.empty() || part == "." || part == "..") ok = false;
  }
  if (!ok) {
    return Error(ErrorCode::kInvalidNetworkConfig,
                 absl::StrCat("invalid sysctl \"", key, "\": must be a key under net/"));
  }
  return absl::StrCat("/proc/sys/", k);
}

absl::Status IoError(absl::string_view op, absl::string_view key, int err) {
  std::string msg = absl::StrCat(op, " sysctl ", key, ": ", std::strerror(err));
  // A missing key usually means a missing interface (or IPv6 disabled).
  if (err == ENOENT) return WithErrno(WithCode(absl::NotFoundError(msg), ErrorCode::kIoFailure), err);
  return WithErrno(Error(ErrorCode::kIoFailure, msg), err);
}

absl::StatusOr<std::string> ReadPath(const std::string& path, absl::string_view key) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return IoError("reading", key, errno);
  std::string out;
  char buf[256];
  for (;;) {
    ssize_t n = read(fd.get(), buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return IoError("reading", key, errno);
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return std::string(absl::StripAsciiWhitespace(out));
}

absl::Status WritePath(const std::string& path, absl::string_view key, absl::string_view value) {
  UniqueFd fd(open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd.valid()) return IoError("writing", key, errno);
  // A sysctl takes the value in a single write.
  ssize_t n;
  do {
    n = write(fd.get(), value.data(), value.size());
  } while (n < 0 && errno == EINTR);
  if (n < 0) return IoError("writing", key, errno);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> ReadSysctlHere(absl::string_view key) {
  ASSIGN_OR_RETURN(std::string path, PathOf(key));
  return ReadPath(path, key);
}

absl::Status WriteSysctlHere(absl::string_view key, absl::string_view value) {
  ASSIGN_OR_RETURN(std::string path, PathOf(key));
  return WritePath(path, key, value);
}

absl::StatusOr<std::string> ReadSysctl(const Netns& ns, absl::string_view key) {
  ASSIGN_OR_RETURN(std::string path, PathOf(key));
  return ns.RunFor<std::string>([&] { return ReadPath(path, key); });
}

absl::Status WriteSysctl(const Netns& ns, absl::string_view key, absl::string_view value) {
  ASSIGN_OR_RETURN(std::string path, PathOf(key));
  return ns.Run([&] { return WritePath(path, key, value); });
}

}  // namespace cni::net

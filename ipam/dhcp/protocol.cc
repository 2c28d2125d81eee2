#include "protocol.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/fs.h"
#include "cni/base/status_macros.h"

namespace cni::dhcp {

absl::StatusOr<std::string> ReadToEnd(int fd, size_t limit) {
  std::string out;
  char buf[16384];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError("reading", "the dhcp socket", errno);
    }
    if (n == 0) return out;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > limit) return Error(ErrorCode::kIoFailure, "dhcp socket: message too long");
  }
}

Json ErrorAnswer(const absl::Status& status) {
  return {{"error", {{"code", CodeOf(status)}, {"msg", std::string(status.message())}}}};
}

absl::StatusOr<Json> CallDaemon(const std::string& socket_path, const Json& request) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof(addr.sun_path)) {
    return Error(ErrorCode::kInvalidNetworkConfig, absl::StrCat("dhcp: socket path too long: ", socket_path));
  }
  std::memcpy(addr.sun_path, socket_path.data(), socket_path.size());
  UniqueFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return ErrnoError(errno, "opening a unix socket");
  if (connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    int err = errno;
    return WithErrno(Error(ErrorCode::kTryAgainLater,
                           absl::StrCat("the dhcp daemon is not running (connecting to ", socket_path,
                                        ": ", strerror(err), "); start it with \"dhcp daemon\"")),
                     err);
  }
  RETURN_IF_ERROR(WriteAll(fd.get(), Dump(request), "the dhcp socket"));
  shutdown(fd.get(), SHUT_WR);
  ASSIGN_OR_RETURN(std::string text, ReadToEnd(fd.get(), 1 << 20));
  if (text.empty()) {
    return Error(ErrorCode::kTryAgainLater, absl::StrCat("the dhcp daemon at ", socket_path, " closed without answering"));
  }
  ASSIGN_OR_RETURN(Json answer, ParseJson(text), "the dhcp daemon's answer");
  if (const Json* err = FindKey(answer, "error"); err != nullptr && err->is_object()) {
    int code = err->value("code", 999);
    return Error(static_cast<ErrorCode>(code), err->value("msg", std::string("dhcp daemon error")));
  }
  return answer;
}

}  // namespace cni::dhcp

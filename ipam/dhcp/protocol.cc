#include "protocol.h"

#include <poll.h>
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

namespace {

absl::Status NoAnswer(const std::string& socket_path, absl::Duration budget) {
  return Error(ErrorCode::kTryAgainLater, absl::StrCat("the dhcp daemon at ", socket_path, " did not answer within ",
                                                       absl::FormatDuration(budget)));
}

// Waits until `fd` is ready for `events` or `deadline` passes (false).
bool WaitReady(int fd, short events, absl::Time deadline) {
  for (;;) {
    absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) return false;
    pollfd p{fd, events, 0};
    int r = poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(absl::Ceil(left, absl::Milliseconds(1)))));
    if (r > 0) return true;
    if (r < 0 && errno != EINTR) return false;
  }
}

}  // namespace

absl::StatusOr<Json> CallDaemon(const std::string& socket_path, const Json& request, absl::Duration budget) {
  const absl::Time deadline = absl::Now() + budget;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof(addr.sun_path)) {
    return Error(ErrorCode::kInvalidNetworkConfig, absl::StrCat("dhcp: socket path too long: ", socket_path));
  }
  std::memcpy(addr.sun_path, socket_path.data(), socket_path.size());
  // Non-blocking throughout: a daemon whose backlog is full, or that accepts
  // and never reads or answers, must not hold the plugin past its budget.
  UniqueFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd.valid()) return ErrnoError(errno, "opening a unix socket");
  if (connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    int err = errno;
    if (err == EAGAIN || err == EINPROGRESS) {
      // A unix socket's backlog is full: the daemon is alive but behind.
      if (!WaitReady(fd.get(), POLLOUT, deadline)) return NoAnswer(socket_path, budget);
      socklen_t len = sizeof(err);
      if (getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    }
    if (err != 0) {
      return WithErrno(Error(ErrorCode::kTryAgainLater,
                             absl::StrCat("the dhcp daemon is not running (connecting to ", socket_path,
                                          ": ", strerror(err), "); start it with \"dhcp daemon\"")),
                       err);
    }
  }
  const std::string text_out = Dump(request);
  for (size_t sent = 0; sent < text_out.size();) {
    ssize_t n = send(fd.get(), text_out.data() + sent, text_out.size() - sent, MSG_NOSIGNAL);
    if (n >= 0) {
      sent += static_cast<size_t>(n);
    } else if (errno == EAGAIN) {
      if (!WaitReady(fd.get(), POLLOUT, deadline)) return NoAnswer(socket_path, budget);
    } else if (errno != EINTR) {
      return IoError("writing", "the dhcp socket", errno);
    }
  }
  shutdown(fd.get(), SHUT_WR);
  std::string text;
  char buf[16384];
  for (;;) {
    ssize_t n = read(fd.get(), buf, sizeof(buf));
    if (n > 0) {
      text.append(buf, static_cast<size_t>(n));
      if (text.size() > (1 << 20)) return Error(ErrorCode::kIoFailure, "dhcp socket: message too long");
    } else if (n == 0) {
      break;
    } else if (errno == EAGAIN) {
      if (!WaitReady(fd.get(), POLLIN, deadline)) return NoAnswer(socket_path, budget);
    } else if (errno != EINTR) {
      return IoError("reading", "the dhcp socket", errno);
    }
  }
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

#include "bus_probe.h"

#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace cni::firewall::firewalld {
namespace {

constexpr int kTimeoutSeconds = 5;
constexpr uint32_t kMaxMessage = 1 << 20;

// The socket a D-Bus address names: a path, or "@name" for an abstract one;
// empty when the first address is not a Unix one this client speaks.
std::string SocketOf(absl::string_view address) {
  absl::string_view first = address.substr(0, address.find(';'));
  if (!absl::ConsumePrefix(&first, "unix:")) return "";
  for (absl::string_view kv : absl::StrSplit(first, ',')) {
    std::string value;
    bool abstract = absl::ConsumePrefix(&kv, "abstract=");
    if (!abstract && !absl::ConsumePrefix(&kv, "path=")) continue;
    for (size_t i = 0; i < kv.size(); ++i) {  // %XX escapes
      if (kv[i] == '%' && i + 2 < kv.size() && absl::ascii_isxdigit(static_cast<unsigned char>(kv[i + 1])) &&
          absl::ascii_isxdigit(static_cast<unsigned char>(kv[i + 2]))) {
        value.push_back(static_cast<char>(std::strtol(std::string(kv.substr(i + 1, 2)).c_str(), nullptr, 16)));
        i += 2;
      } else {
        value.push_back(kv[i]);
      }
    }
    return abstract ? "@" + value : value;
  }
  return "";
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

bool SendAll(int fd, const std::string& data) {
  for (size_t sent = 0; sent < data.size();) {
    ssize_t n = send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

bool RecvAll(int fd, std::string& into, size_t n) {
  const size_t start = into.size();
  into.resize(start + n);
  for (size_t got = 0; got < n;) {
    ssize_t r = recv(fd, into.data() + start + got, n - got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    got += static_cast<size_t>(r);
  }
  return true;
}

// Little-endian marshalling of one method call to the bus itself.
class Writer {
 public:
  void Pad(size_t to) {
    while (b_.size() % to != 0) b_.push_back('\0');
  }
  void Byte(uint8_t v) { b_.push_back(static_cast<char>(v)); }
  void U32(uint32_t v) {
    Pad(4);
    for (int i = 0; i < 4; ++i) b_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  void Str(absl::string_view s) {  // 's' and 'o'
    U32(static_cast<uint32_t>(s.size()));
    b_.append(s.data(), s.size());
    b_.push_back('\0');
  }
  void Sig(absl::string_view s) {  // 'g'
    Byte(static_cast<uint8_t>(s.size()));
    b_.append(s.data(), s.size());
    b_.push_back('\0');
  }
  void Field(uint8_t code, char type, absl::string_view value) {
    Pad(8);
    Byte(code);
    Sig(std::string(1, type));
    if (type == 'g') {
      Sig(value);
    } else {
      Str(value);
    }
  }
  std::string& bytes() { return b_; }

 private:
  std::string b_;
};

std::string MethodCall(uint32_t serial, const char* member, const char* arg) {
  Writer body;
  if (arg != nullptr) body.Str(arg);
  Writer m;
  for (char c : {'l', '\1', '\0', '\1'}) m.Byte(static_cast<uint8_t>(c));
  m.U32(static_cast<uint32_t>(body.bytes().size()));
  m.U32(serial);
  m.U32(0);  // the header fields' length, filled in below
  const size_t fields_start = m.bytes().size();
  m.Field(1, 'o', "/org/freedesktop/DBus");
  m.Field(2, 's', "org.freedesktop.DBus");
  m.Field(3, 's', member);
  m.Field(6, 's', "org.freedesktop.DBus");
  if (arg != nullptr) m.Field(8, 'g', "s");
  const uint32_t fields_len = static_cast<uint32_t>(m.bytes().size() - fields_start);
  for (int i = 0; i < 4; ++i) m.bytes()[12 + i] = static_cast<char>((fields_len >> (8 * i)) & 0xff);
  m.Pad(8);
  return m.bytes() + body.bytes();
}

uint32_t ReadU32(const std::string& b, size_t at, bool little) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) {
    const uint32_t byte = static_cast<unsigned char>(b[at + i]);
    v |= little ? byte << (8 * i) : byte << (8 * (3 - i));
  }
  return v;
}

// One message's type and REPLY_SERIAL (0 when it has none); false when it
// cannot be read as this client expects.
struct Header {
  uint8_t type = 0;
  uint32_t reply_serial = 0;
};

bool ReadMessage(int fd, Header& h, bool& io_failed) {
  std::string b;
  if (!RecvAll(fd, b, 16)) return io_failed = true, false;
  const bool little = b[0] == 'l';
  if (!little && b[0] != 'B') return false;
  h.type = static_cast<uint8_t>(b[1]);
  const uint32_t body_len = ReadU32(b, 4, little);
  const uint32_t fields_len = ReadU32(b, 12, little);
  if (body_len > kMaxMessage || fields_len > kMaxMessage) return false;
  const size_t header_end = (16 + fields_len + 7) / 8 * 8;
  if (!RecvAll(fd, b, header_end - 16 + body_len)) return io_failed = true, false;
  h.reply_serial = 0;
  for (size_t pos = 16; pos < 16 + fields_len;) {
    pos = (pos + 7) / 8 * 8;
    if (pos + 3 > b.size()) return false;
    const uint8_t code = static_cast<uint8_t>(b[pos]);
    const size_t sig_len = static_cast<unsigned char>(b[pos + 1]);
    if (sig_len != 1) return false;
    const char type = b[pos + 2];
    pos += 4;  // code, signature length, type, NUL
    if (type == 'u' || type == 's' || type == 'o' || type == 'h') {
      pos = (pos + 3) / 4 * 4;
      if (pos + 4 > b.size()) return false;
      const uint32_t v = ReadU32(b, pos, little);
      pos += 4;
      if (type == 's' || type == 'o') pos += static_cast<size_t>(v) + 1;
      if (code == 5 && type == 'u') h.reply_serial = v;
    } else if (type == 'g') {
      if (pos >= b.size()) return false;
      pos += static_cast<unsigned char>(b[pos]) + 2;
    } else if (type == 'y') {
      pos += 1;
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace

Probe ProbeFirewalld() {
  const char* env = secure_getenv("DBUS_SYSTEM_BUS_ADDRESS");
  const std::string socket_name =
      env == nullptr || *env == '\0' ? std::string("/run/dbus/system_bus_socket") : SocketOf(env);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_name.empty() || socket_name.size() >= sizeof(addr.sun_path)) return Probe::kCannotTell;
  std::memcpy(addr.sun_path, socket_name.data(), socket_name.size());
  socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + socket_name.size());
  if (socket_name[0] == '@') {
    addr.sun_path[0] = '\0';
  } else {
    len += 1;
  }
  Fd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return Probe::kCannotTell;
  timeval tv{.tv_sec = kTimeoutSeconds, .tv_usec = 0};
  setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  // No bus listening: firewalld cannot be reached either (sd-bus's connect
  // failing made the auto backend pick iptables before).
  if (connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), len) != 0) return Probe::kNotRunning;

  // SASL EXTERNAL with our uid, in hex of its decimal digits.
  std::string uid_hex;
  for (char c : std::to_string(geteuid())) absl::StrAppend(&uid_hex, absl::Hex(static_cast<unsigned char>(c)));
  if (!SendAll(fd.get(), std::string("\0", 1) + "AUTH EXTERNAL " + uid_hex + "\r\n")) return Probe::kNotRunning;
  std::string line;
  while (!absl::EndsWith(line, "\r\n")) {
    if (line.size() > 512) return Probe::kCannotTell;
    if (!RecvAll(fd.get(), line, 1)) return Probe::kNotRunning;
  }
  if (!absl::StartsWith(line, "OK ")) return Probe::kCannotTell;
  if (!SendAll(fd.get(), "BEGIN\r\n" + MethodCall(1, "Hello", nullptr) +
                             MethodCall(2, "GetNameOwner", "org.fedoraproject.FirewallD1"))) {
    return Probe::kNotRunning;
  }
  // The Hello reply and the NameAcquired signal may come first.
  for (int messages = 0; messages < 16; ++messages) {
    Header h;
    bool io_failed = false;
    if (!ReadMessage(fd.get(), h, io_failed)) return io_failed ? Probe::kNotRunning : Probe::kCannotTell;
    if (h.reply_serial != 2) continue;
    if (h.type == 2) return Probe::kRunning;     // METHOD_RETURN: the owner's unique name
    if (h.type == 3) return Probe::kNotRunning;  // ERROR: NameHasNoOwner
    return Probe::kCannotTell;
  }
  return Probe::kCannotTell;
}

}  // namespace cni::firewall::firewalld

#include "absl/strings/string_view.h"
#include "cni/base/ip.h"

#include <arpa/inet.h>
#include <sys/random.h>

#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "cni/base/error.h"

namespace cni::net {
namespace {

absl::Status InvalidText(absl::string_view what, absl::string_view text) {
  return Error(ErrorCode::kInvalidNetworkConfig, absl::StrCat("invalid ", what, " \"", text, "\""));
}

}  // namespace

IpAddress IpAddress::V4(std::array<uint8_t, 4> bytes) {
  IpAddress ip;
  ip.family_ = Family::kV4;
  std::memcpy(ip.bytes_.data(), bytes.data(), 4);
  return ip;
}

IpAddress IpAddress::V6(std::array<uint8_t, 16> bytes) {
  IpAddress ip;
  ip.family_ = Family::kV6;
  ip.bytes_ = bytes;
  return ip;
}

absl::StatusOr<IpAddress> IpAddress::Parse(absl::string_view text) {
  std::string s(text);  // inet_pton needs a NUL-terminated string
  IpAddress ip;
  if (s.find(':') == std::string::npos) {
    if (inet_pton(AF_INET, s.c_str(), ip.bytes_.data()) == 1) {
      ip.family_ = Family::kV4;
      return ip;
    }
  } else if (inet_pton(AF_INET6, s.c_str(), ip.bytes_.data()) == 1) {
    ip.family_ = Family::kV6;
    return ip;
  }
  return InvalidText("IP address", text);
}

bool IpAddress::IsUnspecified() const {
  for (int i = 0; i < byte_length(); ++i) {
    if (bytes_[i] != 0) return false;
  }
  return true;
}

bool IpAddress::IsMulticast() const {
  return is_v4() ? (bytes_[0] & 0xf0) == 0xe0 : bytes_[0] == 0xff;
}

std::string IpAddress::ToString() const {
  char buf[INET6_ADDRSTRLEN];
  inet_ntop(is_v4() ? AF_INET : AF_INET6, bytes_.data(), buf, sizeof(buf));
  return buf;
}

IpAddress IpAddress::Add(int64_t n) const {
  IpAddress out = *this;
  // Big-endian add with carry/borrow over byte_length() bytes.
  bool negative = n < 0;
  uint64_t mag = negative ? static_cast<uint64_t>(-(n + 1)) + 1 : static_cast<uint64_t>(n);
  int carry = 0;
  for (int i = byte_length() - 1; i >= 0; --i) {
    int delta = static_cast<int>(mag & 0xff);
    mag >>= 8;
    int v = negative ? out.bytes_[i] - delta - carry : out.bytes_[i] + delta + carry;
    if (negative) {
      carry = v < 0 ? 1 : 0;
      v += carry * 256;
    } else {
      carry = v > 255 ? 1 : 0;
      v -= carry * 256;
    }
    out.bytes_[i] = static_cast<uint8_t>(v);
    if (mag == 0 && carry == 0) break;
  }
  return out;
}

IpAddress IpAddress::Next() const { return Add(1); }
IpAddress IpAddress::Prev() const { return Add(-1); }

std::strong_ordering operator<=>(const IpAddress& a, const IpAddress& b) {
  if (a.family_ != b.family_) return a.family_ <=> b.family_;
  int c = std::memcmp(a.bytes_.data(), b.bytes_.data(), a.byte_length());
  return c <=> 0;
}

absl::StatusOr<IpPrefix> IpPrefix::Parse(absl::string_view text) {
  size_t slash = text.find('/');
  if (slash == absl::string_view::npos) return InvalidText("CIDR address", text);
  auto addr = IpAddress::Parse(text.substr(0, slash));
  absl::string_view len_text = text.substr(slash + 1);
  int len = 0;
  if (!addr.ok() || len_text.empty() || len_text.size() > 3 ||
      !absl::SimpleAtoi(len_text, &len) || len < 0 || len > addr->bit_length() ||
      len_text.find_first_not_of("0123456789") != absl::string_view::npos) {
    return InvalidText("CIDR address", text);
  }
  return IpPrefix(*addr, len);
}

IpPrefix IpPrefix::Host(const IpAddress& addr) { return IpPrefix(addr, addr.bit_length()); }

IpAddress IpPrefix::Mask() const {
  std::array<uint8_t, 16> m{};
  for (int i = 0; i < len_; ++i) m[i / 8] |= static_cast<uint8_t>(0x80 >> (i % 8));
  if (addr_.is_v4()) return IpAddress::V4({m[0], m[1], m[2], m[3]});
  return IpAddress::V6(m);
}

IpPrefix IpPrefix::Network() const {
  IpAddress mask = Mask();
  std::array<uint8_t, 16> b{};
  for (int i = 0; i < addr_.byte_length(); ++i) b[i] = addr_.data()[i] & mask.data()[i];
  if (addr_.is_v4()) return IpPrefix(IpAddress::V4({b[0], b[1], b[2], b[3]}), len_);
  return IpPrefix(IpAddress::V6(b), len_);
}

IpAddress IpPrefix::LastAddress() const {
  IpAddress mask = Mask();
  std::array<uint8_t, 16> b{};
  for (int i = 0; i < addr_.byte_length(); ++i) {
    b[i] = static_cast<uint8_t>(addr_.data()[i] | static_cast<uint8_t>(~mask.data()[i]));
  }
  if (addr_.is_v4()) return IpAddress::V4({b[0], b[1], b[2], b[3]});
  return IpAddress::V6(b);
}

bool IpPrefix::Contains(const IpAddress& ip) const {
  if (ip.family() != family()) return false;
  return IpPrefix(ip, len_).Network().addr() == Network().addr();
}

bool IpPrefix::Overlaps(const IpPrefix& other) const {
  if (other.family() != family()) return false;
  return Contains(other.Network().addr()) || other.Contains(Network().addr());
}

std::string IpPrefix::ToString() const { return absl::StrCat(addr_.ToString(), "/", len_); }

absl::StatusOr<MacAddress> MacAddress::Parse(absl::string_view text) {
  std::array<uint8_t, 6> b{};
  std::vector<absl::string_view> parts = absl::StrSplit(text, absl::ByAnyChar(":-"));
  if (parts.size() != 6) return InvalidText("MAC address", text);
  for (size_t i = 0; i < 6; ++i) {
    int v = 0;
    if (parts[i].size() != 2 || !absl::SimpleHexAtoi(parts[i], &v)) {
      return InvalidText("MAC address", text);
    }
    b[i] = static_cast<uint8_t>(v);
  }
  return MacAddress(b);
}

MacAddress MacAddress::RandomLocal() {
  std::array<uint8_t, 6> b{};
  if (getrandom(b.data(), b.size(), 0) != static_cast<ssize_t>(b.size())) {
    // getrandom on a 6-byte buffer does not fail short after boot; fall back anyway.
    for (auto& x : b) x = static_cast<uint8_t>(rand());
  }
  b[0] = static_cast<uint8_t>((b[0] & 0xfe) | 0x02);  // unicast, locally administered
  return MacAddress(b);
}

std::string MacAddress::ToString() const {
  return absl::StrFormat("%02x:%02x:%02x:%02x:%02x:%02x", bytes_[0], bytes_[1], bytes_[2],
                         bytes_[3], bytes_[4], bytes_[5]);
}

}  // namespace cni::net

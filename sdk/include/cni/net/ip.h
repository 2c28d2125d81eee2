// IP addresses, prefixes and MAC addresses: parse, print, arithmetic.
// Pure value types; no system calls.
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/strings/string_view.h"
#include "absl/status/statusor.h"

namespace cni::net {

enum class Family : uint8_t { kV4 = 4, kV6 = 6 };

// An IPv4 or IPv6 address. IPv4 is stored in the first 4 bytes.
class IpAddress {
 public:
  IpAddress() = default;  // 0.0.0.0
  static IpAddress V4(std::array<uint8_t, 4> bytes);
  static IpAddress V6(std::array<uint8_t, 16> bytes);
  // Parses dotted-quad or RFC 4291 text. IPv4-mapped IPv6 ("::ffff:1.2.3.4")
  // stays IPv6. Errors are code 7 naming the text.
  static absl::StatusOr<IpAddress> Parse(absl::string_view text);

  Family family() const { return family_; }
  bool is_v4() const { return family_ == Family::kV4; }
  bool is_v6() const { return family_ == Family::kV6; }
  int bit_length() const { return is_v4() ? 32 : 128; }
  int byte_length() const { return is_v4() ? 4 : 16; }
  const uint8_t* data() const { return bytes_.data(); }
  bool IsUnspecified() const;  // 0.0.0.0 or ::
  bool IsMulticast() const;

  std::string ToString() const;
  // The next / previous address (wrapping around inside the family).
  IpAddress Next() const;
  IpAddress Prev() const;
  // this + n (n may be negative); wraps inside the family.
  IpAddress Add(int64_t n) const;

  friend bool operator==(const IpAddress&, const IpAddress&) = default;
  friend std::strong_ordering operator<=>(const IpAddress& a, const IpAddress& b);

 private:
  Family family_ = Family::kV4;
  std::array<uint8_t, 16> bytes_{};
};

// An address with a prefix length ("10.1.2.3/24"). The address keeps its host
// bits (an interface address); Network() clears them.
class IpPrefix {
 public:
  IpPrefix() = default;
  IpPrefix(IpAddress addr, int len) : addr_(addr), len_(len) {}
  // Parses "addr/len". Errors are code 7 naming the text.
  static absl::StatusOr<IpPrefix> Parse(absl::string_view text);
  // A host prefix (/32 or /128) for `addr`.
  static IpPrefix Host(const IpAddress& addr);

  const IpAddress& addr() const { return addr_; }
  int len() const { return len_; }
  Family family() const { return addr_.family(); }
  bool is_v4() const { return addr_.is_v4(); }

  IpPrefix Network() const;         // host bits cleared
  IpAddress LastAddress() const;    // host bits set (broadcast for IPv4)
  IpAddress Mask() const;           // e.g. 255.255.255.0
  bool HasHostBits() const { return Network().addr() != addr_; }
  bool Contains(const IpAddress& ip) const;
  bool Overlaps(const IpPrefix& other) const;
  std::string ToString() const;     // "addr/len" as stored (host bits kept)

  friend bool operator==(const IpPrefix&, const IpPrefix&) = default;

 private:
  IpAddress addr_;
  int len_ = 0;
};

// A 48-bit Ethernet MAC address.
class MacAddress {
 public:
  MacAddress() = default;
  explicit MacAddress(std::array<uint8_t, 6> bytes) : bytes_(bytes) {}
  // Accepts "aa:bb:cc:dd:ee:ff" and "aa-bb-..." (case-insensitive). Code 7 on error.
  static absl::StatusOr<MacAddress> Parse(absl::string_view text);
  // A random unicast, locally administered address.
  static MacAddress RandomLocal();

  const std::array<uint8_t, 6>& bytes() const { return bytes_; }
  std::string ToString() const;  // lower-case, colon separated
  friend bool operator==(const MacAddress&, const MacAddress&) = default;

 private:
  std::array<uint8_t, 6> bytes_{};
};

}  // namespace cni::net

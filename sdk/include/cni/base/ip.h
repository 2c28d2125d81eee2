// IP addresses, prefixes and MAC addresses: parse, print, arithmetic.
// Pure value types; no system calls.
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cni::net {

// An address family: IPv4 or IPv6 (values are the IP version numbers).
enum class Family : uint8_t { kV4 = 4, kV6 = 6 };

// An IPv4 or IPv6 address. IPv4 is stored in the first 4 bytes.
class IpAddress {
 public:
  IpAddress() = default;  // 0.0.0.0
  // An IPv4 address from its 4 bytes in network order.
  static IpAddress V4(std::array<uint8_t, 4> bytes);
  // An IPv6 address from its 16 bytes in network order.
  static IpAddress V6(std::array<uint8_t, 16> bytes);
  // Parses dotted-quad or RFC 4291 text. IPv4-mapped IPv6 ("::ffff:1.2.3.4")
  // stays IPv6. Errors are code 7 naming the text.
  static absl::StatusOr<IpAddress> Parse(absl::string_view text);

  // kV4 or kV6.
  Family family() const { return family_; }
  // True for an IPv4 address.
  bool is_v4() const { return family_ == Family::kV4; }
  // True for an IPv6 address (IPv4-mapped ones included).
  bool is_v6() const { return family_ == Family::kV6; }
  // 32 or 128.
  int bit_length() const { return is_v4() ? 32 : 128; }
  // 4 or 16: the number of address bytes at data().
  int byte_length() const { return is_v4() ? 4 : 16; }
  // The address bytes, network order (read byte_length() of them).
  const uint8_t* data() const { return bytes_.data(); }
  bool IsUnspecified() const;  // 0.0.0.0 or ::
  // 224.0.0.0/4 or ff00::/8.
  bool IsMulticast() const;

  // Canonical text (inet_ntop): "10.1.2.3", "fd00::1".
  std::string ToString() const;
  // The next address (wrapping around inside the family).
  IpAddress Next() const;
  // The previous address (wrapping around inside the family).
  IpAddress Prev() const;
  // this + n (n may be negative); wraps inside the family.
  IpAddress Add(int64_t n) const;

  // Same family and same bytes.
  friend bool operator==(const IpAddress&, const IpAddress&) = default;
  // Every IPv4 address sorts before every IPv6 one; then numeric order.
  friend std::strong_ordering operator<=>(const IpAddress& a, const IpAddress& b);

 private:
  Family family_ = Family::kV4;
  std::array<uint8_t, 16> bytes_{};
};

// An address with a prefix length ("10.1.2.3/24"). The address keeps its host
// bits (an interface address); Network() clears them.
class IpPrefix {
 public:
  // 0.0.0.0/0.
  IpPrefix() = default;
  // `addr`/`len`, host bits kept; `len` is not checked against the family.
  IpPrefix(IpAddress addr, int len) : addr_(addr), len_(len) {}
  // Parses "addr/len". Errors are code 7 naming the text.
  static absl::StatusOr<IpPrefix> Parse(absl::string_view text);
  // A host prefix (/32 or /128) for `addr`.
  static IpPrefix Host(const IpAddress& addr);

  // The address, host bits included.
  const IpAddress& addr() const { return addr_; }
  // The prefix length (0-32 or 0-128).
  int len() const { return len_; }
  // The address's family.
  Family family() const { return addr_.family(); }
  // True for an IPv4 prefix.
  bool is_v4() const { return addr_.is_v4(); }

  IpPrefix Network() const;         // host bits cleared
  IpAddress LastAddress() const;    // host bits set (broadcast for IPv4)
  IpAddress Mask() const;           // e.g. 255.255.255.0
  // True when the address is not the network address ("10.1.2.3/24").
  bool HasHostBits() const { return Network().addr() != addr_; }
  // True when `ip` (same family) lies in this prefix's network.
  bool Contains(const IpAddress& ip) const;
  // True when the two networks (same family) share any address.
  bool Overlaps(const IpPrefix& other) const;
  std::string ToString() const;     // "addr/len" as stored (host bits kept)

  // Same address (host bits included) and same length.
  friend bool operator==(const IpPrefix&, const IpPrefix&) = default;

 private:
  IpAddress addr_;
  int len_ = 0;
};

// A 48-bit Ethernet MAC address.
class MacAddress {
 public:
  // 00:00:00:00:00:00.
  MacAddress() = default;
  // From its 6 bytes, in transmission order.
  explicit MacAddress(std::array<uint8_t, 6> bytes) : bytes_(bytes) {}
  // Accepts "aa:bb:cc:dd:ee:ff" and "aa-bb-..." (case-insensitive). Code 7 on error.
  static absl::StatusOr<MacAddress> Parse(absl::string_view text);
  // A random unicast, locally administered address.
  static MacAddress RandomLocal();

  // The 6 bytes, in transmission order.
  const std::array<uint8_t, 6>& bytes() const { return bytes_; }
  std::string ToString() const;  // lower-case, colon separated
  // Same 6 bytes.
  friend bool operator==(const MacAddress&, const MacAddress&) = default;

 private:
  std::array<uint8_t, 6> bytes_{};
};

}  // namespace cni::net

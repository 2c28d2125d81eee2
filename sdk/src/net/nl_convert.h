// Internal: conversions between the SDK's value types and libnl's nl_addr.
#pragma once

#include <netlink/addr.h>
#include <sys/socket.h>

#include <array>
#include <cstring>
#include <optional>

#include "cni/net/ip.h"
#include "cni/net/netlink.h"

namespace cni::net::internal {

inline int AfOf(Family f) { return f == Family::kV4 ? AF_INET : AF_INET6; }

// An nl_addr holding `ip` with prefix length `len` (-1: full length).
inline NlAddrPtr ToNlAddr(const IpAddress& ip, int len = -1) {
  NlAddrPtr a(nl_addr_build(AfOf(ip.family()), ip.data(), ip.byte_length()));
  if (a) nl_addr_set_prefixlen(a.get(), len < 0 ? ip.bit_length() : len);
  return a;
}

inline NlAddrPtr ToNlAddr(const IpPrefix& p) { return ToNlAddr(p.addr(), p.len()); }

inline NlAddrPtr ToNlAddr(const MacAddress& mac) {
  return NlAddrPtr(nl_addr_build(AF_LLC, mac.bytes().data(), mac.bytes().size()));
}

// The address in `a`, if it is an IPv4/IPv6 address (not borrowed).
inline std::optional<IpAddress> FromNlAddr(const nl_addr* a) {
  if (a == nullptr) return std::nullopt;
  auto* na = const_cast<nl_addr*>(a);
  const auto* bytes = static_cast<const uint8_t*>(nl_addr_get_binary_addr(na));
  unsigned len = nl_addr_get_len(na);
  if (nl_addr_get_family(na) == AF_INET && len == 4) {
    std::array<uint8_t, 4> b;
    std::memcpy(b.data(), bytes, 4);
    return IpAddress::V4(b);
  }
  if (nl_addr_get_family(na) == AF_INET6 && len == 16) {
    std::array<uint8_t, 16> b;
    std::memcpy(b.data(), bytes, 16);
    return IpAddress::V6(b);
  }
  return std::nullopt;
}

inline std::optional<MacAddress> MacFromNlAddr(const nl_addr* a) {
  if (a == nullptr) return std::nullopt;
  auto* na = const_cast<nl_addr*>(a);
  if (nl_addr_get_len(na) != 6) return std::nullopt;
  std::array<uint8_t, 6> b;
  std::memcpy(b.data(), nl_addr_get_binary_addr(na), 6);
  return MacAddress(b);
}

}  // namespace cni::net::internal

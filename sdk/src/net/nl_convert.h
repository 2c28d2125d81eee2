// Internal: conversions between the SDK's value types and netlink's
// address families and attributes, both ways.
#pragma once

#include <netlink/attr.h>
#include <sys/socket.h>

#include <array>
#include <cstring>
#include <optional>

#include "cni/base/ip.h"

namespace cni::net::internal {

inline int AfOf(Family f) { return f == Family::kV4 ? AF_INET : AF_INET6; }

// The address in attribute `a` (RTA_GATEWAY, IFA_LOCAL, FRA_SRC, ...) when
// it has `family`'s length; nullopt for a missing or malformed attribute.
inline std::optional<IpAddress> AddressOf(const nlattr* a, Family family) {
  if (a == nullptr) return std::nullopt;
  const auto* bytes = static_cast<const uint8_t*>(nla_data(a));
  if (family == Family::kV4 && nla_len(a) == 4) {
    std::array<uint8_t, 4> b;
    std::memcpy(b.data(), bytes, 4);
    return IpAddress::V4(b);
  }
  if (family == Family::kV6 && nla_len(a) == 16) {
    std::array<uint8_t, 16> b;
    std::memcpy(b.data(), bytes, 16);
    return IpAddress::V6(b);
  }
  return std::nullopt;
}

// Puts `ip` as attribute `type` (RTA_DST, IFA_LOCAL, FRA_SRC, ...): its 4
// or 16 bytes. libnl's negative error code on failure.
inline int PutAddress(nl_msg* msg, int type, const IpAddress& ip) {
  return nla_put(msg, type, ip.byte_length(), ip.data());
}

}  // namespace cni::net::internal

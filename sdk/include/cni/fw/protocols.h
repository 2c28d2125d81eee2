// nf_tables families and transport protocols as enums: what the fw layer's
// batches, rules and listings speak of. This is the one place that maps each
// to its nft name ("ip6", "sctp") and its kernel number (NFPROTO_*,
// IPPROTO_*). A name read from a configuration or a file becomes an enum at
// that parse boundary (Parse...), so an unknown family or protocol can never
// reach a rule, a listing or a commit.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cni::fw {

// The family of an nf_tables table (and so of its chains and rules).
enum class NftFamily : uint8_t {
  kIp,      // "ip": IPv4 (iptables-nft's tables, portmap's cni_hostport)
  kIp6,     // "ip6": IPv6
  kInet,    // "inet": IPv4 and IPv6 together (ipMasq's table)
  kBridge,  // "bridge": frames crossing a bridge (spoof check)
  kArp,     // "arp": ARP packets
  kNetdev,  // "netdev": one device's ingress and egress
};

// nft's name of `family`: "ip", "ip6", "inet", "bridge", "arp" or "netdev"
// (a static string).
const char* NftFamilyName(NftFamily family);
// The kernel's number of `family` (NFPROTO_IPV4, ...), as nf_tables messages
// carry it in nfgen_family.
uint8_t NftFamilyNumber(NftFamily family);
// The family nft calls `name` (exactly one of the names above); anything
// else: code 7, naming it.
absl::StatusOr<NftFamily> ParseNftFamily(absl::string_view name);
// The family of IPv4 (kIp) or, when `ipv6`, IPv6 (kIp6) tables.
NftFamily IpFamily(bool ipv6);

// A transport protocol whose ports a rule can match.
enum class L4Protocol : uint8_t {
  kTcp,   // "tcp"
  kUdp,   // "udp"
  kSctp,  // "sctp"
};

// nft's (and iptables') name of `protocol`: "tcp", "udp" or "sctp" (a static
// string).
const char* L4ProtocolName(L4Protocol protocol);
// The kernel's number of `protocol` (IPPROTO_TCP, ...).
uint8_t L4ProtocolNumber(L4Protocol protocol);
// The protocol named `name` ("tcp", "udp" or "sctp", lower case); anything
// else: code 7, naming it.
absl::StatusOr<L4Protocol> ParseL4Protocol(absl::string_view name);

}  // namespace cni::fw

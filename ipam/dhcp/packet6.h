// DHCPv6 messages (RFC 8415) as the client side of a stateful exchange
// builds and reads them: the message header (type, 24-bit transaction ID),
// its options, the IA_NA option with its addresses and status, DUID-LL, and
// the DNS options of RFC 3646 (23 servers, 24 search list).
//
// The groundwork of the daemon's DHCPv6 client (not wired to the plugin
// yet: see README.md). Decoding is defensive: every length is checked, a
// short or overlong option is an error, never a read past the input.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/base/ip.h"

namespace cni::dhcp::v6 {

enum class MessageType : uint8_t {
  kSolicit = 1,
  kAdvertise = 2,
  kRequest = 3,
  kConfirm = 4,
  kRenew = 5,
  kRebind = 6,
  kReply = 7,
  kRelease = 8,
  kDecline = 9,
};

namespace opt {
inline constexpr uint16_t kClientId = 1;
inline constexpr uint16_t kServerId = 2;
inline constexpr uint16_t kIaNa = 3;
inline constexpr uint16_t kIaAddr = 5;
inline constexpr uint16_t kOptionRequest = 6;
inline constexpr uint16_t kPreference = 7;
inline constexpr uint16_t kElapsedTime = 8;
inline constexpr uint16_t kStatusCode = 13;
inline constexpr uint16_t kRapidCommit = 14;
inline constexpr uint16_t kUserClass = 15;
inline constexpr uint16_t kVendorClass = 16;
inline constexpr uint16_t kDnsServers = 23;
inline constexpr uint16_t kDomainList = 24;
inline constexpr uint16_t kSntpServers = 31;
inline constexpr uint16_t kFqdn = 39;
inline constexpr uint16_t kNtpServer = 56;
}  // namespace opt

// Status codes (option 13) the client acts on.
inline constexpr uint16_t kStatusSuccess = 0;
inline constexpr uint16_t kStatusNoAddrsAvail = 2;
inline constexpr uint16_t kStatusNoBinding = 3;

struct Message {
  MessageType type = MessageType::kSolicit;
  uint32_t xid = 0;  // 24 bits
  std::vector<std::pair<uint16_t, std::string>> options;  // in wire order; codes may repeat

  // The first option `code`, nullptr without one.
  const std::string* Get(uint16_t code) const;
  void Add(uint16_t code, std::string value) { options.emplace_back(code, std::move(value)); }

  std::string Encode() const;
  // Code 6 (decoding failure) for a message shorter than its header or an
  // option that runs past the end.
  static absl::StatusOr<Message> Decode(absl::string_view wire);
};

// One address of an IA_NA (option 5).
struct IaAddress {
  net::IpAddress addr;
  uint32_t preferred = 0;  // seconds
  uint32_t valid = 0;      // seconds
};

// An IA_NA (option 3): its identifier, T1/T2, addresses and status.
struct IaNa {
  uint32_t iaid = 0;
  uint32_t t1 = 0;
  uint32_t t2 = 0;
  std::vector<IaAddress> addresses;
  uint16_t status = kStatusSuccess;  // option 13 inside the IA, success when absent
  std::string status_message;
};

std::string EncodeIaNa(const IaNa& ia);
absl::StatusOr<IaNa> DecodeIaNa(absl::string_view value);

// The message's own status code (option 13 at the top level), success when absent.
uint16_t StatusOf(const Message& msg);

// A DHCPv6 option named in the configuration: "dhcp6." followed by a name
// of the table (client-id, user-class, vendor-class, name-servers,
// domain-search, sntp-servers, fqdn, ntp-server, as ISC dhclient names
// them) or by a number 1-65535. nullopt for a name without the prefix (a
// DHCPv4 option); code 7 for an unknown name after it.
absl::StatusOr<std::optional<uint16_t>> ParseOption6Name(absl::string_view name);

// The value of a provided DHCPv6 option from its configured text: option
// 39 (RFC 4704) as flags 0 and the name in DNS labels (a name without a
// trailing dot is partial, as a bare host name is); option 1 (client-id,
// a DUID) from hex digits, optionally separated by ':' (code 7 otherwise);
// any other option as the bytes given.
absl::StatusOr<std::string> EncodeOption6(uint16_t code, absl::string_view text);

// DUID-LL (RFC 8415 11.4) of an Ethernet link address.
std::string DuidLl(const std::array<uint8_t, 6>& mac);

// Option 23's addresses (an odd length is ignored whole) and option 24's
// domain names (RFC 1035 labels, no compression; a malformed name ends the list).
std::vector<net::IpAddress> DnsServers(const Message& msg);
std::vector<std::string> DomainList(const Message& msg);

}  // namespace cni::dhcp::v6

// DHCPv4 messages (RFC 2131/2132): the fixed BOOTP header, the options as
// data (one table row per option the plugin names or reads), and the IPv4/UDP
// framing the client needs to talk before its interface has an address.
//
// Decode() is the only code that reads bytes from the network; it is fuzzed
// (tests/fuzz/fuzz_dhcp.cc) and never trusts a length it has not checked.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/base/ip.h"

namespace cni::dhcp {

// Option 53 values.
enum class MessageType : uint8_t {
  kDiscover = 1,
  kOffer = 2,
  kRequest = 3,
  kDecline = 4,
  kAck = 5,
  kNak = 6,
  kRelease = 7,
  kInform = 8,
};

// The option codes the client itself reads or writes.
namespace opt {
inline constexpr uint8_t kPad = 0;
inline constexpr uint8_t kSubnetMask = 1;
inline constexpr uint8_t kRouter = 3;
inline constexpr uint8_t kDnsServers = 6;
inline constexpr uint8_t kHostName = 12;
inline constexpr uint8_t kDomainName = 15;
inline constexpr uint8_t kStaticRoutes = 33;
inline constexpr uint8_t kRequestedIp = 50;
inline constexpr uint8_t kLeaseTime = 51;
inline constexpr uint8_t kOverload = 52;
inline constexpr uint8_t kMessageType = 53;
inline constexpr uint8_t kServerId = 54;
inline constexpr uint8_t kParameterList = 55;
inline constexpr uint8_t kRenewalTime = 58;
inline constexpr uint8_t kRebindingTime = 59;
inline constexpr uint8_t kClientId = 61;
inline constexpr uint8_t kClasslessRoutes = 121;
inline constexpr uint8_t kEnd = 255;
}  // namespace opt

// How an option's value is laid out.
enum class OptionKind { kBytes, kIp, kIpList, kU32, kString, kRoutes };

// One row of the option table: the code, its dhcp-options(5) name, its layout.
struct OptionInfo {
  uint8_t code;
  const char* name;
  OptionKind kind;
};

// The table row for `code`, or nullptr for an option the table does not name.
const OptionInfo* FindOption(uint8_t code);

// An option named in the configuration: a dhcp-options(5) name from the table
// ("host-name", "routers", ...) or a decimal code 1-254. Code 7 otherwise.
absl::StatusOr<uint8_t> ParseOptionName(absl::string_view name);

// A route from option 121 (RFC 3442) or option 33.
struct StaticRoute {
  net::IpPrefix dst;
  net::IpAddress gw;  // 0.0.0.0: on-link
  friend bool operator==(const StaticRoute&, const StaticRoute&) = default;
};

// One DHCP message. Options keep their order of first appearance; a code seen
// more than once is concatenated (RFC 3396), as is an option split across the
// options field and the overloaded file/sname fields.
struct Message {
  uint8_t op = 1;  // 1 request (client), 2 reply (server)
  uint8_t htype = 1;
  uint8_t hlen = 6;
  uint8_t hops = 0;
  uint32_t xid = 0;
  uint16_t secs = 0;
  uint16_t flags = 0;  // 0x8000: broadcast
  std::array<uint8_t, 4> ciaddr{};
  std::array<uint8_t, 4> yiaddr{};
  std::array<uint8_t, 4> siaddr{};
  std::array<uint8_t, 4> giaddr{};
  std::array<uint8_t, 16> chaddr{};
  std::vector<std::pair<uint8_t, std::string>> options;

  // The raw value of `code`, nullptr when absent.
  const std::string* Get(uint8_t code) const;
  // Sets (replacing) or appends option `code`.
  void Set(uint8_t code, std::string value);
  void SetIp(uint8_t code, const net::IpAddress& ip);
  void SetU32(uint8_t code, uint32_t v);

  // Option 53, nullopt when absent or malformed.
  std::optional<MessageType> Type() const;
  // The first address of an IP (or IP list) option.
  std::optional<net::IpAddress> Ip(uint8_t code) const;
  std::vector<net::IpAddress> IpList(uint8_t code) const;
  std::optional<uint32_t> U32(uint8_t code) const;
  // Option 121 (RFC 3442); empty when absent or malformed (all or nothing).
  std::vector<StaticRoute> ClasslessRoutes() const;
  // Option 33: classful destination, router pairs.
  std::vector<StaticRoute> StaticRoutes() const;

  static net::IpAddress AddrOf(const std::array<uint8_t, 4>& a);
  static std::array<uint8_t, 4> BytesOf(const net::IpAddress& ip);

  // The wire form: header, magic cookie, options (values over 255 bytes split
  // into several), end, padded to BOOTP's 300 bytes.
  std::string Encode() const;
  // Parses a message. Code 6 when it is shorter than the header, lacks the
  // magic cookie or an option runs past the end.
  static absl::StatusOr<Message> Decode(absl::string_view bytes);
};

// Wraps `payload` in an IPv4 + UDP header (ports 68 -> 67, TTL 64, both
// checksums), as a packet socket of type SOCK_DGRAM sends it.
std::string FrameUdp(const net::IpAddress& src, const net::IpAddress& dst, absl::string_view payload);

// A UDP datagram to port 68 found in an IPv4 packet.
struct UdpDatagram {
  net::IpAddress src;
  absl::string_view payload;  // points into the packet
};
// Unwraps an IPv4 packet; nullopt unless it is an unfragmented UDP datagram
// from port 67 to port 68 whose lengths agree. The UDP checksum is not
// checked: veth hands packet sockets datagrams whose checksum the sender left
// to offload.
std::optional<UdpDatagram> UnframeUdp(absl::string_view packet);

// A one-line description for logs: "ACK xid 0x1234 yiaddr 10.0.0.5 server 10.0.0.1".
std::string Describe(const Message& m);

}  // namespace cni::dhcp

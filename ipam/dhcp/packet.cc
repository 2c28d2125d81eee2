#include "packet.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cni/base/error.h"

namespace cni::dhcp {
namespace {

// The option table. Names are those of dhcp-options(5); upstream accepts the
// first six of them in "request"/"provide" (its optionNameToID), we accept all.
constexpr OptionInfo kOptions[] = {
    {opt::kSubnetMask, "subnet-mask", OptionKind::kIp},
    {2, "time-offset", OptionKind::kU32},
    {opt::kRouter, "routers", OptionKind::kIpList},
    {4, "time-servers", OptionKind::kIpList},
    {opt::kDnsServers, "domain-name-servers", OptionKind::kIpList},
    {opt::kHostName, "host-name", OptionKind::kString},
    {opt::kDomainName, "domain-name", OptionKind::kString},
    {26, "interface-mtu", OptionKind::kBytes},
    {28, "broadcast-address", OptionKind::kIp},
    {opt::kStaticRoutes, "static-routes", OptionKind::kRoutes},
    {42, "ntp-servers", OptionKind::kIpList},
    {43, "vendor-encapsulated-options", OptionKind::kBytes},
    {opt::kRequestedIp, "dhcp-requested-address", OptionKind::kIp},
    {opt::kLeaseTime, "dhcp-lease-time", OptionKind::kU32},
    {opt::kOverload, "dhcp-option-overload", OptionKind::kBytes},
    {opt::kMessageType, "dhcp-message-type", OptionKind::kBytes},
    {opt::kServerId, "dhcp-server-identifier", OptionKind::kIp},
    {opt::kParameterList, "dhcp-parameter-request-list", OptionKind::kBytes},
    {56, "dhcp-message", OptionKind::kString},
    {57, "dhcp-max-message-size", OptionKind::kBytes},
    {opt::kRenewalTime, "dhcp-renewal-time", OptionKind::kU32},
    {opt::kRebindingTime, "dhcp-rebinding-time", OptionKind::kU32},
    {60, "vendor-class-identifier", OptionKind::kString},
    {opt::kClientId, "dhcp-client-identifier", OptionKind::kBytes},
    {77, "user-class", OptionKind::kString},
    {81, "fqdn", OptionKind::kBytes},
    {119, "domain-search", OptionKind::kBytes},
    {opt::kClasslessRoutes, "classless-static-routes", OptionKind::kRoutes},
};

constexpr uint8_t kCookie[4] = {99, 130, 83, 99};
constexpr size_t kHeaderLen = 236;  // up to the magic cookie
constexpr size_t kMinMessageLen = 300;

absl::Status Malformed(absl::string_view what) {
  return Error(ErrorCode::kDecodingFailure, absl::StrCat("malformed DHCP message: ", what));
}

uint16_t Load16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
uint32_t Load32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) << 24 | static_cast<uint32_t>(p[1]) << 16 |
         static_cast<uint32_t>(p[2]) << 8 | p[3];
}
void Put16(std::string& out, uint16_t v) {
  out.push_back(static_cast<char>(v >> 8));
  out.push_back(static_cast<char>(v & 0xff));
}
void Put32(std::string& out, uint32_t v) {
  Put16(out, static_cast<uint16_t>(v >> 16));
  Put16(out, static_cast<uint16_t>(v & 0xffff));
}

// Appends one option field's TLVs to `m`; stops at END.
absl::Status ParseOptionField(const uint8_t* p, size_t n, Message& m) {
  size_t i = 0;
  while (i < n) {
    uint8_t code = p[i++];
    if (code == opt::kPad) continue;
    if (code == opt::kEnd) return absl::OkStatus();
    if (i >= n) return Malformed(absl::StrCat("option ", code, " has no length"));
    size_t len = p[i++];
    if (len > n - i) return Malformed(absl::StrCat("option ", code, " runs past the end"));
    std::string value(reinterpret_cast<const char*>(p + i), len);
    i += len;
    auto it = std::find_if(m.options.begin(), m.options.end(),
                           [code](const auto& o) { return o.first == code; });
    if (it == m.options.end()) {
      m.options.emplace_back(code, std::move(value));
    } else {
      it->second += value;  // RFC 3396: a repeated option is one long value
    }
  }
  return absl::OkStatus();  // no END: tolerated, as most clients do
}

// Sum of 16-bit words, for the IPv4 and UDP checksums.
uint32_t SumWords(const uint8_t* p, size_t n, uint32_t sum) {
  for (size_t i = 0; i + 1 < n; i += 2) sum += Load16(p + i);
  if (n % 2) sum += static_cast<uint32_t>(p[n - 1]) << 8;
  return sum;
}
uint16_t Fold(uint32_t sum) {
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum & 0xffff);
}

}  // namespace

const OptionInfo* FindOption(uint8_t code) {
  for (const OptionInfo& o : kOptions) {
    if (o.code == code) return &o;
  }
  return nullptr;
}

absl::StatusOr<uint8_t> ParseOptionName(absl::string_view name) {
  for (const OptionInfo& o : kOptions) {
    if (name == o.name) return o.code;
  }
  uint32_t code = 0;
  if (!absl::SimpleAtoi(name, &code) || code < 1 || code > 254) {
    return Error(ErrorCode::kInvalidNetworkConfig,
                 absl::StrCat("dhcp: unknown DHCP option \"", name,
                              "\" (a dhcp-options(5) name or a number 1-254)"));
  }
  return static_cast<uint8_t>(code);
}

const std::string* Message::Get(uint8_t code) const {
  for (const auto& [c, v] : options) {
    if (c == code) return &v;
  }
  return nullptr;
}

void Message::Set(uint8_t code, std::string value) {
  for (auto& [c, v] : options) {
    if (c == code) {
      v = std::move(value);
      return;
    }
  }
  options.emplace_back(code, std::move(value));
}

void Message::SetIp(uint8_t code, const net::IpAddress& ip) {
  Set(code, std::string(reinterpret_cast<const char*>(ip.data()), 4));
}

void Message::SetU32(uint8_t code, uint32_t v) {
  std::string s;
  Put32(s, v);
  Set(code, std::move(s));
}

std::optional<MessageType> Message::Type() const {
  const std::string* v = Get(opt::kMessageType);
  if (v == nullptr || v->size() != 1) return std::nullopt;
  uint8_t t = static_cast<uint8_t>((*v)[0]);
  if (t < 1 || t > 8) return std::nullopt;
  return static_cast<MessageType>(t);
}

net::IpAddress Message::AddrOf(const std::array<uint8_t, 4>& a) { return net::IpAddress::V4(a); }

std::array<uint8_t, 4> Message::BytesOf(const net::IpAddress& ip) {
  std::array<uint8_t, 4> b{};
  std::memcpy(b.data(), ip.data(), 4);
  return b;
}

std::vector<net::IpAddress> Message::IpList(uint8_t code) const {
  std::vector<net::IpAddress> out;
  const std::string* v = Get(code);
  if (v == nullptr) return out;
  for (size_t i = 0; i + 4 <= v->size(); i += 4) {
    std::array<uint8_t, 4> b{};
    std::memcpy(b.data(), v->data() + i, 4);
    out.push_back(net::IpAddress::V4(b));
  }
  return out;
}

std::optional<net::IpAddress> Message::Ip(uint8_t code) const {
  std::vector<net::IpAddress> list = IpList(code);
  if (list.empty()) return std::nullopt;
  return list.front();
}

std::optional<uint32_t> Message::U32(uint8_t code) const {
  const std::string* v = Get(code);
  if (v == nullptr || v->size() != 4) return std::nullopt;
  return Load32(reinterpret_cast<const uint8_t*>(v->data()));
}

std::vector<StaticRoute> Message::ClasslessRoutes() const {
  std::vector<StaticRoute> out;
  const std::string* v = Get(opt::kClasslessRoutes);
  if (v == nullptr) return out;
  const uint8_t* p = reinterpret_cast<const uint8_t*>(v->data());
  size_t n = v->size(), i = 0;
  while (i < n) {
    int width = p[i++];
    if (width > 32) return {};  // RFC 3442: a malformed option is ignored whole
    size_t significant = static_cast<size_t>((width + 7) / 8);
    if (n - i < significant + 4) return {};
    std::array<uint8_t, 4> dst{}, gw{};
    std::memcpy(dst.data(), p + i, significant);
    i += significant;
    std::memcpy(gw.data(), p + i, 4);
    i += 4;
    out.push_back({net::IpPrefix(net::IpAddress::V4(dst), width).Network(), net::IpAddress::V4(gw)});
  }
  return out;
}

std::vector<StaticRoute> Message::StaticRoutes() const {
  std::vector<StaticRoute> out;
  std::vector<net::IpAddress> list = IpList(opt::kStaticRoutes);
  for (size_t i = 0; i + 1 < list.size(); i += 2) {
    // Classful destination (upstream: net.IP.DefaultMask).
    uint8_t first = list[i].data()[0];
    int len = first < 128 ? 8 : first < 192 ? 16 : 24;
    out.push_back({net::IpPrefix(list[i], len), list[i + 1]});
  }
  return out;
}

std::string Message::Encode() const {
  std::string out;
  out.reserve(kMinMessageLen + 64);
  out.push_back(static_cast<char>(op));
  out.push_back(static_cast<char>(htype));
  out.push_back(static_cast<char>(hlen));
  out.push_back(static_cast<char>(hops));
  Put32(out, xid);
  Put16(out, secs);
  Put16(out, flags);
  for (const auto* a : {&ciaddr, &yiaddr, &siaddr, &giaddr}) out.append(reinterpret_cast<const char*>(a->data()), 4);
  out.append(reinterpret_cast<const char*>(chaddr.data()), chaddr.size());
  out.append(64 + 128, '\0');  // sname, file
  out.append(reinterpret_cast<const char*>(kCookie), 4);
  for (const auto& [code, value] : options) {
    size_t off = 0;
    do {  // RFC 3396: long values go out as several options of one code
      size_t chunk = std::min<size_t>(255, value.size() - off);
      out.push_back(static_cast<char>(code));
      out.push_back(static_cast<char>(chunk));
      out.append(value, off, chunk);
      off += chunk;
    } while (off < value.size());
  }
  out.push_back(static_cast<char>(opt::kEnd));
  if (out.size() < kMinMessageLen) out.resize(kMinMessageLen, '\0');
  return out;
}

absl::StatusOr<Message> Message::Decode(absl::string_view bytes) {
  if (bytes.size() < kHeaderLen + 4) return Malformed(absl::StrCat("only ", bytes.size(), " bytes"));
  const uint8_t* p = reinterpret_cast<const uint8_t*>(bytes.data());
  if (std::memcmp(p + kHeaderLen, kCookie, 4) != 0) return Malformed("no magic cookie");
  Message m;
  m.op = p[0];
  m.htype = p[1];
  m.hlen = p[2];
  m.hops = p[3];
  m.xid = Load32(p + 4);
  m.secs = Load16(p + 8);
  m.flags = Load16(p + 10);
  std::memcpy(m.ciaddr.data(), p + 12, 4);
  std::memcpy(m.yiaddr.data(), p + 16, 4);
  std::memcpy(m.siaddr.data(), p + 20, 4);
  std::memcpy(m.giaddr.data(), p + 24, 4);
  std::memcpy(m.chaddr.data(), p + 28, 16);
  absl::Status st = ParseOptionField(p + kHeaderLen + 4, bytes.size() - kHeaderLen - 4, m);
  if (!st.ok()) return st;
  // Option 52: the file (1) and/or sname (2) fields carry more options, read
  // after the options field (file first, RFC 2131 4.1).
  if (const std::string* overload = m.Get(opt::kOverload); overload != nullptr && overload->size() == 1) {
    uint8_t which = static_cast<uint8_t>((*overload)[0]);
    if (which & 1) {
      if (st = ParseOptionField(p + 108, 128, m); !st.ok()) return st;
    }
    if (which & 2) {
      if (st = ParseOptionField(p + 44, 64, m); !st.ok()) return st;
    }
  }
  return m;
}

std::string FrameUdp(const net::IpAddress& src, const net::IpAddress& dst, absl::string_view payload) {
  std::string pkt;
  size_t udp_len = 8 + payload.size();
  size_t total = 20 + udp_len;
  pkt.reserve(total);
  // IPv4 header.
  pkt.push_back(0x45);
  pkt.push_back(0x10);  // TOS: low delay, as dhclient
  Put16(pkt, static_cast<uint16_t>(total));
  Put16(pkt, 0);       // id
  Put16(pkt, 0x4000);  // don't fragment
  pkt.push_back(64);   // TTL
  pkt.push_back(17);   // UDP
  Put16(pkt, 0);       // checksum, below
  pkt.append(reinterpret_cast<const char*>(src.data()), 4);
  pkt.append(reinterpret_cast<const char*>(dst.data()), 4);
  uint16_t ip_sum = Fold(SumWords(reinterpret_cast<const uint8_t*>(pkt.data()), 20, 0));
  pkt[10] = static_cast<char>(ip_sum >> 8);
  pkt[11] = static_cast<char>(ip_sum & 0xff);
  // UDP header and payload.
  Put16(pkt, 68);
  Put16(pkt, 67);
  Put16(pkt, static_cast<uint16_t>(udp_len));
  Put16(pkt, 0);
  pkt.append(payload.data(), payload.size());
  uint32_t sum = SumWords(reinterpret_cast<const uint8_t*>(pkt.data()) + 12, 8, 0);  // src, dst
  sum += 17 + static_cast<uint32_t>(udp_len);
  sum = SumWords(reinterpret_cast<const uint8_t*>(pkt.data()) + 20, udp_len, sum);
  uint16_t udp_sum = Fold(sum);
  if (udp_sum == 0) udp_sum = 0xffff;
  pkt[26] = static_cast<char>(udp_sum >> 8);
  pkt[27] = static_cast<char>(udp_sum & 0xff);
  return pkt;
}

std::optional<UdpDatagram> UnframeUdp(absl::string_view packet) {
  const uint8_t* p = reinterpret_cast<const uint8_t*>(packet.data());
  if (packet.size() < 20 || (p[0] >> 4) != 4) return std::nullopt;
  size_t ihl = static_cast<size_t>(p[0] & 0x0f) * 4;
  size_t total = Load16(p + 2);
  if (ihl < 20 || total < ihl + 8 || total > packet.size()) return std::nullopt;
  if (p[9] != 17) return std::nullopt;
  if ((Load16(p + 6) & 0x3fff) != 0) return std::nullopt;  // a fragment
  const uint8_t* udp = p + ihl;
  size_t udp_len = Load16(udp + 4);
  if (Load16(udp) != 67 || Load16(udp + 2) != 68) return std::nullopt;
  if (udp_len < 8 || udp_len > total - ihl) return std::nullopt;
  std::array<uint8_t, 4> src{};
  std::memcpy(src.data(), p + 12, 4);
  return UdpDatagram{net::IpAddress::V4(src), packet.substr(ihl + 8, udp_len - 8)};
}

std::string Describe(const Message& m) {
  static constexpr const char* kNames[] = {"?",   "DISCOVER", "OFFER", "REQUEST", "DECLINE",
                                           "ACK", "NAK",      "RELEASE", "INFORM"};
  std::optional<MessageType> t = m.Type();
  std::string out = absl::StrFormat("%s xid 0x%08x", t ? kNames[static_cast<int>(*t)] : "BOOTP", m.xid);
  if (m.yiaddr != std::array<uint8_t, 4>{}) absl::StrAppend(&out, " yiaddr ", Message::AddrOf(m.yiaddr).ToString());
  if (m.ciaddr != std::array<uint8_t, 4>{}) absl::StrAppend(&out, " ciaddr ", Message::AddrOf(m.ciaddr).ToString());
  if (std::optional<net::IpAddress> s = m.Ip(opt::kServerId)) absl::StrAppend(&out, " server ", s->ToString());
  return out;
}

}  // namespace cni::dhcp

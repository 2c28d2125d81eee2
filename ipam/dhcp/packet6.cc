#include "packet6.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "cni/base/error.h"

namespace cni::dhcp::v6 {
namespace {

void PutU16(std::string& out, uint16_t v) {
  out.push_back(static_cast<char>(v >> 8));
  out.push_back(static_cast<char>(v & 0xff));
}

void PutU32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((v >> shift) & 0xff));
}

uint16_t U16(absl::string_view s, size_t at) {
  return static_cast<uint16_t>((static_cast<uint8_t>(s[at]) << 8) | static_cast<uint8_t>(s[at + 1]));
}

uint32_t U32(absl::string_view s, size_t at) {
  return (static_cast<uint32_t>(U16(s, at)) << 16) | U16(s, at + 2);
}

void PutOption(std::string& out, uint16_t code, absl::string_view value) {
  PutU16(out, code);
  PutU16(out, static_cast<uint16_t>(value.size()));
  out.append(value.data(), value.size());
}

// Splits `wire` into (code, value) options; code 6 when one runs past the end.
absl::StatusOr<std::vector<std::pair<uint16_t, std::string>>> Options(absl::string_view wire,
                                                                      absl::string_view what) {
  std::vector<std::pair<uint16_t, std::string>> out;
  size_t at = 0;
  while (at < wire.size()) {
    if (wire.size() - at < 4) {
      return Error(ErrorCode::kDecodingFailure, absl::StrCat("DHCPv6 ", what, ": truncated option header"));
    }
    uint16_t code = U16(wire, at), len = U16(wire, at + 2);
    at += 4;
    if (wire.size() - at < len) {
      return Error(ErrorCode::kDecodingFailure,
                   absl::StrCat("DHCPv6 ", what, ": option ", code, " runs past the end"));
    }
    out.emplace_back(code, std::string(wire.substr(at, len)));
    at += len;
  }
  return out;
}

net::IpAddress V6At(absl::string_view s, size_t at) {
  std::array<uint8_t, 16> b{};
  std::memcpy(b.data(), s.data() + at, 16);
  return net::IpAddress::V6(b);
}

}  // namespace

const std::string* Message::Get(uint16_t code) const {
  for (const auto& [c, v] : options) {
    if (c == code) return &v;
  }
  return nullptr;
}

std::string Message::Encode() const {
  std::string out;
  out.push_back(static_cast<char>(type));
  out.push_back(static_cast<char>((xid >> 16) & 0xff));
  out.push_back(static_cast<char>((xid >> 8) & 0xff));
  out.push_back(static_cast<char>(xid & 0xff));
  for (const auto& [code, value] : options) PutOption(out, code, value);
  return out;
}

absl::StatusOr<Message> Message::Decode(absl::string_view wire) {
  if (wire.size() < 4) return Error(ErrorCode::kDecodingFailure, "DHCPv6 message shorter than its header");
  Message m;
  m.type = static_cast<MessageType>(static_cast<uint8_t>(wire[0]));
  m.xid = (static_cast<uint32_t>(static_cast<uint8_t>(wire[1])) << 16) | U16(wire, 2);
  auto options = Options(wire.substr(4), "message");
  if (!options.ok()) return options.status();
  m.options = *std::move(options);
  return m;
}

std::string EncodeIaNa(const IaNa& ia) {
  std::string out;
  PutU32(out, ia.iaid);
  PutU32(out, ia.t1);
  PutU32(out, ia.t2);
  for (const IaAddress& a : ia.addresses) {
    std::string addr(reinterpret_cast<const char*>(a.addr.data()), 16);
    PutU32(addr, a.preferred);
    PutU32(addr, a.valid);
    PutOption(out, opt::kIaAddr, addr);
  }
  return out;
}

absl::StatusOr<IaNa> DecodeIaNa(absl::string_view value) {
  if (value.size() < 12) return Error(ErrorCode::kDecodingFailure, "DHCPv6 IA_NA shorter than 12 bytes");
  IaNa ia;
  ia.iaid = U32(value, 0);
  ia.t1 = U32(value, 4);
  ia.t2 = U32(value, 8);
  auto options = Options(value.substr(12), "IA_NA");
  if (!options.ok()) return options.status();
  for (const auto& [code, v] : *options) {
    if (code == opt::kIaAddr) {
      // Address, lifetimes, then options of its own (a status, ignored here).
      if (v.size() < 24) return Error(ErrorCode::kDecodingFailure, "DHCPv6 IAADDR shorter than 24 bytes");
      ia.addresses.push_back({V6At(v, 0), U32(v, 16), U32(v, 20)});
    } else if (code == opt::kStatusCode && v.size() >= 2) {
      ia.status = U16(v, 0);
      ia.status_message = v.substr(2);
    }
  }
  return ia;
}

uint16_t StatusOf(const Message& msg) {
  const std::string* s = msg.Get(opt::kStatusCode);
  return s != nullptr && s->size() >= 2 ? U16(*s, 0) : kStatusSuccess;
}

namespace {

struct Option6Name {
  uint16_t code;
  const char* name;
};
constexpr Option6Name kOption6Names[] = {
    {opt::kClientId, "client-id"},       {opt::kUserClass, "user-class"},
    {opt::kVendorClass, "vendor-class"}, {opt::kDnsServers, "name-servers"},
    {opt::kDomainList, "domain-search"}, {opt::kSntpServers, "sntp-servers"},
    {opt::kFqdn, "fqdn"},                {opt::kNtpServer, "ntp-server"},
};

}  // namespace

absl::StatusOr<std::optional<uint16_t>> ParseOption6Name(absl::string_view name) {
  if (!absl::ConsumePrefix(&name, "dhcp6.")) return std::optional<uint16_t>();
  for (const Option6Name& o : kOption6Names) {
    if (name == o.name) return std::optional<uint16_t>(o.code);
  }
  uint32_t code = 0;
  if (!absl::SimpleAtoi(name, &code) || code < 1 || code > 65535) {
    return Error(ErrorCode::kInvalidNetworkConfig,
                 absl::StrCat("dhcp: unknown DHCPv6 option \"dhcp6.", name,
                              "\" (client-id, user-class, vendor-class, name-servers, domain-search, "
                              "sntp-servers, fqdn, ntp-server or a number 1-65535)"));
  }
  return std::optional<uint16_t>(static_cast<uint16_t>(code));
}

absl::StatusOr<std::string> EncodeOption6(uint16_t code, absl::string_view text) {
  if (code == opt::kFqdn) {
    std::string out(1, '\0');  // flags: the client leaves DNS updates to the server's policy
    const bool full = absl::EndsWith(text, ".");
    absl::string_view name = absl::StripSuffix(text, ".");
    for (absl::string_view label : absl::StrSplit(name, '.')) {
      if (label.empty() || label.size() > 63) {
        return Error(ErrorCode::kInvalidNetworkConfig, absl::StrCat("dhcp: \"", text, "\" is not a domain name"));
      }
      out.push_back(static_cast<char>(label.size()));
      out.append(label.data(), label.size());
    }
    if (full) out.push_back('\0');
    return out;
  }
  if (code == opt::kClientId) {
    std::string hex = absl::StrReplaceAll(text, {{":", ""}});
    std::string bytes;
    if (hex.empty() || hex.size() % 2 != 0 || !std::all_of(hex.begin(), hex.end(), absl::ascii_isxdigit)) {
      return Error(ErrorCode::kInvalidNetworkConfig,
                   absl::StrCat("dhcp: dhcp6.client-id \"", text, "\" is not a DUID in hex digits"));
    }
    for (size_t i = 0; i < hex.size(); i += 2) {
      bytes.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    }
    return bytes;
  }
  return std::string(text);
}

std::string DuidLl(const std::array<uint8_t, 6>& mac) {
  std::string out;
  PutU16(out, 3);  // DUID-LL
  PutU16(out, 1);  // hardware type: Ethernet
  out.append(reinterpret_cast<const char*>(mac.data()), mac.size());
  return out;
}

std::vector<net::IpAddress> DnsServers(const Message& msg) {
  std::vector<net::IpAddress> out;
  const std::string* v = msg.Get(opt::kDnsServers);
  if (v == nullptr || v->size() % 16 != 0) return out;
  for (size_t at = 0; at < v->size(); at += 16) out.push_back(V6At(*v, at));
  return out;
}

std::vector<std::string> DomainList(const Message& msg) {
  std::vector<std::string> out;
  const std::string* v = msg.Get(opt::kDomainList);
  if (v == nullptr) return out;
  std::string name;
  for (size_t at = 0; at < v->size();) {
    size_t len = static_cast<uint8_t>((*v)[at++]);
    if (len == 0) {  // the root label ends a name
      if (!name.empty()) out.push_back(name);
      name.clear();
      continue;
    }
    if (len > 63 || v->size() - at < len) break;  // compression or truncation: stop
    if (!name.empty()) name.push_back('.');
    name.append(*v, at, len);
    at += len;
  }
  return out;
}

}  // namespace cni::dhcp::v6

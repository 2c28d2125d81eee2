// DHCPv6 message and option coding (packet6.h). No root.
#include <string>

#include <catch2/catch.hpp>

#include "cni/base/error.h"
#include "packet6.h"

namespace {

namespace v6 = cni::dhcp::v6;

std::string Bytes(std::initializer_list<int> b) {
  std::string s;
  for (int v : b) s.push_back(static_cast<char>(v));
  return s;
}

cni::net::IpAddress Ip(const char* s) { return *cni::net::IpAddress::Parse(s); }

// A REPLY as a server sends it (RFC 8415 layout, bytes written out by hand):
// transaction 0x0a0b0c, server ID, an IA_NA (IAID 7, T1 60, T2 96) with
// 2001:db8::5 (preferred 100, valid 120), DNS server 2001:db8::1, search
// list "lab.test".
std::string Reply() {
  std::string ia_addr = Bytes({0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5,  // address
                               0, 0, 0, 100, 0, 0, 0, 120});                                // lifetimes
  std::string ia = Bytes({0, 0, 0, 7, 0, 0, 0, 60, 0, 0, 0, 96, 0, 5, 0, 24}) + ia_addr;
  return Bytes({7, 0x0a, 0x0b, 0x0c}) +                                   // REPLY, xid
         Bytes({0, 2, 0, 10, 0, 3, 0, 1, 2, 0, 0, 0, 0, 1}) +             // server ID (DUID-LL)
         Bytes({0, 3, 0, 40}) + ia +                                      // IA_NA
         Bytes({0, 23, 0, 16, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}) +
         Bytes({0, 24, 0, 10, 3, 'l', 'a', 'b', 4, 't', 'e', 's', 't', 0});
}

}  // namespace

TEST_CASE("dhcpv6: a REPLY decodes into its IA_NA, DNS servers and search list", "[dhcp]") {
  absl::StatusOr<v6::Message> m = v6::Message::Decode(Reply());
  REQUIRE(m.ok());
  CHECK(m->type == v6::MessageType::kReply);
  CHECK(m->xid == 0x0a0b0c);
  CHECK(v6::StatusOf(*m) == v6::kStatusSuccess);
  REQUIRE(m->Get(v6::opt::kServerId) != nullptr);
  CHECK(*m->Get(v6::opt::kServerId) == v6::DuidLl({2, 0, 0, 0, 0, 1}));
  REQUIRE(m->Get(v6::opt::kIaNa) != nullptr);
  absl::StatusOr<v6::IaNa> ia = v6::DecodeIaNa(*m->Get(v6::opt::kIaNa));
  REQUIRE(ia.ok());
  CHECK(ia->iaid == 7);
  CHECK(ia->t1 == 60);
  CHECK(ia->t2 == 96);
  REQUIRE(ia->addresses.size() == 1);
  CHECK(ia->addresses[0].addr == Ip("2001:db8::5"));
  CHECK(ia->addresses[0].preferred == 100);
  CHECK(ia->addresses[0].valid == 120);
  CHECK(v6::DnsServers(*m) == std::vector<cni::net::IpAddress>{Ip("2001:db8::1")});
  CHECK(v6::DomainList(*m) == std::vector<std::string>{"lab.test"});
  // And encodes back to the same bytes.
  CHECK(m->Encode() == Reply());
  CHECK(v6::EncodeIaNa(*ia) == *m->Get(v6::opt::kIaNa));
}

TEST_CASE("dhcpv6: status codes at the top and inside the IA", "[dhcp]") {
  v6::Message m;
  m.type = v6::MessageType::kReply;
  m.Add(v6::opt::kStatusCode, Bytes({0, 3}) + "no binding");
  CHECK(v6::StatusOf(m) == v6::kStatusNoBinding);
  v6::IaNa ia;
  ia.iaid = 1;
  std::string value = v6::EncodeIaNa(ia) + Bytes({0, 13, 0, 4, 0, 2, 'n', 'o'});
  absl::StatusOr<v6::IaNa> decoded = v6::DecodeIaNa(value);
  REQUIRE(decoded.ok());
  CHECK(decoded->status == v6::kStatusNoAddrsAvail);
  CHECK(decoded->status_message == "no");
  CHECK(decoded->addresses.empty());
}

TEST_CASE("dhcpv6: truncated and malformed input is an error, never a crash", "[dhcp]") {
  const std::string reply = Reply();
  // Every prefix: either a whole message (options end on a boundary) or code 6.
  for (size_t n = 0; n < reply.size(); ++n) {
    absl::StatusOr<v6::Message> m = v6::Message::Decode(reply.substr(0, n));
    if (!m.ok()) CHECK(cni::CodeOf(m.status()) == 6);
  }
  CHECK(cni::CodeOf(v6::Message::Decode(Bytes({7, 0, 0})).status()) == 6);
  CHECK(cni::CodeOf(v6::Message::Decode(Bytes({7, 0, 0, 1, 0, 3, 0, 40, 0})).status()) == 6);
  CHECK(cni::CodeOf(v6::DecodeIaNa(Bytes({0, 0, 0, 1})).status()) == 6);
  CHECK(cni::CodeOf(v6::DecodeIaNa(Bytes({0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 0, 2, 1, 2})).status()) == 6);
  // DNS options of a wrong length, a compressed or truncated name.
  v6::Message m;
  m.Add(v6::opt::kDnsServers, std::string(15, '\0'));
  m.Add(v6::opt::kDomainList, Bytes({3, 'a', 'b', 'c', 0, 0xc0, 0x0c}));
  CHECK(v6::DnsServers(m).empty());
  CHECK(v6::DomainList(m) == std::vector<std::string>{"abc"});
  v6::Message t;
  t.Add(v6::opt::kDomainList, Bytes({5, 'a', 'b'}));
  CHECK(v6::DomainList(t).empty());
}

TEST_CASE("dhcpv6: DUID-LL of an Ethernet address", "[dhcp]") {
  CHECK(v6::DuidLl({0x02, 0x42, 0xac, 0x11, 0x00, 0x02}) == Bytes({0, 3, 0, 1, 0x02, 0x42, 0xac, 0x11, 0x00, 0x02}));
}

// The dhcp plugin's packet code, option table, lease times, result building
// and daemon flags. No root.
#include <string>

#include <catch2/catch.hpp>

#include "absl/time/time.h"
#include "cni/base/error.h"
#include "daemon.h"
#include "lease.h"
#include "packet.h"

namespace {

using cni::dhcp::Message;
using cni::dhcp::MessageType;
namespace opt = cni::dhcp::opt;

cni::net::IpAddress Ip(const char* s) { return *cni::net::IpAddress::Parse(s); }

std::string Bytes(std::initializer_list<int> b) {
  std::string s;
  for (int v : b) s.push_back(static_cast<char>(v));
  return s;
}

Message Ack() {
  Message m;
  m.op = 2;
  m.xid = 0xdeadbeef;
  m.yiaddr = {10, 0, 0, 5};
  m.Set(opt::kMessageType, Bytes({5}));
  m.SetIp(opt::kServerId, Ip("10.0.0.1"));
  m.SetIp(opt::kSubnetMask, Ip("255.255.255.0"));
  m.Set(opt::kRouter, Bytes({10, 0, 0, 1, 10, 0, 0, 2}));
  m.Set(opt::kDnsServers, Bytes({10, 0, 0, 53}));
  m.Set(opt::kDomainName, std::string("example.test\0", 13));
  m.SetU32(opt::kLeaseTime, 120);
  return m;
}

}  // namespace

TEST_CASE("dhcp packet: encode and decode round trip", "[dhcp]") {
  Message m = Ack();
  m.Set(43, std::string(300, 'x'));  // longer than one option: split, then joined (RFC 3396)
  std::string wire = m.Encode();
  CHECK(wire.size() >= 300);
  CHECK(static_cast<uint8_t>(wire[236]) == 99);
  absl::StatusOr<Message> back = Message::Decode(wire);
  REQUIRE(back.ok());
  CHECK(back->xid == 0xdeadbeef);
  CHECK(back->Type() == MessageType::kAck);
  CHECK(back->options == m.options);
  CHECK(back->Get(43)->size() == 300);
  CHECK(back->Ip(opt::kServerId) == Ip("10.0.0.1"));
  CHECK(back->IpList(opt::kRouter).size() == 2);
  CHECK(back->U32(opt::kLeaseTime) == 120u);
}

TEST_CASE("dhcp packet: malformed messages are refused", "[dhcp]") {
  std::string wire = Ack().Encode();
  CHECK(cni::CodeOf(Message::Decode(wire.substr(0, 200)).status()) == 6);
  std::string no_cookie = wire;
  no_cookie[236] = 0;
  CHECK_FALSE(Message::Decode(no_cookie).ok());
  // An option whose length runs past the end.
  std::string cut = wire.substr(0, 240) + Bytes({3, 200, 1, 2});
  CHECK_FALSE(Message::Decode(cut).ok());
}

TEST_CASE("dhcp packet: option overload reads file and sname", "[dhcp]") {
  Message m;
  m.op = 2;
  m.Set(opt::kOverload, Bytes({3}));
  std::string wire = m.Encode();
  std::string file_opts = Bytes({1, 4, 255, 255, 0, 0, 255});
  std::string sname_opts = Bytes({3, 4, 10, 1, 1, 1, 255});
  wire.replace(108, file_opts.size(), file_opts);
  wire.replace(44, sname_opts.size(), sname_opts);
  absl::StatusOr<Message> back = Message::Decode(wire);
  REQUIRE(back.ok());
  CHECK(back->Ip(opt::kSubnetMask) == Ip("255.255.0.0"));
  CHECK(back->Ip(opt::kRouter) == Ip("10.1.1.1"));
}

TEST_CASE("dhcp packet: IPv4/UDP framing", "[dhcp]") {
  std::string payload = Ack().Encode();
  std::string frame = cni::dhcp::FrameUdp(Ip("0.0.0.0"), Ip("255.255.255.255"), payload);
  CHECK(frame.size() == payload.size() + 28);
  // The IPv4 header checksum verifies (sum of the header's words is 0xffff).
  uint32_t sum = 0;
  for (int i = 0; i < 20; i += 2) sum += static_cast<uint8_t>(frame[i]) << 8 | static_cast<uint8_t>(frame[i + 1]);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  CHECK(sum == 0xffff);
  // Our own frame goes 68 -> 67; the reply direction is what UnframeUdp takes.
  CHECK_FALSE(cni::dhcp::UnframeUdp(frame).has_value());
  std::string reply = frame;
  std::swap(reply[20], reply[22]);
  std::swap(reply[21], reply[23]);
  auto udp = cni::dhcp::UnframeUdp(reply);
  REQUIRE(udp.has_value());
  CHECK(udp->payload == payload);
  CHECK(udp->src == Ip("0.0.0.0"));
  reply[6] = 0x20;  // more fragments
  CHECK_FALSE(cni::dhcp::UnframeUdp(reply).has_value());
}

TEST_CASE("dhcp packet: option names as upstream and dhcp-options(5)", "[dhcp]") {
  CHECK(*cni::dhcp::ParseOptionName("host-name") == 12);
  CHECK(*cni::dhcp::ParseOptionName("dhcp-client-identifier") == 61);
  CHECK(*cni::dhcp::ParseOptionName("routers") == 3);
  CHECK(*cni::dhcp::ParseOptionName("subnet-mask") == 1);
  CHECK(*cni::dhcp::ParseOptionName("user-class") == 77);
  CHECK(*cni::dhcp::ParseOptionName("vendor-class-identifier") == 60);
  CHECK(*cni::dhcp::ParseOptionName("121") == 121);
  CHECK(cni::CodeOf(cni::dhcp::ParseOptionName("no-such-option").status()) == 7);
  CHECK_FALSE(cni::dhcp::ParseOptionName("255").ok());
  CHECK_FALSE(cni::dhcp::ParseOptionName("0").ok());
  REQUIRE(cni::dhcp::FindOption(121) != nullptr);
  CHECK(cni::dhcp::FindOption(121)->kind == cni::dhcp::OptionKind::kRoutes);
}

TEST_CASE("dhcp result: address, gateway, default route and DNS", "[dhcp]") {
  absl::StatusOr<cni::Result> r = cni::dhcp::ResultFromAck(Ack(), 0);
  REQUIRE(r.ok());
  REQUIRE(r->ips.size() == 1);
  CHECK(r->ips[0].address.ToString() == "10.0.0.5/24");
  CHECK(r->ips[0].gateway == Ip("10.0.0.1"));
  REQUIRE(r->routes.size() == 1);
  CHECK(r->routes[0].dst.ToString() == "0.0.0.0/0");
  CHECK(r->routes[0].gw == Ip("10.0.0.1"));
  CHECK(r->dns.nameservers == std::vector<std::string>{"10.0.0.53"});
  CHECK(r->dns.domain == "example.test");
}

TEST_CASE("dhcp result: option 121 replaces the router's default route", "[dhcp]") {
  Message m = Ack();
  // 192.168.5.0/24 via 10.0.0.254, default via 10.0.0.1, 10.9.9.9/32 on-link.
  m.Set(opt::kClasslessRoutes, Bytes({24, 192, 168, 5, 10, 0, 0, 254, 0, 10, 0, 0, 1, 32, 10, 9, 9, 9, 0, 0, 0, 0}));
  m.Set(opt::kStaticRoutes, Bytes({172, 16, 0, 0, 10, 0, 0, 9}));  // ignored with 121 (RFC 3442)
  absl::StatusOr<cni::Result> r = cni::dhcp::ResultFromAck(m, 300);
  REQUIRE(r.ok());
  REQUIRE(r->routes.size() == 3);
  CHECK(r->routes[0].dst.ToString() == "192.168.5.0/24");
  CHECK(r->routes[0].gw == Ip("10.0.0.254"));
  CHECK(r->routes[1].dst.ToString() == "0.0.0.0/0");
  CHECK(r->routes[2].dst.ToString() == "10.9.9.9/32");
  CHECK_FALSE(r->routes[2].gw.has_value());
  CHECK(r->routes[2].scope == 253);
  for (const cni::Route& route : r->routes) CHECK(route.priority == 300);
  // A malformed 121 is ignored whole: back to 33 and the router.
  m.Set(opt::kClasslessRoutes, Bytes({33, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  r = cni::dhcp::ResultFromAck(m, 0);
  REQUIRE(r.ok());
  REQUIRE(r->routes.size() == 2);
  CHECK(r->routes[0].dst.ToString() == "172.16.0.0/16");
  CHECK(r->routes[1].dst.ToString() == "0.0.0.0/0");
}

TEST_CASE("dhcp result: an ACK without a subnet mask is an error", "[dhcp]") {
  Message m = Ack();
  m.options.erase(m.options.begin() + 2);  // the mask
  REQUIRE_FALSE(m.Ip(opt::kSubnetMask).has_value());
  CHECK_FALSE(cni::dhcp::ResultFromAck(m, 0).ok());
}

TEST_CASE("dhcp lease times: T1, T2 and expiry", "[dhcp]") {
  absl::Time t0 = absl::FromUnixSeconds(1000);
  cni::dhcp::LeaseTimes t = cni::dhcp::TimesOf(Ack(), t0);
  CHECK(t.renew == t0 + absl::Seconds(60));
  CHECK(t.rebind == t0 + absl::Seconds(102));
  CHECK(t.expire == t0 + absl::Seconds(120));
  Message m = Ack();
  m.SetU32(opt::kRenewalTime, 10);
  m.SetU32(opt::kRebindingTime, 20);
  t = cni::dhcp::TimesOf(m, t0);
  CHECK(t.renew == t0 + absl::Seconds(10));
  CHECK(t.rebind == t0 + absl::Seconds(20));
  m.options.erase(m.options.begin() + 6);  // no lease time: an hour
  CHECK(cni::dhcp::TimesOf(m, t0).expire == t0 + absl::Hours(1));
}

TEST_CASE("dhcp lease: client identifier as upstream", "[dhcp]") {
  cni::dhcp::LeaseSpec s;
  s.container_id = "abc";
  s.network = "net";
  s.ifname = "eth0";
  CHECK(s.ClientId() == "abc/net/eth0");
  s.container_id = std::string(300, 'c');
  CHECK(s.ClientId().size() == 254);
  absl::StatusOr<cni::dhcp::LeaseSpec> back = cni::dhcp::LeaseSpec::FromJson(s.ToJson());
  REQUIRE(back.ok());
  CHECK(back->ClientId() == s.ClientId());
}

TEST_CASE("dhcp retransmission: fast retries, then doubling up to resendmax", "[dhcp]") {
  cni::dhcp::Timing t;
  for (int n = 0; n < 4; ++n) {
    absl::Duration d = cni::dhcp::RetransmitDelay(n, t);
    CHECK(d >= absl::Seconds(1));
    CHECK(d <= absl::Seconds(3));
  }
  CHECK(cni::dhcp::RetransmitDelay(4, t) >= absl::Seconds(3));
  t.timeout = absl::Seconds(100);
  CHECK(cni::dhcp::RetransmitDelay(6, t) >= absl::Seconds(15));
  CHECK(cni::dhcp::RetransmitDelay(20, t) <= absl::Seconds(63));
  t.timeout = absl::Seconds(1);  // never waits longer than -timeout
  CHECK(cni::dhcp::RetransmitDelay(10, t) <= absl::Seconds(1));
}

TEST_CASE("dhcp daemon flags: Go flag syntax", "[dhcp]") {
  absl::StatusOr<cni::dhcp::DaemonOptions> o = cni::dhcp::ParseDaemonFlags({});
  REQUIRE(o.ok());
  CHECK(o->socket_path == "/run/cni/dhcp.sock");
  CHECK(o->timing.timeout == absl::Seconds(10));
  CHECK(o->timing.resend_max == absl::Seconds(62));
  CHECK(o->timing.resend_timeout == absl::Seconds(208));
  CHECK_FALSE(o->timing.broadcast);
  o = cni::dhcp::ParseDaemonFlags({"-socketpath", "/tmp/x.sock", "--timeout=1m30s", "-broadcast",
                                   "-resendtimeout", "500ms", "-pidfile=/tmp/p"});
  REQUIRE(o.ok());
  CHECK(o->socket_path == "/tmp/x.sock");
  CHECK(o->timing.timeout == absl::Seconds(90));
  CHECK(o->timing.broadcast);
  CHECK(o->timing.resend_timeout == absl::Milliseconds(500));
  CHECK(o->pidfile == "/tmp/p");
  CHECK_FALSE(cni::dhcp::ParseDaemonFlags({"-nosuch"}).ok());
  CHECK_FALSE(cni::dhcp::ParseDaemonFlags({"-timeout", "ten"}).ok());
  CHECK_FALSE(cni::dhcp::ParseDaemonFlags({"-pidfile", "relative"}).ok());
  CHECK_FALSE(cni::dhcp::ParseDaemonFlags({"-socketpath"}).ok());
}

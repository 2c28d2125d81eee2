// Fuzz target: the dhcp daemon's packet parser (ipam/dhcp/packet.h), the only
// code that reads bytes a DHCP server (or anyone on the link) sends. The input
// is tried both as an IPv4 packet (what the packet socket delivers) and as a
// bare DHCP message; a decoded message must survive every accessor, the result
// builder, and an encode/decode round trip with the same options. The same
// bytes go to the DHCPv6 decoder (packet6.h) and its option readers, and
// to the router advertisement parser (client6.h), whose result builds an
// IPv6 lease's CNI result.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "client6.h"
#include "lease.h"
#include "lease6.h"
#include "packet.h"
#include "packet6.h"

namespace {

void Exercise(absl::string_view bytes) {
  absl::StatusOr<cni::dhcp::Message> m = cni::dhcp::Message::Decode(bytes);
  if (!m.ok()) return;
  (void)m->Type();
  (void)m->IpList(cni::dhcp::opt::kRouter);
  (void)m->U32(cni::dhcp::opt::kLeaseTime);
  (void)m->ClasslessRoutes();
  (void)m->StaticRoutes();
  (void)cni::dhcp::Describe(*m);
  (void)cni::dhcp::ResultFromAck(*m, 10);
  (void)cni::dhcp::TimesOf(*m, absl::UnixEpoch());
  absl::StatusOr<cni::dhcp::Message> again = cni::dhcp::Message::Decode(m->Encode());
  if (!again.ok() || again->options != m->options || again->xid != m->xid || again->chaddr != m->chaddr) abort();
}

void ExerciseV6(absl::string_view bytes) {
  namespace v6 = cni::dhcp::v6;
  absl::StatusOr<v6::Message> m = v6::Message::Decode(bytes);
  if (!m.ok()) return;
  (void)v6::StatusOf(*m);
  (void)v6::DnsServers(*m);
  (void)v6::DomainList(*m);
  for (const auto& [code, value] : m->options) {
    if (code == v6::opt::kIaNa) (void)v6::DecodeIaNa(value);
  }
  absl::StatusOr<v6::Message> again = v6::Message::Decode(m->Encode());
  if (!again.ok() || again->options != m->options || again->xid != m->xid || again->type != m->type) abort();
}

void ExerciseRa(absl::string_view bytes) {
  const cni::net::IpAddress router = *cni::net::IpAddress::Parse("fe80::1");
  std::optional<cni::dhcp::RouterAdvert> ra = cni::dhcp::ParseRouterAdvert(bytes, router);
  if (!ra) return;
  (void)cni::dhcp::ResultFromLease6(*cni::net::IpAddress::Parse("2001:db8::5"), *ra, cni::dhcp::v6::Message(), 0);
  absl::StatusOr<cni::dhcp::RouterAdvert> back = cni::dhcp::RouterAdvert::FromJson(ra->ToJson());
  if (!back.ok() || back->ToJson() != ra->ToJson()) abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  if (std::optional<cni::dhcp::UdpDatagram> udp = cni::dhcp::UnframeUdp(bytes)) Exercise(udp->payload);
  Exercise(bytes);
  ExerciseV6(bytes);
  ExerciseRa(bytes);
  return 0;
}

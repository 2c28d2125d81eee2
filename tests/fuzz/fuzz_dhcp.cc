// Fuzz target: the dhcp daemon's packet parser (ipam/dhcp/packet.h), the only
// code that reads bytes a DHCP server (or anyone on the link) sends. The input
// is tried both as an IPv4 packet (what the packet socket delivers) and as a
// bare DHCP message; a decoded message must survive every accessor, the result
// builder, and an encode/decode round trip with the same options.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "lease.h"
#include "packet.h"

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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  if (std::optional<cni::dhcp::UdpDatagram> udp = cni::dhcp::UnframeUdp(bytes)) Exercise(udp->payload);
  Exercise(bytes);
  return 0;
}

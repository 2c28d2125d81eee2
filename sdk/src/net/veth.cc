#include "cni/net/veth.h"

#include <sys/random.h>

#include <cstdint>
#include <random>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cni/base/status_macros.h"
#include "cni/net/link.h"
#include "cni/net/netlink.h"
#include "cni/net/sysctl.h"

namespace cni::net {
namespace {

// Host names are random; a collision (another ADD racing us, or a leftover)
// just means trying again. Ten tries make a repeat collision vanishingly rare.
constexpr int kNameAttempts = 10;

uint32_t Random32() {
  uint32_t v = 0;
  if (getrandom(&v, sizeof(v), 0) == static_cast<ssize_t>(sizeof(v))) return v;
  std::random_device rd;  // getrandom unavailable (very old kernel)
  return rd();
}

}  // namespace

std::string RandomVethName() { return absl::StrFormat("veth%08x", Random32()); }

absl::StatusOr<VethPair> SetupVeth(const Netns& container, absl::string_view ifname, int mtu,
                                   const std::optional<MacAddress>& mac, const Netns& host) {
  ASSIGN_OR_RETURN(NetlinkSocket csock, NetlinkSocket::OpenIn(container));
  ASSIGN_OR_RETURN(NetlinkSocket hsock, NetlinkSocket::OpenIn(host));
  return SetupVeth(csock, hsock, ifname, mtu, mac);
}

absl::StatusOr<VethPair> SetupVeth(NetlinkSocket& csock, NetlinkSocket& hsock, absl::string_view ifname, int mtu,
                                   const std::optional<MacAddress>& mac, bool host_skips_dad) {
  const Netns& container = csock.netns();
  const Netns& host = hsock.netns();

  auto ifname_taken = [&]() -> absl::Status {
    ASSIGN_OR_RETURN(bool exists, LinkExists(csock, ifname));
    if (exists) {
      return absl::AlreadyExistsError(
          absl::StrCat("container veth name \"", ifname, "\" already exists"));
    }
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(ifname_taken());

  std::string host_name;
  absl::Status created;
  for (int attempt = 0; attempt < kNameAttempts; ++attempt) {
    host_name = RandomVethName();
    VethSpec spec;
    spec.name = std::string(ifname);
    spec.peer_name = host_name;
    spec.mtu = mtu;
    spec.mac = mac;
    spec.peer_netns = &host;
    created = CreateVeth(csock, spec);
    if (!absl::IsAlreadyExists(created)) break;
    // EEXIST does not say which name was taken: if it was ifname (a racing
    // ADD), a new host name will not help.
    RETURN_IF_ERROR(ifname_taken());
  }
  RETURN_IF_ERROR(created);

  // From here on a failure must not leave the pair behind; deleting the
  // container end takes the host end with it.
  absl::Cleanup undo = [&] { (void)DeleteLinkByNameIfExists(csock, ifname); };

  ASSIGN_OR_RETURN(LinkInfo cont, LinkByName(csock, ifname));
  RETURN_IF_ERROR(SetLinkUp(csock, cont));
  ASSIGN_OR_RETURN(LinkInfo hostl, LinkByName(hsock, host_name));
  // Before the link comes up: its link-local address is made then.
  if (host_skips_dad) (void)WriteSysctl(host, absl::StrCat("net/ipv6/conf/", host_name, "/accept_dad"), "0");
  RETURN_IF_ERROR(SetLinkUp(hsock, hostl));

  std::move(undo).Cancel();
  VethPair pair;
  pair.host.name = hostl.name;
  pair.host.mac = hostl.mac.ToString();
  pair.host_index = hostl.index;
  pair.container.name = cont.name;
  pair.container.mac = cont.mac.ToString();
  pair.container.sandbox = container.path();
  pair.container_index = cont.index;
  return pair;
}

}  // namespace cni::net

#include "cni/fw/protocols.h"

// <netinet/in.h> before the <linux/...> headers: the other order redefines
// struct in_addr (linux/libc-compat.h only guards this one).
#include <netinet/in.h>
#include <linux/netfilter.h>

#include <array>
#include <string>

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"

namespace cni::fw {
namespace {

// An enumerator's nft name and kernel number.
struct Names {
  const char* name;
  uint8_t number;
};

// The names of every enumerator of `Enum`, in the enum's order.
template <typename Enum, size_t N>
struct NameTable {
  std::array<Names, N> rows;

  const Names& operator[](Enum e) const { return rows[static_cast<size_t>(e)]; }

  // The enumerator called `name`; code 7 "<unknown> "<name>" (want a, b or c)".
  absl::StatusOr<Enum> Parse(absl::string_view name, absl::string_view unknown) const {
    std::string want;
    for (size_t i = 0; i < N; ++i) {
      if (name == rows[i].name) return static_cast<Enum>(i);
      absl::StrAppend(&want, i == 0 ? "" : i + 1 == N ? " or " : ", ", rows[i].name);
    }
    return Error(ErrorCode::kInvalidNetworkConfig, absl::StrCat(unknown, " \"", name, "\" (want ", want, ")"));
  }
};

constexpr NameTable<NftFamily, 6> kFamilies = {{{
    {"ip", NFPROTO_IPV4},
    {"ip6", NFPROTO_IPV6},
    {"inet", NFPROTO_INET},
    {"bridge", NFPROTO_BRIDGE},
    {"arp", NFPROTO_ARP},
    {"netdev", NFPROTO_NETDEV},
}}};

constexpr NameTable<L4Protocol, 3> kProtocols = {{{
    {"tcp", IPPROTO_TCP},
    {"udp", IPPROTO_UDP},
    {"sctp", IPPROTO_SCTP},
}}};

}  // namespace

const char* NftFamilyName(NftFamily family) { return kFamilies[family].name; }
uint8_t NftFamilyNumber(NftFamily family) { return kFamilies[family].number; }
absl::StatusOr<NftFamily> ParseNftFamily(absl::string_view name) {
  return kFamilies.Parse(name, "nftables: unknown family");
}
NftFamily IpFamily(bool ipv6) { return ipv6 ? NftFamily::kIp6 : NftFamily::kIp; }

const char* L4ProtocolName(L4Protocol protocol) { return kProtocols[protocol].name; }
uint8_t L4ProtocolNumber(L4Protocol protocol) { return kProtocols[protocol].number; }
absl::StatusOr<L4Protocol> ParseL4Protocol(absl::string_view name) { return kProtocols.Parse(name, "unknown protocol"); }

}  // namespace cni::fw

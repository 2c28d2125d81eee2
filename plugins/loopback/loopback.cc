#include "loopback.h"

#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cni/error.h"
#include "cni/net/addr.h"
#include "cni/net/link.h"
#include "cni/net/netlink.h"
#include "cni/net/netns.h"
#include "config.h"

namespace cni::loopback {
namespace {

constexpr absl::string_view kLo = "lo";

bool IsLoopback(const net::IpAddress& ip) {
  if (ip.is_v4()) return ip.data()[0] == 127;  // 127.0.0.0/8
  static const net::IpAddress kV6Loopback = *net::IpAddress::Parse("::1");
  return ip == kV6Loopback;
}

// The first address of `family` on lo, if any. Any non-loopback address on lo
// means someone has been at it; upstream refuses that, and so do we.
absl::StatusOr<std::optional<net::IpPrefix>> FirstLoopbackAddress(net::NetlinkSocket& sock,
                                                                 int ifindex, net::Family family) {
  absl::StatusOr<std::vector<net::AddressInfo>> addrs = net::ListAddresses(sock, ifindex, family);
  if (!addrs.ok()) return addrs.status();
  for (const net::AddressInfo& a : *addrs) {
    if (!IsLoopback(a.prefix.addr())) {
      return absl::FailedPreconditionError(absl::StrCat(
          "loopback interface found with non-loopback address ", a.prefix.addr().ToString()));
    }
  }
  if (addrs->empty()) return std::optional<net::IpPrefix>();
  return std::optional<net::IpPrefix>(addrs->front().prefix);
}

// Opens CNI_NETNS and a netlink socket in it, and finds lo.
struct Lo {
  net::NetlinkSocket sock;
  net::LinkInfo link;
};
absl::StatusOr<Lo> OpenLo(const net::Netns& ns) {
  absl::StatusOr<net::NetlinkSocket> sock = net::NetlinkSocket::OpenIn(ns);
  if (!sock.ok()) return sock.status();
  absl::StatusOr<net::LinkInfo> link = net::LinkByName(*sock, kLo);
  if (!link.ok()) return link.status();
  return Lo{*std::move(sock), *std::move(link)};
}

}  // namespace

absl::StatusOr<Result> Add(const CmdArgs& args) {
  absl::StatusOr<Config> config = ParseConfig(args.conf);
  if (!config.ok()) return config.status();
  absl::StatusOr<net::Netns> ns = net::Netns::Open(args.netns);
  if (!ns.ok()) return ns.status();
  absl::StatusOr<Lo> lo = OpenLo(*ns);
  if (!lo.ok()) return lo.status();
  // The kernel adds 127.0.0.1/8 and ::1/128 as lo comes up.
  if (absl::Status st = net::SetLinkUp(lo->sock, lo->link); !st.ok()) return st;

  absl::StatusOr<std::optional<net::IpPrefix>> v4 =
      FirstLoopbackAddress(lo->sock, lo->link.index, net::Family::kV4);
  if (!v4.ok()) return v4.status();
  absl::StatusOr<std::optional<net::IpPrefix>> v6 =
      FirstLoopbackAddress(lo->sock, lo->link.index, net::Family::kV6);
  if (!v6.ok()) return v6.status();

  // Chained after another plugin: pass its result on unchanged (upstream).
  if (config->prev) return *config->prev;

  Result result;
  result.cni_version = args.conf.cni_version;
  // A fixed all-zero MAC and the sandbox path, as upstream reports lo.
  result.interfaces.push_back(Interface{.name = std::string(kLo),
                                        .mac = "00:00:00:00:00:00",
                                        .sandbox = args.netns});
  for (const std::optional<net::IpPrefix>& p : {*v4, *v6}) {
    if (p) result.ips.push_back(IpConfig{0, *p, std::nullopt});
  }
  // Upstream drops the config's dns; every plugin of ours passes it on.
  result.dns = config->dns;
  return result;
}

absl::Status Del(const CmdArgs& args) {
  // Nothing to undo without a namespace, or when it is already gone.
  if (args.netns.empty()) return absl::OkStatus();
  absl::StatusOr<net::Netns> ns = net::Netns::Open(args.netns);
  if (absl::IsNotFound(ns.status())) return absl::OkStatus();
  if (!ns.ok()) return ns.status();
  absl::StatusOr<Lo> lo = OpenLo(*ns);
  if (!lo.ok()) return lo.status();
  return net::SetLinkDown(lo->sock, lo->link);
}

absl::Status Check(const CmdArgs& args) {
  absl::StatusOr<Config> config = ParseConfig(args.conf);
  if (!config.ok()) return config.status();
  absl::StatusOr<net::Netns> ns = net::Netns::Open(args.netns);
  if (!ns.ok()) return ns.status();
  absl::StatusOr<Lo> lo = OpenLo(*ns);
  if (!lo.ok()) return lo.status();
  if (!lo->link.up()) return absl::FailedPreconditionError("loopback interface is down");
  return absl::OkStatus();
}

PluginFuncs Funcs() { return {.add = Add, .del = Del, .check = Check}; }

}  // namespace cni::loopback

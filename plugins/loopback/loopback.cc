#include "loopback.h"

#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "cni/net/addr.h"
#include "cni/net/container_link.h"
#include "cni/net/link.h"
#include "cni/net/netlink.h"
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
  ASSIGN_OR_RETURN(std::vector<net::AddressInfo> addrs, net::ListAddresses(sock, ifindex, family));
  for (const net::AddressInfo& a : addrs) {
    if (!IsLoopback(a.prefix.addr())) {
      return absl::FailedPreconditionError(absl::StrCat(
          "loopback interface found with non-loopback address ", a.prefix.addr().ToString()));
    }
  }
  if (addrs.empty()) return std::optional<net::IpPrefix>();
  return std::optional<net::IpPrefix>(addrs.front().prefix);
}

}  // namespace

absl::StatusOr<Result> Add(const CmdArgs& args, const Config& config) {
  ASSIGN_OR_RETURN(net::ContainerLink lo, net::OpenContainerLink(args.netns, kLo));
  // The kernel adds 127.0.0.1/8 and ::1/128 as lo comes up.
  RETURN_IF_ERROR(net::SetLinkUp(lo.sock, lo.link));
  ASSIGN_OR_RETURN(std::optional<net::IpPrefix> v4,
                   FirstLoopbackAddress(lo.sock, lo.link.index, net::Family::kV4));
  ASSIGN_OR_RETURN(std::optional<net::IpPrefix> v6,
                   FirstLoopbackAddress(lo.sock, lo.link.index, net::Family::kV6));

  // Chained after another plugin: pass its result on unchanged (upstream).
  if (config.prev) return *config.prev;

  Result result;
  result.cni_version = args.conf.cni_version;
  // A fixed all-zero MAC and the sandbox path, as upstream reports lo.
  result.interfaces.push_back(Interface{.name = std::string(kLo),
                                        .mac = "00:00:00:00:00:00",
                                        .sandbox = args.netns});
  for (const std::optional<net::IpPrefix>& p : {v4, v6}) {
    if (p) result.ips.push_back(IpConfig{0, *p, std::nullopt});
  }
  // Upstream drops the config's dns; every plugin of ours passes it on.
  if (config.dns) result.dns = *config.dns;
  return result;
}

absl::Status Del(const CmdArgs& args) {
  // Nothing to undo without a namespace, or when it is already gone.
  ASSIGN_OR_RETURN(std::optional<net::ContainerLink> lo, net::OpenContainerLinkForTeardown(args.netns, kLo));
  if (!lo) return absl::OkStatus();
  return net::SetLinkDown(lo->sock, lo->link);
}

absl::Status Check(const CmdArgs& args, const Config& /*config: parsed to refuse a malformed one*/) {
  ASSIGN_OR_RETURN(net::ContainerLink lo, net::OpenContainerLink(args.netns, kLo));
  if (!lo.link.up()) return absl::FailedPreconditionError("loopback interface is down");
  return absl::OkStatus();
}

PluginFuncs Funcs() {
  PluginFuncs funcs = Typed<Config>({.add = Add, .check = Check});
  funcs.del = Del;  // untyped: see loopback.h
  return funcs;
}

}  // namespace cni::loopback

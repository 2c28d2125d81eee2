#include "cni/net/addr.h"

#include <netlink/cache.h>
#include <netlink/route/addr.h>

#include "absl/strings/str_cat.h"
#include "cni/status_macros.h"
#include "nl_convert.h"

namespace cni::net {
namespace {

using internal::AfOf;
using internal::FromNlAddr;
using internal::ToNlAddr;

// A libnl address object for `prefix` on `ifindex`, or null when out of memory.
RtnlAddrPtr Build(int ifindex, const IpPrefix& prefix, NlAddrPtr& local) {
  RtnlAddrPtr addr(rtnl_addr_alloc());
  local = ToNlAddr(prefix);
  if (!addr || !local) return nullptr;
  rtnl_addr_set_ifindex(addr.get(), ifindex);
  rtnl_addr_set_family(addr.get(), AfOf(prefix.family()));
  rtnl_addr_set_local(addr.get(), local.get());
  // set_local derives the prefix length from the nl_addr; set it explicitly so
  // the meaning does not depend on that detail.
  rtnl_addr_set_prefixlen(addr.get(), prefix.len());
  return addr;
}

}  // namespace

absl::Status AddAddress(NetlinkSocket& sock, int ifindex, const IpPrefix& prefix,
                        const AddressOptions& opts) {
  std::string what = absl::StrCat("adding address ", prefix.ToString(), " to link #", ifindex);
  NlAddrPtr local, brd;
  RtnlAddrPtr addr = Build(ifindex, prefix, local);
  if (!addr) return absl::ResourceExhaustedError(absl::StrCat(what, ": out of memory"));
  if (opts.flags != 0) rtnl_addr_set_flags(addr.get(), opts.flags);
  if (opts.auto_broadcast && prefix.is_v4() && prefix.len() < 31) {
    brd = ToNlAddr(prefix.LastAddress());
    if (brd) rtnl_addr_set_broadcast(addr.get(), brd.get());
  }
  nl_msg* raw = nullptr;
  // NLM_F_EXCL: an address that is already there is reported, not silently kept.
  int rc = rtnl_addr_build_add_request(addr.get(), NLM_F_EXCL, &raw);
  NlMsgPtr msg(raw);
  if (rc < 0) return NlError(rc, what);
  return sock.Transact(msg.get(), what);
}

absl::Status DeleteAddress(NetlinkSocket& sock, int ifindex, const IpPrefix& prefix) {
  std::string what = absl::StrCat("deleting address ", prefix.ToString(), " from link #", ifindex);
  NlAddrPtr local;
  RtnlAddrPtr addr = Build(ifindex, prefix, local);
  if (!addr) return absl::ResourceExhaustedError(absl::StrCat(what, ": out of memory"));
  nl_msg* raw = nullptr;
  int rc = rtnl_addr_build_delete_request(addr.get(), 0, &raw);
  NlMsgPtr msg(raw);
  if (rc < 0) return NlError(rc, what);
  return sock.Transact(msg.get(), what);
}

absl::StatusOr<std::vector<AddressInfo>> ListAddresses(NetlinkSocket& sock, int ifindex,
                                                       std::optional<Family> family) {
  auto alloc = [](nl_sock* sk, nl_cache** out) { return rtnl_addr_alloc_cache(sk, out); };
  ASSIGN_OR_RETURN(NlCachePtr cache, sock.Dump(alloc, "listing addresses"));
  std::vector<AddressInfo> out;
  for (nl_object* o = nl_cache_get_first(cache.get()); o != nullptr; o = nl_cache_get_next(o)) {
    auto* a = reinterpret_cast<rtnl_addr*>(o);
    if (ifindex != 0 && rtnl_addr_get_ifindex(a) != ifindex) continue;
    std::optional<IpAddress> ip = FromNlAddr(rtnl_addr_get_local(a));
    if (!ip) continue;
    if (family && ip->family() != *family) continue;
    AddressInfo info;
    info.ifindex = rtnl_addr_get_ifindex(a);
    info.prefix = IpPrefix(*ip, rtnl_addr_get_prefixlen(a));
    info.scope = rtnl_addr_get_scope(a);
    info.flags = rtnl_addr_get_flags(a);
    out.push_back(info);
  }
  return out;
}

}  // namespace cni::net

#include "cni/net/link.h"

#include <linux/if.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>
#include <netlink/errno.h>
#include <netlink/msg.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/hash.h"
#include "cni/base/quoted.h"
#include "cni/base/status_macros.h"
#include "link_on_master.h"
#include "link_names.h"
#include "nl_request.h"

namespace cni::net {
namespace {

// Requests and answers of this layer are written and read with libnl's
// message and attribute calls (nlmsg_*, nla_*), not through its route
// objects (rtnl_link, rtnl_addr, rtnl_route, rtnl_tc): those keep a second
// copy of every object, decode what a plugin never looks at (statistics,
// every address family's settings), and a lookup through them asks for an
// acknowledgement too and peeks before each read (five system calls for
// one link, against two). README, "Against the floor", has the measurements.

// The LinkInfo of one RTM_NEWLINK message, read straight from its
// attributes: the dozen a LinkInfo holds. nullopt: not a link message, or
// malformed.
std::optional<LinkInfo> LinkInfoOf(nlmsghdr* h) {
  if (h->nlmsg_type != RTM_NEWLINK || h->nlmsg_len < NLMSG_LENGTH(sizeof(ifinfomsg))) return std::nullopt;
  const auto* ifi = static_cast<const ifinfomsg*>(nlmsg_data(h));
  nlattr* tb[IFLA_MAX + 1] = {};
  if (nlmsg_parse(h, sizeof(ifinfomsg), tb, IFLA_MAX, nullptr) < 0) return std::nullopt;
  auto text = [](const nlattr* a) {
    if (a == nullptr) return std::string();
    const char* p = static_cast<const char*>(nla_data(a));
    return std::string(p, strnlen(p, static_cast<size_t>(nla_len(a))));
  };
  auto u32 = [](const nlattr* a) { return a != nullptr && nla_len(a) >= 4 ? nla_get_u32(const_cast<nlattr*>(a)) : 0u; };
  LinkInfo info;
  info.index = ifi->ifi_index;
  info.flags = ifi->ifi_flags;
  info.name = text(tb[IFLA_IFNAME]);
  if (tb[IFLA_LINKINFO] != nullptr) {
    nlattr* li[IFLA_INFO_MAX + 1] = {};
    if (nla_parse_nested(li, IFLA_INFO_MAX, tb[IFLA_LINKINFO], nullptr) == 0) info.kind = text(li[IFLA_INFO_KIND]);
  }
  if (tb[IFLA_ADDRESS] != nullptr && nla_len(tb[IFLA_ADDRESS]) == 6) {
    std::array<uint8_t, 6> mac;
    std::memcpy(mac.data(), nla_data(tb[IFLA_ADDRESS]), mac.size());
    info.mac = MacAddress(mac);
  }
  info.mtu = static_cast<int>(u32(tb[IFLA_MTU]));
  info.master = static_cast<int>(u32(tb[IFLA_MASTER]));
  info.alias = text(tb[IFLA_IFALIAS]);
  info.link = static_cast<int>(u32(tb[IFLA_LINK]));
  if (tb[IFLA_LINK_NETNSID] != nullptr && nla_len(tb[IFLA_LINK_NETNSID]) >= 4) {
    info.link_netnsid = static_cast<int32_t>(nla_get_u32(tb[IFLA_LINK_NETNSID]));
  }
  info.txqlen = static_cast<int>(u32(tb[IFLA_TXQLEN]));
  return info;
}

// One send and one read per lookup, through the socket's own exchange
// (libnl's rtnl_link_get_kernel asked for an acknowledgement too and peeked
// before each read: five system calls).
absl::StatusOr<LinkInfo> GetLink(NetlinkSocket& sock, int index, const char* name,
                                 absl::string_view what) {
  ASSIGN_OR_RETURN(NlMsgPtr request, internal::LinkRequest(RTM_GETLINK, 0, index, what));
  if (name != nullptr) {
    if (int rc = nla_put_string(request.get(), IFLA_IFNAME, name); rc < 0) return NlError(rc, what);
  }
  std::optional<LinkInfo> info;
  bool answered = false;
  NlExchange how{.until = NlAnswer::kOne, .each = [&](nlmsghdr* h) {
                   answered = true;
                   info = LinkInfoOf(h);
                   return false;
                 }};
  RETURN_IF_ERROR(sock.Exchange(request.get(), how, what));
  if (!info.has_value()) {
    return absl::InternalError(absl::StrCat(what, answered ? ": unreadable answer" : ": no answer"));
  }
  return *std::move(info);
}

// RTM_NEWLINK for the existing link `target` (by index) that changes only the
// IFF_* bits in `change` (to their value in `flags`) and the attributes `put`
// adds: the bytes rtnl_link_build_change_request would send for a change set
// holding just these.
absl::Status Change(NetlinkSocket& sock, const LinkInfo& target, absl::string_view what, unsigned flags,
                    unsigned change, const std::function<int(nl_msg*)>& put = nullptr) {
  ASSIGN_OR_RETURN(NlMsgPtr msg, internal::LinkRequest(RTM_NEWLINK, 0, target.index, what, AF_UNSPEC, flags, change));
  if (put) {
    if (int rc = put(msg.get()); rc < 0) return NlError(rc, what);
  }
  return internal::TransactNamingLinks(sock, msg.get(), std::string(what));
}

// The same for one attribute.
absl::Status ChangeU32(NetlinkSocket& sock, const LinkInfo& target, absl::string_view what, int type,
                       uint32_t value) {
  return Change(sock, target, what, 0, 0, [&](nl_msg* m) { return nla_put_u32(m, type, value); });
}
absl::Status ChangeString(NetlinkSocket& sock, const LinkInfo& target, absl::string_view what, int type,
                          const std::string& value) {
  // With its NUL, as libnl's builder puts strings.
  return Change(sock, target, what, 0, 0, [&](nl_msg* m) { return nla_put_string(m, type, value.c_str()); });
}

std::string VethWhat(const VethSpec& spec) {
  return absl::StrCat("creating veth ", Quoted(spec.name), " (peer ", Quoted(spec.peer_name), ")");
}

}  // namespace

bool LinkInfo::up() const { return (flags & IFF_UP) != 0; }
bool LinkInfo::promisc() const { return (flags & IFF_PROMISC) != 0; }
bool LinkInfo::allmulti() const { return (flags & IFF_ALLMULTI) != 0; }

absl::StatusOr<LinkInfo> LinkByName(NetlinkSocket& sock, absl::string_view name) {
  std::string n(name);
  return GetLink(sock, 0, n.c_str(), absl::StrCat("looking up link ", Quoted(name)));
}

absl::StatusOr<LinkInfo> LinkByIndex(NetlinkSocket& sock, int index) {
  return GetLink(sock, index, nullptr, absl::StrCat("looking up link #", index));
}

absl::StatusOr<bool> LinkExists(NetlinkSocket& sock, absl::string_view name) {
  absl::StatusOr<LinkInfo> link = LinkByName(sock, name);
  if (link.ok()) return true;
  if (absl::IsNotFound(link.status())) return false;
  return link.status();
}

absl::StatusOr<std::vector<LinkInfo>> ListLinks(NetlinkSocket& sock) {
  const std::string what = "listing links";
  ASSIGN_OR_RETURN(NlMsgPtr msg, internal::LinkRequest(RTM_GETLINK, 0, 0, what));
  std::vector<LinkInfo> out;
  NlExchange how{.until = NlAnswer::kDump,
                 .each = [&out](nlmsghdr* h) {
                   if (std::optional<LinkInfo> info = LinkInfoOf(h)) out.push_back(*std::move(info));
                   return true;
                 },
                 .restart = [&out] { out.clear(); }};
  RETURN_IF_ERROR(sock.Exchange(msg.get(), how, what));
  return out;
}

absl::StatusOr<NlMsgPtr> BuildVethRequest(const VethSpec& spec) {
  std::string what = VethWhat(spec);
  // Written here, as link changes are (see Change): the message libnl's veth
  // builder makes, without its rtnl_link objects.
  ifinfomsg ifi{.ifi_family = AF_UNSPEC};
  ASSIGN_OR_RETURN(NlMsgPtr msg, internal::RequestWith(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, ifi, what));
  nl_msg* m = msg.get();
  // One end's attributes (after its ifinfomsg): its name, MTU, MAC and (the
  // peer) namespace.
  auto put_end = [&](const std::string& name, const std::optional<MacAddress>& mac, const Netns* ns) {
    int rc = nla_put_string(m, IFLA_IFNAME, name.c_str());
    if (rc >= 0 && spec.mtu > 0) rc = nla_put_u32(m, IFLA_MTU, static_cast<uint32_t>(spec.mtu));
    if (rc >= 0 && mac) rc = nla_put(m, IFLA_ADDRESS, mac->bytes().size(), mac->bytes().data());
    // The peer is born in its namespace: it never shows up (or collides) here.
    if (rc >= 0 && ns != nullptr) rc = nla_put_u32(m, IFLA_NET_NS_FD, static_cast<uint32_t>(ns->fd()));
    return rc;
  };
  int rc = put_end(spec.name, spec.mac, nullptr);
  nlattr* linkinfo = rc >= 0 ? nla_nest_start(m, IFLA_LINKINFO) : nullptr;
  if (linkinfo != nullptr) rc = nla_put_string(m, IFLA_INFO_KIND, "veth");
  nlattr* data = rc >= 0 && linkinfo != nullptr ? nla_nest_start(m, IFLA_INFO_DATA) : nullptr;
  nlattr* peer = data != nullptr ? nla_nest_start(m, VETH_INFO_PEER) : nullptr;
  if (peer == nullptr) return NlError(rc < 0 ? rc : -NLE_NOMEM, what);
  // VETH_INFO_PEER holds the peer's own ifinfomsg, then its attributes.
  rc = nlmsg_append(m, &ifi, sizeof(ifi), NLMSG_ALIGNTO);
  if (rc >= 0) rc = put_end(spec.peer_name, spec.peer_mac, spec.peer_netns);
  if (rc < 0) return NlError(rc, what);
  nla_nest_end(m, peer);
  nla_nest_end(m, data);
  nla_nest_end(m, linkinfo);
  return msg;
}

absl::Status CreateVeth(NetlinkSocket& sock, const VethSpec& spec) {
  ASSIGN_OR_RETURN(NlMsgPtr msg, BuildVethRequest(spec));
  return sock.Transact(msg.get(), VethWhat(spec));
}

absl::StatusOr<int> VethPeerIndex(NetlinkSocket& sock, const LinkInfo& link) {
  ASSIGN_OR_RETURN(LinkInfo fresh, LinkByIndex(sock, link.index));
  if (fresh.kind != "veth") {
    return Error(ErrorCode::kInternal, absl::StrCat("finding the peer of ", Quoted(link.name),
                                                    ": not a veth (kind \"", fresh.kind, "\")"));
  }
  // IFLA_LINK carries the peer's ifindex, in whichever namespace the peer is.
  return fresh.link;
}

absl::Status SetLinkUp(NetlinkSocket& sock, const LinkInfo& link) {
  return Change(sock, link, absl::StrCat("setting link ", Quoted(link.name), " up"), IFF_UP, IFF_UP);
}

absl::Status SetLinkDown(NetlinkSocket& sock, const LinkInfo& link) {
  return Change(sock, link, absl::StrCat("setting link ", Quoted(link.name), " down"), 0, IFF_UP);
}

absl::Status SetLinkMtu(NetlinkSocket& sock, const LinkInfo& link, int mtu) {
  return ChangeU32(sock, link, absl::StrCat("setting MTU ", mtu, " on ", Quoted(link.name)), IFLA_MTU,
                   static_cast<uint32_t>(mtu));
}

absl::Status SetLinkMac(NetlinkSocket& sock, const LinkInfo& link, const MacAddress& mac) {
  return Change(sock, link, absl::StrCat("setting MAC ", mac.ToString(), " on ", Quoted(link.name)), 0, 0,
                [&mac](nl_msg* m) { return nla_put(m, IFLA_ADDRESS, mac.bytes().size(), mac.bytes().data()); });
}

absl::Status RenameLink(NetlinkSocket& sock, const LinkInfo& link, absl::string_view new_name) {
  std::string name(new_name);
  return ChangeString(sock, link, absl::StrCat("renaming link ", Quoted(link.name), " to ", Quoted(name)),
                      IFLA_IFNAME, name);
}

absl::Status SetLinkMaster(NetlinkSocket& sock, const LinkInfo& link, int master_index) {
  return ChangeU32(sock, link, absl::StrCat("setting the master of ", Quoted(link.name), " to link #", master_index),
                   IFLA_MASTER, static_cast<uint32_t>(master_index));
}

absl::Status SetLinkNoMaster(NetlinkSocket& sock, const LinkInfo& link) {
  // IFLA_MASTER = 0 detaches the link from its master.
  return ChangeU32(sock, link, absl::StrCat("releasing ", Quoted(link.name), " from its master"), IFLA_MASTER, 0);
}

absl::Status SetLinkAlias(NetlinkSocket& sock, const LinkInfo& link, absl::string_view alias) {
  std::string a(alias);
  // An empty alias clears it.
  return ChangeString(sock, link, absl::StrCat("setting alias on ", Quoted(link.name)), IFLA_IFALIAS, a);
}

absl::Status MoveLinkToNetns(NetlinkSocket& sock, const LinkInfo& link, const Netns& ns) {
  return ChangeU32(sock, link, absl::StrCat("moving link ", Quoted(link.name), " to netns ", Quoted(ns.path())),
                   IFLA_NET_NS_FD, static_cast<uint32_t>(ns.fd()));
}

absl::Status MoveLinkToNetnsAs(NetlinkSocket& sock, const LinkInfo& link, const Netns& ns,
                               absl::string_view new_name, std::optional<absl::string_view> alias) {
  const uint32_t fd = static_cast<uint32_t>(ns.fd());
  std::string name(new_name);
  std::optional<std::string> new_alias;
  if (alias) new_alias.emplace(*alias);
  return Change(sock, link,
                absl::StrCat("moving link ", Quoted(link.name), " to netns ", Quoted(ns.path()), " as ", Quoted(name)),
                0, 0, [&](nl_msg* m) {
                  int rc = nla_put_u32(m, IFLA_NET_NS_FD, fd);
                  if (rc >= 0) rc = nla_put_string(m, IFLA_IFNAME, name.c_str());
                  // Set by the kernel after the move and the rename (do_setlink's order).
                  if (rc >= 0 && new_alias) rc = nla_put_string(m, IFLA_IFALIAS, new_alias->c_str());
                  return rc;
                });
}

absl::Status DeleteLink(NetlinkSocket& sock, const LinkInfo& link) {
  std::string what = absl::StrCat("deleting link ", Quoted(link.name));
  ASSIGN_OR_RETURN(NlMsgPtr msg, internal::LinkRequest(RTM_DELLINK, 0, link.index, what));
  return sock.Transact(msg.get(), what);
}

absl::Status DeleteLinkByNameIfExists(NetlinkSocket& sock, absl::string_view name) {
  absl::StatusOr<LinkInfo> link = LinkByName(sock, name);
  if (absl::IsNotFound(link.status())) return absl::OkStatus();
  RETURN_IF_ERROR(link.status());
  absl::Status st = DeleteLink(sock, *link);
  // Someone else (the peer's namespace going away) may have deleted it first.
  if (absl::IsNotFound(st)) return absl::OkStatus();
  return st;
}

std::string TemporaryLinkName(absl::string_view prefix, absl::string_view container_id,
                              absl::string_view ifname) {
  // Neither a container ID nor an interface name can hold '/'.
  return HashWithPrefix(prefix.size() + 8, prefix, absl::StrCat(container_id, "/", ifname));
}

absl::Status DeleteLinkInNetns(absl::string_view netns_path, absl::string_view name) {
  absl::StatusOr<Netns> netns = Netns::Open(netns_path);
  if (absl::IsNotFound(netns.status())) return absl::OkStatus();
  RETURN_IF_ERROR(netns.status());
  ASSIGN_OR_RETURN(NetlinkSocket sock, NetlinkSocket::OpenIn(*netns));
  return DeleteLinkByNameIfExists(sock, name);
}

// ---- Attributes the tuning plugin changes ----

namespace {
// Sets or clears one IFF_* flag; ifi_change carries only that flag, so the
// other flags (up, ...) are left alone.
absl::Status SetFlag(NetlinkSocket& sock, const LinkInfo& link, unsigned flag, bool on,
                     absl::string_view name) {
  return Change(sock, link, absl::StrCat("turning ", name, on ? " on" : " off", " on ", Quoted(link.name)),
                on ? flag : 0, flag);
}
}  // namespace

absl::Status SetLinkPromiscuous(NetlinkSocket& sock, const LinkInfo& link, bool on) {
  return SetFlag(sock, link, IFF_PROMISC, on, "promiscuous mode");
}

absl::Status SetLinkAllmulti(NetlinkSocket& sock, const LinkInfo& link, bool on) {
  return SetFlag(sock, link, IFF_ALLMULTI, on, "all-multicast mode");
}

absl::Status SetLinkTxQLen(NetlinkSocket& sock, const LinkInfo& link, int txqlen) {
  return ChangeU32(sock, link, absl::StrCat("setting txqueuelen ", txqlen, " on ", Quoted(link.name)),
                   IFLA_TXQLEN, static_cast<uint32_t>(txqlen));
}

absl::Status CreateDummy(NetlinkSocket& sock, absl::string_view name) {
  std::string what = absl::StrCat("creating dummy ", Quoted(name));
  const std::string n(name);
  ASSIGN_OR_RETURN(NlMsgPtr msg, internal::BuildKindRequest("dummy", {.name = n, .txqlen = std::nullopt}, nullptr, what));
  return sock.Transact(msg.get(), what);
}

absl::Status CreateIfb(NetlinkSocket& sock, const IfbSpec& spec) {
  std::string what = absl::StrCat("creating ifb ", Quoted(spec.name));
  // Born up, IFLA_TXQLEN always sent: upstream creates its ifb with a queue
  // length of 0.
  ASSIGN_OR_RETURN(NlMsgPtr msg, internal::BuildKindRequest(
                                     "ifb", {.name = spec.name, .mtu = spec.mtu, .txqlen = spec.txqlen, .up = true},
                                     nullptr, what));
  RETURN_IF_ERROR(sock.Transact(msg.get(), what));
  if (spec.alias.empty()) return absl::OkStatus();
  // The kernel ignores IFLA_IFALIAS when creating a link: set it afterwards.
  ASSIGN_OR_RETURN(LinkInfo created, LinkByName(sock, spec.name));
  return SetLinkAlias(sock, created, spec.alias);
}

}  // namespace cni::net

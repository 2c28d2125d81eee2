#include "cni/net/bridge.h"

#include <linux/if.h>
#include <linux/if_bridge.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <netlink/socket.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/quoted.h"
#include "cni/base/status_macros.h"
#include "nl_request.h"

namespace cni::net {
namespace {

using internal::NoMemory;

// Sends the dump `msg` and hands every answer message to `fn`.
absl::Status DumpWith(NetlinkSocket& sock, nl_msg* msg, const std::function<void(nlmsghdr*)>& fn,
                      absl::string_view what) {
  return sock.Exchange(msg,
                       NlExchange{.until = NlAnswer::kDump,
                                  .each = [&fn](nlmsghdr* h) {
                                    fn(h);
                                    return true;
                                  }},
                       what);
}

// The attributes of an RTM_NEWLINK message, indexed by type.
struct LinkAttrs {
  ifinfomsg* ifi = nullptr;
  nlattr* tb[IFLA_MAX + 1] = {};
};

bool ParseLink(nlmsghdr* hdr, LinkAttrs& out) {
  if (hdr->nlmsg_type != RTM_NEWLINK) return false;
  out.ifi = static_cast<ifinfomsg*>(nlmsg_data(hdr));
  return nlmsg_parse(hdr, sizeof(ifinfomsg), out.tb, IFLA_MAX, nullptr) == 0;
}

uint8_t U8(nlattr* a) { return a != nullptr ? nla_get_u8(a) : 0; }

}  // namespace

absl::StatusOr<LinkInfo> BridgeByName(NetlinkSocket& sock, absl::string_view name) {
  ASSIGN_OR_RETURN(LinkInfo link, LinkByName(sock, name));
  if (link.kind != "bridge") {
    return Error(ErrorCode::kInvalidNetworkConfig,
                 absl::StrCat(Quoted(name), " already exists but is not a bridge"));
  }
  return link;
}

namespace {

absl::Status PutBridgeInfo(nl_msg* msg, std::optional<bool> vlan_filtering,
                           absl::string_view what) {
  nlattr* info = nla_nest_start(msg, IFLA_LINKINFO);
  if (info == nullptr || nla_put_string(msg, IFLA_INFO_KIND, "bridge") < 0) return NoMemory(what);
  if (vlan_filtering) {
    nlattr* data = nla_nest_start(msg, IFLA_INFO_DATA);
    if (data == nullptr || nla_put_u8(msg, IFLA_BR_VLAN_FILTERING, *vlan_filtering ? 1 : 0) < 0) {
      return NoMemory(what);
    }
    nla_nest_end(msg, data);
  }
  nla_nest_end(msg, info);
  return absl::OkStatus();
}

absl::Status CreateBridge(NetlinkSocket& sock, const BridgeSpec& spec) {
  std::string what = absl::StrCat("creating bridge ", Quoted(spec.name));
  ASSIGN_OR_RETURN(NlMsgPtr msg, internal::LinkRequest(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, 0, what, AF_UNSPEC));
  if (nla_put_string(msg.get(), IFLA_IFNAME, spec.name.c_str()) < 0) return NoMemory(what);
  if (spec.mtu > 0 && nla_put_u32(msg.get(), IFLA_MTU, static_cast<uint32_t>(spec.mtu)) < 0) {
    return NoMemory(what);
  }
  // The bridge's own address, given at creation: a MAC set by the creator is
  // never recalculated by the kernel, whereas an unset one follows the lowest
  // port MAC and changes as containers come and go (and would equal one of
  // theirs).
  MacAddress mac = MacAddress::RandomLocal();
  if (nla_put(msg.get(), IFLA_ADDRESS, static_cast<int>(mac.bytes().size()), mac.bytes().data()) < 0) {
    return NoMemory(what);
  }
  std::optional<bool> filtering;
  if (spec.vlan_filtering) filtering = true;
  RETURN_IF_ERROR(PutBridgeInfo(msg.get(), filtering, what));
  return sock.Transact(msg.get(), what);
}

}  // namespace

absl::StatusOr<LinkInfo> EnsureBridge(NetlinkSocket& sock, const BridgeSpec& spec) {
  absl::Status created = CreateBridge(sock, spec);
  if (!created.ok() && spec.vlan_filtering && ErrnoOf(created) == EOPNOTSUPP) {
    // A kernel built without CONFIG_BRIDGE_VLAN_FILTERING refuses the
    // attribute, and with it the whole bridge.
    return Annotate(created, "this kernel has no bridge VLAN filtering (CONFIG_BRIDGE_VLAN_FILTERING)");
  }
  // EEXIST: a concurrent ADD (or an earlier one) made it; use theirs, but
  // only if it really is a bridge.
  if (!created.ok() && !absl::IsAlreadyExists(created)) return created;
  ASSIGN_OR_RETURN(LinkInfo br, BridgeByName(sock, spec.name));
  bool changed = false;  // then read again, as the change left it
  if (spec.vlan_filtering && !created.ok()) {
    ASSIGN_OR_RETURN(bool on, BridgeVlanFiltering(sock, br));
    if (!on) {
      RETURN_IF_ERROR(SetBridgeVlanFiltering(sock, br, true));
      changed = true;
    }
  }
  if (spec.promisc && (br.flags & IFF_PROMISC) == 0) {
    RETURN_IF_ERROR(SetLinkPromiscuous(sock, br, true));
    changed = true;
  }
  if (!br.up()) {
    RETURN_IF_ERROR(SetLinkUp(sock, br));
    changed = true;
  }
  if (!changed) return br;  // the usual ADD: the bridge is as the last one left it
  return LinkByIndex(sock, br.index);
}

absl::Status SetBridgeVlanFiltering(NetlinkSocket& sock, const LinkInfo& bridge, bool on) {
  std::string what = absl::StrCat("setting vlan_filtering ", on ? 1 : 0, " on ", Quoted(bridge.name));
  ASSIGN_OR_RETURN(NlMsgPtr msg, internal::LinkRequest(RTM_NEWLINK, 0, bridge.index, what, AF_UNSPEC));
  RETURN_IF_ERROR(PutBridgeInfo(msg.get(), on, what));
  return sock.Transact(msg.get(), what);
}

absl::StatusOr<bool> BridgeVlanFiltering(NetlinkSocket& sock, const LinkInfo& bridge) {
  const int bridge_index = bridge.index;
  std::string what = absl::StrCat("reading vlan_filtering of ", Quoted(bridge.name));
  // A dump filtered in user space: a plain GET would need its reply and the
  // ack collected separately.
  ASSIGN_OR_RETURN(NlMsgPtr msg, internal::LinkRequest(RTM_GETLINK, 0, 0, what, AF_UNSPEC));
  std::optional<bool> found;
  auto read_filtering = [&](nlmsghdr* hdr) {
    LinkAttrs a;
    if (!ParseLink(hdr, a) || a.ifi->ifi_index != bridge_index) return;
    found = false;
    if (a.tb[IFLA_LINKINFO] == nullptr) return;
    nlattr* info[IFLA_INFO_MAX + 1] = {};
    if (nla_parse_nested(info, IFLA_INFO_MAX, a.tb[IFLA_LINKINFO], nullptr) < 0) return;
    if (info[IFLA_INFO_DATA] == nullptr) return;
    nlattr* data[IFLA_BR_MAX + 1] = {};
    if (nla_parse_nested(data, IFLA_BR_MAX, info[IFLA_INFO_DATA], nullptr) < 0) return;
    found = U8(data[IFLA_BR_VLAN_FILTERING]) != 0;
  };
  RETURN_IF_ERROR(DumpWith(sock, msg.get(), read_filtering, what));
  if (!found) return KernelError(ENODEV, what);
  return *found;
}

absl::StatusOr<NlMsgPtr> BuildBridgePortFlagsRequest(int index, const BridgePortFlags& flags) {
  std::string what = absl::StrCat("setting bridge port flags on link #", index);
  ASSIGN_OR_RETURN(NlMsgPtr msg, internal::LinkRequest(RTM_SETLINK, 0, index, what, AF_BRIDGE));
  // The kernel reads IFLA_PROTINFO as nested only when the flag says so.
  nlattr* proto = nla_nest_start(msg.get(), IFLA_PROTINFO | NLA_F_NESTED);
  if (proto == nullptr) return NoMemory(what);
  auto put = [&](int type, std::optional<bool> v) {
    return !v || nla_put_u8(msg.get(), type, *v ? 1 : 0) >= 0;
  };
  if (!put(IFLA_BRPORT_MODE, flags.hairpin) || !put(IFLA_BRPORT_ISOLATED, flags.isolated) ||
      !put(IFLA_BRPORT_LEARNING, flags.learning)) {
    return NoMemory(what);
  }
  nla_nest_end(msg.get(), proto);
  return msg;
}

absl::Status SetBridgePortFlags(NetlinkSocket& sock, const LinkInfo& port,
                                const BridgePortFlags& flags) {
  if (!flags.hairpin && !flags.isolated && !flags.learning) return absl::OkStatus();
  ASSIGN_OR_RETURN(NlMsgPtr msg, BuildBridgePortFlagsRequest(port.index, flags));
  return sock.Transact(msg.get(), absl::StrCat("setting bridge port flags on ", Quoted(port.name)));
}

absl::StatusOr<NlMsgPtr> BuildBridgeVlanRequest(int index, const BridgeVlan& vlan, bool add) {
  std::string what = absl::StrCat(add ? "adding" : "removing", " VLAN ", vlan.vid, " on link #", index);
  ASSIGN_OR_RETURN(NlMsgPtr msg,
                   internal::LinkRequest(add ? RTM_SETLINK : RTM_DELLINK, 0, index, what, AF_BRIDGE));
  nlattr* spec = nla_nest_start(msg.get(), IFLA_AF_SPEC);
  if (spec == nullptr) return NoMemory(what);
  // The port's entry in its master's table (not "self", the bridge device).
  if (nla_put_u16(msg.get(), IFLA_BRIDGE_FLAGS, BRIDGE_FLAGS_MASTER) < 0) return NoMemory(what);
  bridge_vlan_info info{};
  info.vid = vlan.vid;
  if (vlan.pvid) info.flags |= BRIDGE_VLAN_INFO_PVID;
  if (vlan.untagged) info.flags |= BRIDGE_VLAN_INFO_UNTAGGED;
  if (nla_put(msg.get(), IFLA_BRIDGE_VLAN_INFO, sizeof(info), &info) < 0) return NoMemory(what);
  nla_nest_end(msg.get(), spec);
  return msg;
}

absl::Status BridgeVlanAdd(NetlinkSocket& sock, const LinkInfo& port, const BridgeVlan& vlan) {
  ASSIGN_OR_RETURN(NlMsgPtr msg, BuildBridgeVlanRequest(port.index, vlan, true));
  return sock.Transact(msg.get(), absl::StrCat("adding VLAN ", vlan.vid, " to ", Quoted(port.name)));
}

absl::Status BridgeVlanDel(NetlinkSocket& sock, const LinkInfo& port, uint16_t vid) {
  BridgeVlan v;
  v.vid = vid;
  ASSIGN_OR_RETURN(NlMsgPtr msg, BuildBridgeVlanRequest(port.index, v, false));
  return sock.Transact(msg.get(), absl::StrCat("removing VLAN ", vid, " from ", Quoted(port.name)));
}

absl::StatusOr<BridgePortInfo> GetBridgePortState(NetlinkSocket& sock, const LinkInfo& link) {
  const int index = link.index;
  std::string what = absl::StrCat("reading bridge port ", Quoted(link.name));
  ASSIGN_OR_RETURN(NlMsgPtr msg, internal::LinkRequest(RTM_GETLINK, 0, index, what, AF_UNSPEC));
  std::optional<BridgePortInfo> found;
  NlExchange how{.until = NlAnswer::kOne, .each = [&](nlmsghdr* hdr) {
                   LinkAttrs a;
                   if (!ParseLink(hdr, a) || a.tb[IFLA_LINKINFO] == nullptr) return false;
                   nlattr* info[IFLA_INFO_MAX + 1] = {};
                   if (nla_parse_nested(info, IFLA_INFO_MAX, a.tb[IFLA_LINKINFO], nullptr) != 0 ||
                       info[IFLA_INFO_SLAVE_KIND] == nullptr || info[IFLA_INFO_SLAVE_DATA] == nullptr ||
                       std::string_view(static_cast<const char*>(nla_data(info[IFLA_INFO_SLAVE_KIND]))) != "bridge") {
                     return false;
                   }
                   nlattr* port[IFLA_BRPORT_MAX + 1] = {};
                   if (nla_parse_nested(port, IFLA_BRPORT_MAX, info[IFLA_INFO_SLAVE_DATA], nullptr) != 0) return false;
                   BridgePortInfo p;
                   p.index = index;
                   if (a.tb[IFLA_MASTER] != nullptr) p.master = static_cast<int>(nla_get_u32(a.tb[IFLA_MASTER]));
                   p.state = U8(port[IFLA_BRPORT_STATE]);
                   p.hairpin = U8(port[IFLA_BRPORT_MODE]) != 0;
                   p.isolated = U8(port[IFLA_BRPORT_ISOLATED]) != 0;
                   p.learning = U8(port[IFLA_BRPORT_LEARNING]) != 0;
                   found = std::move(p);
                   return false;
                 }};
  RETURN_IF_ERROR(sock.Exchange(msg.get(), how, what));
  if (!found) return absl::NotFoundError(absl::StrCat(what, ": not a bridge port"));
  return *std::move(found);
}

absl::StatusOr<BridgePortInfo> GetBridgePort(NetlinkSocket& sock, const LinkInfo& link) {
  const int index = link.index;
  std::string what = absl::StrCat("reading bridge port ", Quoted(link.name));
  ASSIGN_OR_RETURN(NlMsgPtr msg, internal::LinkRequest(RTM_GETLINK, 0, 0, what, AF_BRIDGE));
  if (nla_put_u32(msg.get(), IFLA_EXT_MASK, RTEXT_FILTER_BRVLAN) < 0) return NoMemory(what);
  std::optional<BridgePortInfo> found;
  auto read_port = [&](nlmsghdr* hdr) {
    LinkAttrs a;
    if (!ParseLink(hdr, a) || a.ifi->ifi_index != index) return;
    // The bridge itself also answers (its "self" VLANs); ports carry PROTINFO.
    if (a.tb[IFLA_PROTINFO] == nullptr) return;
    BridgePortInfo p;
    p.index = index;
    if (a.tb[IFLA_MASTER] != nullptr) p.master = static_cast<int>(nla_get_u32(a.tb[IFLA_MASTER]));
    nlattr* port[IFLA_BRPORT_MAX + 1] = {};
    if (nla_parse_nested(port, IFLA_BRPORT_MAX, a.tb[IFLA_PROTINFO], nullptr) == 0) {
      p.state = U8(port[IFLA_BRPORT_STATE]);
      p.hairpin = U8(port[IFLA_BRPORT_MODE]) != 0;
      p.isolated = U8(port[IFLA_BRPORT_ISOLATED]) != 0;
      p.learning = U8(port[IFLA_BRPORT_LEARNING]) != 0;
    }
    if (a.tb[IFLA_AF_SPEC] != nullptr) {
      nlattr* attr = nullptr;
      int rem = 0;
      nla_for_each_nested(attr, a.tb[IFLA_AF_SPEC], rem) {
        if (nla_type(attr) != IFLA_BRIDGE_VLAN_INFO || nla_len(attr) < static_cast<int>(sizeof(bridge_vlan_info))) {
          continue;
        }
        const auto* info = static_cast<const bridge_vlan_info*>(nla_data(attr));
        BridgeVlan v;
        v.vid = info->vid;
        v.pvid = (info->flags & BRIDGE_VLAN_INFO_PVID) != 0;
        v.untagged = (info->flags & BRIDGE_VLAN_INFO_UNTAGGED) != 0;
        p.vlans.push_back(v);
      }
    }
    found = std::move(p);
  };
  RETURN_IF_ERROR(DumpWith(sock, msg.get(), read_port, what));
  if (!found) return absl::NotFoundError(absl::StrCat(what, ": not a bridge port"));
  return *std::move(found);
}

}  // namespace cni::net

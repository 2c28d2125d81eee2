#include "cni/net/qdisc.h"

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <linux/tc_act/tc_mirred.h>
#include <netlink/attr.h>
#include <netlink/errno.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"
#include "cni/base/status_macros.h"
#include "link_names.h"
#include "nl_request.h"

namespace cni::net {
namespace {

std::string On(int ifindex) { return absl::StrCat(" on link #", ifindex); }

// A traffic-control request: the tcmsg header, attributes to follow. Written
// here, as libnl's qdisc and classifier builders write it, without their
// rtnl_tc objects (see link.cc).
absl::StatusOr<NlMsgPtr> TcRequest(int type, int flags, int ifindex, uint32_t handle, uint32_t parent,
                                   uint32_t info, absl::string_view what) {
  tcmsg tcm{};
  tcm.tcm_family = AF_UNSPEC;
  tcm.tcm_ifindex = ifindex;
  tcm.tcm_handle = handle;
  tcm.tcm_parent = parent;
  tcm.tcm_info = info;
  return internal::RequestWith(type, flags, tcm, what);
}

// The qdisc of an RTM_NEWQDISC message when it is on link `ifindex`.
std::optional<QdiscInfo> QdiscOf(nlmsghdr* hdr, int ifindex) {
  if (hdr->nlmsg_type != RTM_NEWQDISC) return std::nullopt;
  const auto* tcm = static_cast<const tcmsg*>(nlmsg_data(hdr));
  if (tcm->tcm_ifindex != ifindex) return std::nullopt;
  nlattr* tb[TCA_MAX + 1] = {};
  if (nlmsg_parse(hdr, sizeof(tcmsg), tb, TCA_MAX, nullptr) < 0) return std::nullopt;
  QdiscInfo q;
  q.ifindex = tcm->tcm_ifindex;
  q.handle = tcm->tcm_handle;
  q.parent = tcm->tcm_parent;
  if (tb[TCA_KIND] != nullptr) q.kind = nla_get_string(tb[TCA_KIND]);
  if (q.kind == "tbf" && tb[TCA_OPTIONS] != nullptr) {
    nlattr* opts[TCA_TBF_MAX + 1] = {};
    if (nla_parse_nested(opts, TCA_TBF_MAX, tb[TCA_OPTIONS], nullptr) == 0 &&
        opts[TCA_TBF_PARMS] != nullptr && nla_len(opts[TCA_TBF_PARMS]) >= int(sizeof(tc_tbf_qopt))) {
      tc_tbf_qopt qopt;
      std::memcpy(&qopt, nla_data(opts[TCA_TBF_PARMS]), sizeof(qopt));
      TbfParams p;
      p.rate = qopt.rate.rate;
      if (opts[TCA_TBF_RATE64] != nullptr) p.rate = nla_get_u64(opts[TCA_TBF_RATE64]);
      p.limit = qopt.limit;
      p.buffer = qopt.buffer;
      q.tbf = p;
    }
  }
  return q;
}

}  // namespace

double TicksPerUsec() {
  // "t2us us2t clock_res hz" in hex; ticks per usec = t2us / us2t, as libnl
  // and the Go netlink library compute it.
  static const double value = [] {
    unsigned t2us = 0, us2t = 0;
    FILE* f = std::fopen("/proc/net/psched", "re");
    if (f == nullptr) return 1.0;
    int n = std::fscanf(f, "%x %x", &t2us, &us2t);
    std::fclose(f);
    if (n != 2 || us2t == 0) return 1.0;
    return static_cast<double>(t2us) / static_cast<double>(us2t);
  }();
  return value;
}

absl::Status AddTbfQdisc(NetlinkSocket& sock, int ifindex, uint32_t handle, const TbfParams& params) {
  std::string what = absl::StrCat("adding tbf qdisc", On(ifindex));
  // Built by hand rather than with rtnl_qdisc_tbf_set_rate: libnl derives the
  // buffer from a byte count with its own rounding and adds a rate table; the
  // kernel must hold exactly upstream's numbers, or CHECK (ours or upstream's)
  // would see a different buffer.
  ASSIGN_OR_RETURN(NlMsgPtr msg, TcRequest(RTM_NEWQDISC, NLM_F_CREATE | NLM_F_EXCL, ifindex, handle, kTcRoot, 0, what));
  tc_tbf_qopt qopt{};
  qopt.rate.rate = params.rate >= (uint64_t{1} << 32) ? ~0u : static_cast<uint32_t>(params.rate);
  qopt.limit = params.limit;
  qopt.buffer = params.buffer;
  int rc = nla_put_string(msg.get(), TCA_KIND, "tbf");
  nlattr* opts = rc >= 0 ? nla_nest_start(msg.get(), TCA_OPTIONS) : nullptr;
  if (opts == nullptr) return NlError(rc < 0 ? rc : -NLE_NOMEM, what);
  rc = nla_put(msg.get(), TCA_TBF_PARMS, sizeof(qopt), &qopt);
  if (rc >= 0 && params.rate >= (uint64_t{1} << 32)) {
    rc = nla_put_u64(msg.get(), TCA_TBF_RATE64, params.rate);
  }
  if (rc >= 0) rc = nla_nest_end(msg.get(), opts);
  if (rc < 0) return NlError(rc, what);
  return internal::TransactNamingLinks(sock, msg.get(), what);
}

absl::Status AddIngressQdisc(NetlinkSocket& sock, int ifindex) {
  std::string what = absl::StrCat("adding ingress qdisc", On(ifindex));
  ASSIGN_OR_RETURN(NlMsgPtr msg,
                   TcRequest(RTM_NEWQDISC, NLM_F_CREATE | NLM_F_EXCL, ifindex, kIngressHandle, kTcIngress, 0, what));
  if (int rc = nla_put_string(msg.get(), TCA_KIND, "ingress"); rc < 0) return NlError(rc, what);
  return internal::TransactNamingLinks(sock, msg.get(), what);
}

absl::Status AddRedirectFilter(NetlinkSocket& sock, int ifindex, int target_ifindex, uint16_t prio) {
  std::string what = absl::StrCat("adding u32 redirect filter to link #", target_ifindex, On(ifindex));
  // tcm_info: the priority above, the protocol (network order) below.
  const uint32_t info = TC_H_MAKE(static_cast<uint32_t>(prio) << 16, htons(ETH_P_ALL));
  ASSIGN_OR_RETURN(NlMsgPtr msg,
                   TcRequest(RTM_NEWTFILTER, NLM_F_CREATE | NLM_F_EXCL, ifindex, 0, kIngressHandle, info, what));
  nl_msg* m = msg.get();
  // classid 1:1 and one all-zero key (value 0, mask 0 at offset 0), terminal:
  // matches every packet, as upstream's filter does.
  tc_u32_sel sel{};
  sel.flags = TC_U32_TERMINAL;
  sel.nkeys = 1;
  std::array<unsigned char, sizeof(tc_u32_sel) + sizeof(tc_u32_key)> selector{};  // the key: all zero
  std::memcpy(selector.data(), &sel, sizeof(sel));
  // The action: redirect to the target's egress, the packet stolen.
  tc_mirred mirred{};
  mirred.action = TC_ACT_STOLEN;
  mirred.eaction = TCA_EGRESS_REDIR;
  mirred.ifindex = static_cast<uint32_t>(target_ifindex);
  int rc = nla_put_string(m, TCA_KIND, "u32");
  nlattr* options = rc >= 0 ? nla_nest_start(m, TCA_OPTIONS) : nullptr;
  if (options != nullptr) rc = nla_put_u32(m, TCA_U32_CLASSID, TcHandle(1, 1));
  if (options != nullptr && rc >= 0) rc = nla_put(m, TCA_U32_SEL, selector.size(), selector.data());
  nlattr* actions = options != nullptr && rc >= 0 ? nla_nest_start(m, TCA_U32_ACT) : nullptr;
  nlattr* first = actions != nullptr ? nla_nest_start(m, 1) : nullptr;  // actions are numbered from 1
  if (first != nullptr) rc = nla_put_string(m, TCA_ACT_KIND, "mirred");
  nlattr* act_options = first != nullptr && rc >= 0 ? nla_nest_start(m, TCA_ACT_OPTIONS) : nullptr;
  if (act_options == nullptr) return NlError(rc < 0 ? rc : -NLE_NOMEM, what);
  if (rc = nla_put(m, TCA_MIRRED_PARMS, sizeof(mirred), &mirred); rc < 0) return NlError(rc, what);
  for (nlattr* nest : {act_options, first, actions, options}) nla_nest_end(m, nest);
  return internal::TransactNamingLinks(sock, msg.get(), what);
}

absl::StatusOr<std::vector<QdiscInfo>> ListQdiscs(NetlinkSocket& sock, int ifindex) {
  std::string what = absl::StrCat("listing qdiscs", On(ifindex));
  ASSIGN_OR_RETURN(NlMsgPtr msg, TcRequest(RTM_GETQDISC, 0, ifindex, 0, 0, 0, what));
  std::vector<QdiscInfo> out;
  RETURN_IF_ERROR(sock.Exchange(msg.get(),
                                NlExchange{.until = NlAnswer::kDump,
                                           .each =
                                               [&](nlmsghdr* h) {
                                                 if (std::optional<QdiscInfo> q = QdiscOf(h, ifindex)) {
                                                   out.push_back(*std::move(q));
                                                 }
                                                 return true;
                                               },
                                           .restart = [&out] { out.clear(); }},
                                what));
  return out;
}

absl::StatusOr<std::optional<QdiscInfo>> GetQdisc(NetlinkSocket& sock, int ifindex, uint32_t parent) {
  std::string what = absl::StrCat("reading the ", parent == kTcIngress ? "ingress" : "root", " qdisc", On(ifindex));
  // NLM_F_ECHO: kernels before 6.3 send a GET's answer only to an echo
  // request. The answer is left out for a built-in qdisc (noqueue, a veth's
  // default root), so the acknowledgement (Exchange asks for one) is what
  // ends the exchange, with or without an answer before it.
  ASSIGN_OR_RETURN(NlMsgPtr msg, TcRequest(RTM_GETQDISC, NLM_F_ECHO, ifindex, 0, parent, 0, what));
  std::optional<QdiscInfo> found;
  absl::Status st = sock.Exchange(msg.get(),
                                  NlExchange{.until = NlAnswer::kAck,
                                             .each =
                                                 [&](nlmsghdr* h) {
                                                   if (!found) found = QdiscOf(h, ifindex);
                                                   return true;
                                                 }},
                                  what);
  // No ingress qdisc is ENOENT.
  if (absl::IsNotFound(st)) return std::nullopt;
  RETURN_IF_ERROR(st);
  return found;
}

absl::Status DeleteQdisc(NetlinkSocket& sock, int ifindex, uint32_t parent) {
  std::string what = absl::StrCat("deleting ", parent == kTcIngress ? "ingress" : "root",
                                  " qdisc", On(ifindex));
  ASSIGN_OR_RETURN(NlMsgPtr msg, TcRequest(RTM_DELQDISC, 0, ifindex, 0, parent, 0, what));
  return internal::TransactNamingLinks(sock, msg.get(), what);
}

}  // namespace cni::net

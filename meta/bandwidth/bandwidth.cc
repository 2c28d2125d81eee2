#include "bandwidth.h"

#include <set>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "cni/net/container_link.h"
#include "cni/net/link.h"
#include "cni/net/netlink.h"
#include "cni/net/netns.h"
#include "cni/net/qdisc.h"
#include "cni/protocol/version.h"
#include "config.h"

namespace cni::bandwidth {
namespace {

constexpr uint32_t kTbfHandle = net::TcHandle(1, 0);

absl::Status Fail(absl::string_view msg) {
  return Error(ErrorCode::kInternal, absl::StrCat("bandwidth: ", msg));
}

absl::Status NotChained() {
  return Error(ErrorCode::kInvalidNetworkConfig,
               "bandwidth: must be called as a chained plugin (prevResult is required)");
}

// The host end of the container's veth: the peer of CNI_IFNAME, which must be
// one of prevResult's host interfaces (upstream's rule).
absl::StatusOr<net::LinkInfo> HostVeth(const CmdArgs& args, const Result& prev,
                                       net::NetlinkSocket& host) {
  ASSIGN_OR_RETURN(net::ContainerLink ctr, net::OpenContainerLink(args.netns, args.ifname),
                   "bandwidth: container interface");
  absl::StatusOr<int> peer = net::VethPeerIndex(ctr.sock, ctr.link);
  if (!peer.ok() || *peer <= 0) {
    return Fail(absl::StrCat("container interface \"", args.ifname, "\" has no veth peer",
                             peer.ok() ? "" : absl::StrCat(": ", peer.status().message())));
  }
  absl::StatusOr<net::LinkInfo> host_link = net::LinkByIndex(host, *peer);
  if (!host_link.ok()) return Fail(absl::StrCat("veth peer with index ", *peer, " is not in the host namespace"));
  for (const Interface& iface : prev.interfaces) {
    if (iface.sandbox.empty() && iface.name == host_link->name) return *host_link;
  }
  return Fail(absl::StrCat("the veth peer \"", host_link->name, "\" of \"", args.ifname,
                           "\" is not among prevResult's host interfaces"));
}

// ADD and CHECK refuse an unchained call: the prevResult they work from.
absl::StatusOr<Result> PrevResult(const Config& c) {
  RETURN_IF_ERROR(c.prev_result);
  if (!*c.prev_result) return NotChained();
  return **c.prev_result;
}

// The root TBF of `ifindex` must carry exactly `want`.
// One GET per qdisc below, never a dump: a dump holds every qdisc of every
// link on the node, and its cost grows with the containers.
absl::Status VerifyTbf(net::NetlinkSocket& sock, const net::LinkInfo& link, const net::TbfParams& want) {
  ASSIGN_OR_RETURN(std::optional<net::QdiscInfo> q, net::GetQdisc(sock, link.index, net::kTcRoot));
  if (!q.has_value() || q->parent != net::kTcRoot) return Fail(absl::StrCat("no tbf qdisc on \"", link.name, "\""));
  if (q->kind != "tbf" || !q->tbf) {
    return Fail(absl::StrCat("root qdisc of \"", link.name, "\" is ", q->kind, ", not tbf"));
  }
  if (q->tbf->rate != want.rate) return Fail(absl::StrCat("rate of \"", link.name, "\" doesn't match"));
  if (q->tbf->limit != want.limit) return Fail(absl::StrCat("limit of \"", link.name, "\" doesn't match"));
  if (q->tbf->buffer != want.buffer) return Fail(absl::StrCat("buffer of \"", link.name, "\" doesn't match"));
  return absl::OkStatus();
}

// Removes our qdiscs from the host veth (best effort: the veth usually goes
// with the container).
void RemoveHostQdiscs(net::NetlinkSocket& host, int ifindex) {
  absl::StatusOr<std::optional<net::QdiscInfo>> root = net::GetQdisc(host, ifindex, net::kTcRoot);
  if (root.ok() && root->has_value() && (*root)->kind == "tbf" && (*root)->handle == kTbfHandle) {
    (void)net::DeleteQdisc(host, ifindex, net::kTcRoot);
  }
  absl::StatusOr<std::optional<net::QdiscInfo>> ingress = net::GetQdisc(host, ifindex, net::kTcIngress);
  if (ingress.ok() && ingress->has_value() && (*ingress)->kind == "ingress") {
    (void)net::DeleteQdisc(host, ifindex, net::kTcIngress);
  }
}

}  // namespace

std::vector<std::string> SupportedVersions() {
  std::vector<std::string> out;
  for (const std::string& v : AllVersions()) {
    if (VersionAtLeast(v, "0.3.0")) out.push_back(v);
  }
  return out;
}

std::string IfbAlias(const std::string& network, const std::string& container_id) {
  return absl::StrCat("cni-bandwidth ", network, " ", container_id);
}

namespace {

absl::StatusOr<Result> Add(const CmdArgs& args, const Config& config) {
  ASSIGN_OR_RETURN(Result result, PrevResult(config));
  result.cni_version = args.conf.cni_version;
  const Limits& l = config.limits;
  if (!l.HasIngress() && !l.HasEgress()) return result;

  ASSIGN_OR_RETURN(net::NetlinkSocket host, net::NetlinkSocket::Open());
  ASSIGN_OR_RETURN(net::LinkInfo veth, HostVeth(args, result, host));

  // A failed ADD leaves nothing: the ifb and the veth's qdiscs go again.
  std::string ifb = IfbName(config.name, args.container_id);
  absl::Cleanup undo = [&] {
    (void)net::DeleteLinkByNameIfExists(host, ifb);
    RemoveHostQdiscs(host, veth.index);
  };

  double ticks = net::TicksPerUsec();
  if (l.HasIngress()) {
    RETURN_IF_ERROR(net::AddTbfQdisc(host, veth.index, kTbfHandle,
                                     TbfFor(l.ingress_rate, l.ingress_burst, ticks)),
                    "bandwidth");
  }
  if (l.HasEgress()) {
    net::IfbSpec spec;
    spec.name = ifb;
    spec.mtu = veth.mtu;
    spec.alias = IfbAlias(config.name, args.container_id);
    RETURN_IF_ERROR(net::CreateIfb(host, spec), "bandwidth");
    ASSIGN_OR_RETURN(net::LinkInfo ifb_link, net::LinkByName(host, ifb));
    Interface iface;
    iface.name = ifb;
    iface.mac = ifb_link.mac.ToString();
    result.interfaces.push_back(iface);
    RETURN_IF_ERROR(net::AddIngressQdisc(host, veth.index), "bandwidth");
    RETURN_IF_ERROR(net::AddRedirectFilter(host, veth.index, ifb_link.index), "bandwidth");
    RETURN_IF_ERROR(net::AddTbfQdisc(host, ifb_link.index, kTbfHandle,
                                     TbfFor(l.egress_rate, l.egress_burst, ticks)),
                    "bandwidth");
  }
  std::move(undo).Cancel();
  return result;
}

absl::Status Del(const CmdArgs& args, const Config& config) {
  ASSIGN_OR_RETURN(net::NetlinkSocket host, net::NetlinkSocket::Open());
  RETURN_IF_ERROR(net::DeleteLinkByNameIfExists(host, IfbName(config.name, args.container_id)),
                  "bandwidth");
  // The ingress TBF and the redirect sit on the host veth, which normally goes
  // away with the container; take them off if the veth is still there.
  const absl::StatusOr<std::optional<Result>>& prev = config.prev_result;
  if (!args.netns.empty() && prev.ok() && *prev) {
    absl::StatusOr<net::LinkInfo> veth = HostVeth(args, **prev, host);
    if (veth.ok()) RemoveHostQdiscs(host, veth->index);
  }
  return absl::OkStatus();
}

absl::Status Check(const CmdArgs& args, const Config& config) {
  ASSIGN_OR_RETURN(Result prev, PrevResult(config));
  const Limits& l = config.limits;
  // No limits: ADD made nothing, so there is nothing to find (upstream 1.9.1
  // answers success here too, without looking for the veth).
  if (!l.HasIngress() && !l.HasEgress()) return absl::OkStatus();
  ASSIGN_OR_RETURN(net::NetlinkSocket host, net::NetlinkSocket::Open());
  ASSIGN_OR_RETURN(net::LinkInfo veth, HostVeth(args, prev, host));
  double ticks = net::TicksPerUsec();
  if (l.HasIngress()) {
    RETURN_IF_ERROR(VerifyTbf(host, veth, TbfFor(l.ingress_rate, l.ingress_burst, ticks)));
  }
  if (l.HasEgress()) {
    std::string name = IfbName(config.name, args.container_id);
    ASSIGN_OR_RETURN(net::LinkInfo ifb, net::LinkByName(host, name), "bandwidth: ifb device");
    RETURN_IF_ERROR(VerifyTbf(host, ifb, TbfFor(l.egress_rate, l.egress_burst, ticks)));
    ASSIGN_OR_RETURN(std::optional<net::QdiscInfo> ingress, net::GetQdisc(host, veth.index, net::kTcIngress));
    if (!ingress.has_value()) return Fail(absl::StrCat("no ingress qdisc on \"", veth.name, "\""));
  }
  return absl::OkStatus();
}

// Deletes this network's ifb devices whose container is not in the valid list.
absl::Status Gc(const CmdArgs& args, const Config& config) {
  std::set<std::string> valid;
  for (const Attachment& a : args.conf.valid_attachments) valid.insert(a.container_id);
  ASSIGN_OR_RETURN(net::NetlinkSocket host, net::NetlinkSocket::Open());
  ASSIGN_OR_RETURN(std::vector<net::LinkInfo> links, net::ListLinks(host));
  std::string prefix = IfbAlias(config.name, "");
  std::vector<std::string> errors;
  for (const net::LinkInfo& link : links) {
    // Only ifbs we made for this network (upstream's carry no alias).
    if (link.kind != "ifb" || !absl::StartsWith(link.alias, prefix)) continue;
    std::string id = link.alias.substr(prefix.size());
    if (valid.count(id) || link.name != IfbName(config.name, id)) continue;
    if (absl::Status st = net::DeleteLinkByNameIfExists(host, link.name); !st.ok()) {
      errors.emplace_back(st.message());
    }
  }
  if (errors.empty()) return absl::OkStatus();
  return Fail(absl::StrJoin(errors, "; "));
}

// Parsing the configuration is all there is to check.
absl::Status Status(const CmdArgs&, const Config&) { return absl::OkStatus(); }

}  // namespace

PluginFuncs Funcs() {
  // DEL and GC read only what the teardown needs (TeardownConfig).
  return TypedWithTeardown<Config, TeardownConfig>({.add = Add, .check = Check, .status = Status},
                                                   {.del = Del, .gc = Gc});
}

}  // namespace cni::bandwidth

#include "bandwidth.h"

#include <set>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cni/error.h"
#include "cni/net/link.h"
#include "cni/net/netlink.h"
#include "cni/net/netns.h"
#include "cni/net/qdisc.h"
#include "cni/version.h"
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
  absl::StatusOr<net::Netns> ns = net::Netns::Open(args.netns);
  if (!ns.ok()) return ns.status();
  absl::StatusOr<net::NetlinkSocket> ctr = net::NetlinkSocket::OpenIn(*ns);
  if (!ctr.ok()) return ctr.status();
  absl::StatusOr<net::LinkInfo> link = net::LinkByName(*ctr, args.ifname);
  if (!link.ok()) return Annotate(link.status(), "bandwidth: container interface");
  absl::StatusOr<int> peer = net::VethPeerIndex(*ctr, *link);
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

// Parses what ADD and CHECK need; both refuse an unchained call.
absl::StatusOr<std::pair<Config, Result>> ParseChained(const CmdArgs& args) {
  absl::StatusOr<Config> c = ParseConfig(args.conf);
  if (!c.ok()) return c.status();
  absl::StatusOr<std::optional<Result>> prev = ParsePrevResult(args.conf);
  if (!prev.ok()) return prev.status();
  if (!*prev) return NotChained();
  return std::make_pair(*std::move(c), **std::move(prev));
}

// The root TBF of `ifindex` must carry exactly `want`.
absl::Status VerifyTbf(net::NetlinkSocket& sock, const net::LinkInfo& link, const net::TbfParams& want) {
  absl::StatusOr<std::vector<net::QdiscInfo>> qdiscs = net::ListQdiscs(sock, link.index);
  if (!qdiscs.ok()) return qdiscs.status();
  for (const net::QdiscInfo& q : *qdiscs) {
    if (q.parent != net::kTcRoot) continue;
    if (q.kind != "tbf" || !q.tbf) {
      return Fail(absl::StrCat("root qdisc of \"", link.name, "\" is ", q.kind, ", not tbf"));
    }
    if (q.tbf->rate != want.rate) return Fail(absl::StrCat("rate of \"", link.name, "\" doesn't match"));
    if (q.tbf->limit != want.limit) return Fail(absl::StrCat("limit of \"", link.name, "\" doesn't match"));
    if (q.tbf->buffer != want.buffer) return Fail(absl::StrCat("buffer of \"", link.name, "\" doesn't match"));
    return absl::OkStatus();
  }
  return Fail(absl::StrCat("no tbf qdisc on \"", link.name, "\""));
}

// Removes our qdiscs from the host veth (best effort: the veth usually goes
// with the container).
void RemoveHostQdiscs(net::NetlinkSocket& host, int ifindex) {
  absl::StatusOr<std::vector<net::QdiscInfo>> qdiscs = net::ListQdiscs(host, ifindex);
  if (!qdiscs.ok()) return;
  for (const net::QdiscInfo& q : *qdiscs) {
    bool ours = (q.parent == net::kTcRoot && q.kind == "tbf" && q.handle == kTbfHandle) ||
                (q.parent == net::kTcIngress && q.kind == "ingress");
    if (ours) (void)net::DeleteQdisc(host, ifindex, q.parent);
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

absl::StatusOr<Result> Add(const CmdArgs& args) {
  absl::StatusOr<std::pair<Config, Result>> parsed = ParseChained(args);
  if (!parsed.ok()) return parsed.status();
  auto& [config, result] = *parsed;
  result.cni_version = args.conf.cni_version;
  const Limits& l = config.limits;
  if (!l.HasIngress() && !l.HasEgress()) return result;

  absl::StatusOr<net::NetlinkSocket> host = net::NetlinkSocket::Open();
  if (!host.ok()) return host.status();
  absl::StatusOr<net::LinkInfo> veth = HostVeth(args, result, *host);
  if (!veth.ok()) return veth.status();

  // A failed ADD leaves nothing: the ifb and the veth's qdiscs go again.
  std::string ifb = IfbName(config.name, args.container_id);
  bool done = false;
  absl::Cleanup undo = [&] {
    if (done) return;
    (void)net::DeleteLinkByNameIfExists(*host, ifb);
    RemoveHostQdiscs(*host, veth->index);
  };

  double ticks = net::TicksPerUsec();
  if (l.HasIngress()) {
    absl::Status st = net::AddTbfQdisc(*host, veth->index, kTbfHandle,
                                       TbfFor(l.ingress_rate, l.ingress_burst, ticks));
    if (!st.ok()) return Annotate(st, "bandwidth");
  }
  if (l.HasEgress()) {
    net::IfbSpec spec;
    spec.name = ifb;
    spec.mtu = veth->mtu;
    spec.alias = IfbAlias(config.name, args.container_id);
    if (absl::Status st = net::CreateIfb(*host, spec); !st.ok()) return Annotate(st, "bandwidth");
    absl::StatusOr<net::LinkInfo> ifb_link = net::LinkByName(*host, ifb);
    if (!ifb_link.ok()) return ifb_link.status();
    Interface iface;
    iface.name = ifb;
    iface.mac = ifb_link->mac.ToString();
    result.interfaces.push_back(iface);
    absl::Status st = net::AddIngressQdisc(*host, veth->index);
    if (st.ok()) st = net::AddRedirectFilter(*host, veth->index, ifb_link->index);
    if (st.ok()) {
      st = net::AddTbfQdisc(*host, ifb_link->index, kTbfHandle,
                            TbfFor(l.egress_rate, l.egress_burst, ticks));
    }
    if (!st.ok()) return Annotate(st, "bandwidth");
  }
  done = true;
  return result;
}

absl::Status Del(const CmdArgs& args) {
  absl::StatusOr<Config> config = ParseConfig(args.conf);
  if (!config.ok()) return config.status();
  absl::StatusOr<net::NetlinkSocket> host = net::NetlinkSocket::Open();
  if (!host.ok()) return host.status();
  absl::Status st = net::DeleteLinkByNameIfExists(*host, IfbName(config->name, args.container_id));
  if (!st.ok()) return Annotate(st, "bandwidth");
  // The ingress TBF and the redirect sit on the host veth, which normally goes
  // away with the container; take them off if the veth is still there.
  absl::StatusOr<std::optional<Result>> prev = ParsePrevResult(args.conf);
  if (!args.netns.empty() && prev.ok() && *prev) {
    absl::StatusOr<net::LinkInfo> veth = HostVeth(args, **prev, *host);
    if (veth.ok()) RemoveHostQdiscs(*host, veth->index);
  }
  return absl::OkStatus();
}

absl::Status Check(const CmdArgs& args) {
  absl::StatusOr<std::pair<Config, Result>> parsed = ParseChained(args);
  if (!parsed.ok()) return parsed.status();
  const Limits& l = parsed->first.limits;
  absl::StatusOr<net::NetlinkSocket> host = net::NetlinkSocket::Open();
  if (!host.ok()) return host.status();
  absl::StatusOr<net::LinkInfo> veth = HostVeth(args, parsed->second, *host);
  if (!veth.ok()) return veth.status();
  double ticks = net::TicksPerUsec();
  if (l.HasIngress()) {
    if (absl::Status st = VerifyTbf(*host, *veth, TbfFor(l.ingress_rate, l.ingress_burst, ticks)); !st.ok()) {
      return st;
    }
  }
  if (l.HasEgress()) {
    std::string name = IfbName(parsed->first.name, args.container_id);
    absl::StatusOr<net::LinkInfo> ifb = net::LinkByName(*host, name);
    if (!ifb.ok()) return Annotate(ifb.status(), "bandwidth: ifb device");
    if (absl::Status st = VerifyTbf(*host, *ifb, TbfFor(l.egress_rate, l.egress_burst, ticks)); !st.ok()) {
      return st;
    }
    absl::StatusOr<std::vector<net::QdiscInfo>> qdiscs = net::ListQdiscs(*host, veth->index);
    if (!qdiscs.ok()) return qdiscs.status();
    bool ingress = false;
    for (const net::QdiscInfo& q : *qdiscs) ingress |= q.parent == net::kTcIngress;
    if (!ingress) return Fail(absl::StrCat("no ingress qdisc on \"", veth->name, "\""));
  }
  return absl::OkStatus();
}

absl::Status Gc(const CmdArgs& args) {
  absl::StatusOr<Config> config = ParseConfig(args.conf);
  if (!config.ok()) return config.status();
  std::set<std::string> valid;
  for (const Attachment& a : args.conf.valid_attachments) valid.insert(a.container_id);
  absl::StatusOr<net::NetlinkSocket> host = net::NetlinkSocket::Open();
  if (!host.ok()) return host.status();
  absl::StatusOr<std::vector<net::LinkInfo>> links = net::ListLinks(*host);
  if (!links.ok()) return links.status();
  std::string prefix = absl::StrCat(IfbAlias(config->name, ""));
  std::vector<std::string> errors;
  for (const net::LinkInfo& link : *links) {
    // Only ifbs we made for this network (upstream's carry no alias).
    if (link.kind != "ifb" || !absl::StartsWith(link.alias, prefix)) continue;
    std::string id = link.alias.substr(prefix.size());
    if (valid.count(id) || link.name != IfbName(config->name, id)) continue;
    if (absl::Status st = net::DeleteLinkByNameIfExists(*host, link.name); !st.ok()) {
      errors.emplace_back(st.message());
    }
  }
  if (errors.empty()) return absl::OkStatus();
  return Fail(absl::StrJoin(errors, "; "));
}

absl::Status Status(const CmdArgs& args) { return ParseConfig(args.conf).status(); }

PluginFuncs Funcs() { return {.add = Add, .del = Del, .check = Check, .gc = Gc, .status = Status}; }

}  // namespace cni::bandwidth

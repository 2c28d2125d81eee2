// nftables backend: tables ip/ip6 cni_hostport as upstream's knftables code
// builds them. Every rule of a container carries its ID as the comment, which
// is how DEL/GC find them (and how upstream's DEL finds ours).
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cni/error.h"
#include "cni/fw/iptables.h"  // RetryOnConflict
#include "cni/fw/nft.h"
#include "portmap.h"

namespace cni::portmap::nft {
namespace {

constexpr const char* kTable = "cni_hostport";
constexpr const char* kHostPorts = "hostports";
constexpr const char* kHostIpHostPorts = "hostip_hostports";
constexpr const char* kMasq = "masquerading";

const char* Family(bool v6) { return v6 ? "ip6" : "ip"; }

std::string DnatTarget(const net::IpAddress& ip, int port) {
  return ip.is_v4() ? absl::StrCat(ip.ToString(), ":", port) : absl::StrCat("[", ip.ToString(), "]:", port);
}

// The rules of one family's table that belong to `id`.
absl::StatusOr<std::vector<fw::NftRule>> RulesOf(bool v6, const std::string& id) {
  absl::StatusOr<std::vector<fw::NftRule>> all = fw::Nft::ListRules(Family(v6), kTable);
  if (!all.ok()) return all.status();
  std::vector<fw::NftRule> mine;
  for (const fw::NftRule& r : *all) {
    if (r.comment == id) mine.push_back(r);
  }
  return mine;
}

void AppendFamily(std::string& b, const Config& c, const std::string& id, const net::IpPrefix& addr) {
  bool v6 = !addr.is_v4();
  std::string t = absl::StrCat(Family(v6), " ", kTable);
  const char* ipx = Family(v6);
  std::string conds = absl::StrJoin(v6 ? c.conditions_v6 : c.conditions_v4, " ");
  if (!conds.empty()) conds += " ";
  std::string comment = fw::NftQuote(id);
  absl::StrAppend(&b, "add table ", t, " { comment \"CNI portmap plugin\" ; }\n");
  absl::StrAppend(&b, "add chain ", t, " ", kHostPorts, "\n");
  absl::StrAppend(&b, "add chain ", t, " ", kHostIpHostPorts, "\n");
  absl::StrAppend(&b, "add chain ", t, " prerouting { type nat hook prerouting priority -100 ; }\n");
  absl::StrAppend(&b, "flush chain ", t, " prerouting\n");
  absl::StrAppend(&b, "add rule ", t, " prerouting ", conds, "jump ", kHostIpHostPorts, "\n");
  absl::StrAppend(&b, "add rule ", t, " prerouting ", conds, "jump ", kHostPorts, "\n");
  absl::StrAppend(&b, "add chain ", t, " output { type nat hook output priority -100 ; }\n");
  absl::StrAppend(&b, "flush chain ", t, " output\n");
  absl::StrAppend(&b, "add rule ", t, " output ", conds, "jump ", kHostIpHostPorts, "\n");
  absl::StrAppend(&b, "add rule ", t, " output ", conds, "fib daddr type local jump ", kHostPorts, "\n");
  if (c.snat) {
    absl::StrAppend(&b, "add chain ", t, " ", kMasq, " { type nat hook postrouting priority 100 ; }\n");
  }
  for (const PortMapping& m : MappingsFor(c, addr)) {
    std::string target = DnatTarget(addr.addr(), m.container_port);
    if (m.host_ip.has_value() && !m.host_ip->IsUnspecified()) {
      absl::StrAppend(&b, "add rule ", t, " ", kHostIpHostPorts, " ", ipx, " daddr ", m.host_ip->ToString(), " ",
                      m.protocol, " dport ", m.host_port, " dnat to ", target, " comment ", comment, "\n");
    } else {
      absl::StrAppend(&b, "add rule ", t, " ", kHostPorts, " ", m.protocol, " dport ", m.host_port, " dnat to ",
                      target, " comment ", comment, "\n");
    }
  }
  if (c.snat) {
    std::string ip = addr.addr().ToString();
    // Hairpin (container to its own mapped port) and localhost need the reply
    // to come back through us: masquerade them.
    absl::StrAppend(&b, "add rule ", t, " ", kMasq, " ", ipx, " saddr ", ip, " ", ipx, " daddr ", ip,
                    " masquerade comment ", comment, "\n");
    if (!v6) {
      absl::StrAppend(&b, "add rule ", t, " ", kMasq, " ip saddr 127.0.0.1 ip daddr ", ip,
                      " masquerade comment ", comment, "\n");
    }
  }
}

}  // namespace

std::string ForwardBatch(const Config& c, const std::string& id, const std::vector<net::IpPrefix>& addrs) {
  std::string b;
  for (const net::IpPrefix& a : addrs) AppendFamily(b, c, id, a);
  return b;
}

namespace {
// One attempt; a rule handle deleted concurrently since the listing fails the
// transaction, and the retry lists again.
absl::Status ForwardOnce(const Config& c, const std::string& id, const std::vector<net::IpPrefix>& addrs) {
  absl::StatusOr<fw::Nft> nft = fw::Nft::Open();
  if (!nft.ok()) return nft.status();
  // Stale rules of this container (a repeated ADD) go in the same transaction.
  std::string b;
  for (bool v6 : {false, true}) {
    absl::StatusOr<std::vector<fw::NftRule>> stale = RulesOf(v6, id);
    if (!stale.ok()) return stale.status();
    for (const fw::NftRule& r : *stale) b += fw::NftDeleteRule(r);
  }
  b += ForwardBatch(c, id, addrs);
  return nft->Run(b);
}

absl::Status UnforwardOnce(const std::string& id) {
  std::string b;
  for (bool v6 : {false, true}) {
    absl::StatusOr<std::vector<fw::NftRule>> mine = RulesOf(v6, id);
    if (!mine.ok()) return mine.status();
    for (const fw::NftRule& r : *mine) b += fw::NftDeleteRule(r);
  }
  // Nothing of ours (e.g. the iptables backend made the rules): done without
  // loading libnftables.
  if (b.empty()) return absl::OkStatus();
  absl::StatusOr<fw::Nft> nft = fw::Nft::Open();
  if (!nft.ok()) return nft.status();
  return nft->Run(b);
}
}  // namespace

absl::Status Forward(const Config& c, const std::string& id, const std::vector<net::IpPrefix>& addrs) {
  return Annotate(fw::RetryOnConflict([&] { return ForwardOnce(c, id, addrs); }),
                  "unable to set up nftables rules for port mappings");
}

absl::Status Unforward(const std::string& id) {
  return Annotate(fw::RetryOnConflict([&] { return UnforwardOnce(id); }), "deleting nftables port-mapping rules");
}

absl::Status Check(const Config& c, const std::string& id, const std::vector<net::IpPrefix>& addrs) {
  // Only the families the container has are checked: a missing ip6 table is
  // fine for an IPv4-only container (upstream 1.1.1 got this wrong).
  for (const net::IpPrefix& a : addrs) {
    bool v6 = !a.is_v4();
    absl::StatusOr<std::vector<fw::NftRule>> mine = RulesOf(v6, id);
    if (!mine.ok()) return mine.status();
    size_t dnat = 0, masq = 0;
    for (const fw::NftRule& r : *mine) {
      if (r.chain == kHostPorts || r.chain == kHostIpHostPorts) ++dnat;
      if (r.chain == kMasq) ++masq;
    }
    size_t want_dnat = MappingsFor(c, a).size();
    size_t want_masq = (c.snat && want_dnat > 0) ? (v6 ? 1 : 2) : 0;
    if (dnat < want_dnat || masq < want_masq) {
      return Error(ErrorCode::kInternal, absl::StrCat("portmap: missing ", Family(v6), " ", kTable, " rules for ",
                                                      a.addr().ToString(), " (found ", dnat, " DNAT, ", masq,
                                                      " masquerade)"));
    }
  }
  return absl::OkStatus();
}

absl::Status Gc(const std::vector<std::string>& valid_ids) {
  std::string b;
  for (bool v6 : {false, true}) {
    absl::StatusOr<std::vector<fw::NftRule>> all = fw::Nft::ListRules(Family(v6), kTable);
    if (!all.ok()) return all.status();
    for (const fw::NftRule& r : *all) {
      if (r.comment.empty()) continue;  // the hook chains' jumps
      bool valid = false;
      for (const std::string& v : valid_ids) valid = valid || v == r.comment;
      if (!valid) b += fw::NftDeleteRule(r);
    }
  }
  if (b.empty()) return absl::OkStatus();  // without loading libnftables
  absl::StatusOr<fw::Nft> nft = fw::Nft::Open();
  if (!nft.ok()) return nft.status();
  return Annotate(nft->Run(b), "garbage-collecting nftables port-mapping rules");
}

}  // namespace cni::portmap::nft

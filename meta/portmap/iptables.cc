// iptables backend, chain for chain what upstream's portmap builds (nat table):
//   PREROUTING, OUTPUT: -m addrtype --dst-type LOCAL -j CNI-HOSTPORT-DNAT
//   CNI-HOSTPORT-DNAT:  -m comment -m multiport -p P --destination-ports ... -j CNI-DN-<hash>
//   CNI-DN-<hash>:      hairpin/localhost -> CNI-HOSTPORT-SETMARK, then DNAT
//   POSTROUTING (first): -j CNI-HOSTPORT-MASQ: marked packets are masqueraded
// Each ADD/DEL/GC is one iptables-restore --noflush commit per family, built
// from an iptables-save snapshot; only our chains are touched.
#include <cstdio>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cni/error.h"
#include "cni/fw/iptables.h"
#include "cni/fw/names.h"
#include "portmap.h"

namespace cni::portmap::ipt {
namespace {

constexpr const char* kDnat = "CNI-HOSTPORT-DNAT";
constexpr const char* kSetMark = "CNI-HOSTPORT-SETMARK";
constexpr const char* kMasq = "CNI-HOSTPORT-MASQ";
constexpr size_t kMaxComment = 256;      // iptables' comment limit
constexpr size_t kMultiportMax = 15;     // ports per multiport match

std::string DnatComment(const std::string& network, const std::string& id) {
  std::string c = absl::StrCat("dnat name: \"", network, "\" id: \"", id, "\"");
  if (c.size() > kMaxComment) c.resize(kMaxComment - 3), c += "...";
  return c;
}

std::string MarkDef(int bit) {
  char buf[32];
  unsigned v = 1u << bit;
  std::snprintf(buf, sizeof buf, "%#x/%#x", v, v);
  return buf;
}

bool HasJumpTo(const fw::IptTable& t, absl::string_view chain, absl::string_view target) {
  for (const std::string& line : t.RulesOf(chain)) {
    if (fw::IptJumpTarget(line) == target) return true;
  }
  return false;
}

// Lines that remove a container's chain and every jump into it.
std::string TeardownLines(const fw::IptTable& t, const std::string& chain) {
  std::string b;
  for (const auto& [c, line] : t.rules) {
    if (fw::IptJumpTarget(line) == chain) b += fw::IptDeleteLine(line);
  }
  if (t.HasChain(chain)) absl::StrAppend(&b, "-F ", chain, "\n-X ", chain, "\n");
  return b;
}

}  // namespace

DnatRules BuildDnatRules(const Config& c, const std::string& id, const net::IpPrefix& addr) {
  DnatRules d;
  d.chain = fw::ChainName(c.name, id, "DN-");
  bool v6 = !addr.is_v4();
  std::string comment = DnatComment(c.name, id);
  std::string set_mark = c.external_set_mark_chain.value_or(kSetMark);
  const std::vector<std::string>& conds = v6 ? c.conditions_v6 : c.conditions_v4;

  // Entry rules: multiport, 15 ports each, protocols in sorted order.
  for (const char* proto : {"sctp", "tcp", "udp"}) {
    std::vector<std::string> ports;
    for (const PortMapping& m : c.mappings) {
      if (m.protocol == proto) ports.push_back(absl::StrCat(m.host_port));
    }
    for (size_t i = 0; i < ports.size(); i += kMultiportMax) {
      std::vector<std::string> chunk(ports.begin() + i, ports.begin() + std::min(ports.size(), i + kMultiportMax));
      std::vector<std::string> r = {"-m", "comment", "--comment", comment, "-m", "multiport", "-p", proto,
                                    "--destination-ports", absl::StrJoin(chunk, ",")};
      r.insert(r.end(), conds.begin(), conds.end());
      r.insert(r.end(), {"-j", d.chain});
      d.entries.push_back(std::move(r));
    }
  }

  // Per mapping: mark hairpin, mark localhost (IPv4), DNAT. Marks first.
  std::string to = v6 ? absl::StrCat("[", addr.addr().ToString(), "]:") : absl::StrCat(addr.addr().ToString(), ":");
  for (const PortMapping& m : MappingsFor(c, addr)) {
    std::vector<std::string> base = {"-p", m.protocol, "--dport", absl::StrCat(m.host_port)};
    if (m.host_ip.has_value() && !m.host_ip->IsUnspecified()) base.insert(base.end(), {"-d", m.host_ip->ToString()});
    if (c.snat) {
      std::string src = c.masq_all ? (v6 ? "::/0" : "0.0.0.0/0") : addr.Network().ToString();
      std::vector<std::string> hp = base;
      hp.insert(hp.end(), {"-s", src, "-j", set_mark});
      d.rules.push_back(std::move(hp));
      if (!v6 && !c.masq_all) {
        std::vector<std::string> lo = base;
        lo.insert(lo.end(), {"-s", "127.0.0.1", "-j", set_mark});
        d.rules.push_back(std::move(lo));
      }
    }
    std::vector<std::string> dnat = base;
    dnat.insert(dnat.end(), {"-j", "DNAT", "--to-destination", absl::StrCat(to, m.container_port)});
    d.rules.push_back(std::move(dnat));
  }
  return d;
}

namespace {
absl::Status ForwardOnce(const Config& c, const std::string& id, const net::IpPrefix& addr) {
  bool v6 = !addr.is_v4();
  absl::StatusOr<fw::IptTable> t = fw::IptablesSave(v6, "nat");
  if (!t.ok()) return t.status();
  std::string b;
  // Shared chains: created once with -N, never declared with ":" (which
  // flushes): if a concurrent ADD created one since our snapshot, -N fails
  // and the whole commit is retried from a fresh snapshot.
  if (c.snat && !c.external_set_mark_chain.has_value()) {
    std::string mark = MarkDef(c.mark_masq_bit);
    if (!t->HasChain(kSetMark)) absl::StrAppend(&b, "-N ", kSetMark, "\n");
    if (t->RulesOf(kSetMark).empty()) {
      b += fw::IptLine("-A", kSetMark,
                       {"-m", "comment", "--comment", "CNI portfwd masquerade mark", "-j", "MARK", "--set-xmark", mark});
    }
    if (!t->HasChain(kMasq)) absl::StrAppend(&b, "-N ", kMasq, "\n");
    if (t->RulesOf(kMasq).empty()) {
      b += fw::IptLine("-A", kMasq, {"-m", "mark", "--mark", mark, "-j", "MASQUERADE"});
    }
    // First in POSTROUTING, ahead of ipMasq's chains.
    if (!HasJumpTo(*t, "POSTROUTING", kMasq)) {
      b += fw::IptLine("-I", "POSTROUTING 1",
                       {"-m", "comment", "--comment", "CNI portfwd requiring masquerade", "-j", kMasq});
    }
  }
  if (!t->HasChain(kDnat)) absl::StrAppend(&b, "-N ", kDnat, "\n");
  for (const char* entry : {"PREROUTING", "OUTPUT"}) {
    if (!HasJumpTo(*t, entry, kDnat)) {
      b += fw::IptLine("-A", entry, {"-m", "addrtype", "--dst-type", "LOCAL", "-j", kDnat});
    }
  }
  // This container: drop any earlier version, then rebuild (a chain
  // declaration flushes it, so a leftover chain is reused cleanly).
  DnatRules d = BuildDnatRules(c, id, addr);
  for (const std::string& line : t->RulesOf(kDnat)) {
    if (fw::IptJumpTarget(line) == d.chain) b += fw::IptDeleteLine(line);
  }
  absl::StrAppend(&b, ":", d.chain, " - [0:0]\n");
  for (const auto& r : d.rules) b += fw::IptLine("-A", d.chain, r);
  // Prepended: the most recent container using a host port wins.
  for (const auto& r : d.entries) b += fw::IptLine("-I", absl::StrCat(kDnat, " 1"), r);
  return fw::IptablesRestore(v6, "nat", b);
}
}  // namespace

absl::Status Forward(const Config& c, const std::string& id, const net::IpPrefix& addr) {
  return Annotate(fw::RetryOnConflict([&] { return ForwardOnce(c, id, addr); }),
                  "unable to set up iptables port mappings");
}

absl::Status Unforward(const std::string& network, const std::string& id, bool probe_first) {
  // The two families are independent commits: done side by side.
  absl::Status st[2];
  auto one = [&](bool v6) {
    if (!fw::IptablesAvailable(v6)) return;
    // With iptables-nft the probe costs no program run: always ask first.
    if (probe_first || fw::IptablesIsNft(v6)) {
      // No DN- chain: nothing of this container's (upstream's old SN- chain
      // always came with a DN- chain). A failed probe falls through to the
      // full read.
      absl::StatusOr<bool> has = fw::IptablesHasChain(v6, "nat", fw::ChainName(network, id, "DN-"));
      if (has.ok() && !*has) return;
    }
    st[v6] = fw::RetryOnConflict([&]() -> absl::Status {
      absl::StatusOr<fw::IptTable> t = fw::IptablesSave(v6, "nat");
      if (!t.ok()) return t.status();
      // Also the SNAT chain older upstream versions made.
      std::string b = TeardownLines(*t, fw::ChainName(network, id, "DN-")) +
                      TeardownLines(*t, fw::ChainName(network, id, "SN-"));
      return b.empty() ? absl::OkStatus() : fw::IptablesRestore(v6, "nat", b);
    });
  };
  std::thread v6_thread(one, true);
  one(false);
  v6_thread.join();
  std::vector<std::string> errors;
  for (const absl::Status& s : st) {
    if (!s.ok()) errors.emplace_back(s.message());
  }
  if (errors.empty()) return absl::OkStatus();
  return Error(ErrorCode::kInternal, absl::StrCat("removing iptables port mappings: ", absl::StrJoin(errors, "; ")));
}

absl::Status Check(const Config& c, const std::string& id, const net::IpPrefix& addr) {
  bool v6 = !addr.is_v4();
  absl::StatusOr<fw::IptTable> t = fw::IptablesSave(v6, "nat");
  if (!t.ok()) return t.status();
  DnatRules d = BuildDnatRules(c, id, addr);
  if (d.rules.empty()) return absl::OkStatus();
  auto missing = [&](absl::string_view what) {
    return Error(ErrorCode::kInternal, absl::StrCat("portmap: ", what, " missing for ", addr.addr().ToString()));
  };
  if (!t->HasChain(d.chain)) return missing(absl::StrCat("chain ", d.chain));
  if (t->RulesOf(d.chain).size() < d.rules.size()) return missing(absl::StrCat("rules in ", d.chain));
  if (!HasJumpTo(*t, kDnat, d.chain)) return missing(absl::StrCat("jump from ", kDnat, " to ", d.chain));
  if (!HasJumpTo(*t, "PREROUTING", kDnat) || !HasJumpTo(*t, "OUTPUT", kDnat)) {
    return missing(absl::StrCat("jumps to ", kDnat));
  }
  return absl::OkStatus();
}

absl::Status Gc(const std::string& network, const std::vector<std::string>& valid_ids) {
  // As iptables-save prints it: the comment's quotes are backslash-escaped.
  std::string prefix = absl::StrCat("dnat name: \\\"", network, "\\\" id: \\\"");
  std::vector<std::string> errors;
  for (bool v6 : {false, true}) {
    if (!fw::IptablesAvailable(v6)) continue;
    absl::StatusOr<fw::IptTable> t = fw::IptablesSave(v6, "nat");
    if (!t.ok()) {
      errors.emplace_back(t.status().message());
      continue;
    }
    // The entry rules' comments name the network and the container: the
    // chains of this network's unlisted containers go.
    std::vector<std::string> doomed;
    for (const std::string& line : t->RulesOf(kDnat)) {
      size_t at = line.find(prefix);
      if (at == std::string::npos) continue;
      size_t start = at + prefix.size();
      size_t end = line.find("\\\"", start);
      if (end == std::string::npos) continue;
      std::string id = line.substr(start, end - start);
      bool valid = false;
      for (const std::string& v : valid_ids) valid = valid || v == id;
      std::string chain = fw::IptJumpTarget(line);
      if (!valid && chain == fw::ChainName(network, id, "DN-")) {
        bool seen = false;
        for (const std::string& d : doomed) seen = seen || d == chain;
        if (!seen) doomed.push_back(chain);
      }
    }
    std::string b;
    for (const std::string& chain : doomed) b += TeardownLines(*t, chain);
    if (b.empty()) continue;
    if (absl::Status st = fw::IptablesRestore(v6, "nat", b); !st.ok()) errors.emplace_back(st.message());
  }
  if (errors.empty()) return absl::OkStatus();
  return Error(ErrorCode::kInternal, absl::StrCat("garbage-collecting iptables port mappings: ",
                                                  absl::StrJoin(errors, "; ")));
}

}  // namespace cni::portmap::ipt

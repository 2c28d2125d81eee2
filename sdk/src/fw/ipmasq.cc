#include "cni/fw/ipmasq.h"

#include "absl/strings/match.h"
#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cni/error.h"
#include "cni/status_macros.h"
#include "cni/fw/iptables.h"
#include "cni/fw/names.h"
#include "cni/fw/nft.h"
#include "cni/fw/nft_batch.h"
#include "cni/hash.h"

namespace cni::fw {
namespace {

constexpr NftFamily kFamily = NftFamily::kInet;
constexpr const char* kTable = "cni_plugins_masquerade";
constexpr const char* kChain = "masq_checks";
constexpr size_t kNftCommentMax = 128;  // knftables.CommentLengthMax

std::string StripQuotes(absl::string_view s) {
  std::string out;
  for (char c : s) {
    if (c != '"' && c != '\\' && static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out;
}

std::string NetworkHash(absl::string_view network) { return HashWithPrefix(16, "", network); }

std::string InstanceHash(const MasqTarget& t) {
  return absl::StrCat(NetworkHash(t.network), "-", HashWithPrefix(16, "", absl::StrCat(t.ifname, ":", t.container_id)));
}

// --- iptables -------------------------------------------------------------

// One family: (re)declare our chain (a declaration flushes it), drop stale
// POSTROUTING jumps to it, add the rules. One restore = one commit.
absl::Status SetupIptables(bool v6, const std::vector<net::IpPrefix>& addrs, const MasqTarget& t) {
  std::string chain = ChainName(t.network, t.container_id);
  std::string comment = Comment(t.network, t.container_id);
  absl::StatusOr<IptTable> nat = IptablesSave(v6, "nat");
  if (!nat.ok()) return nat.status();
  std::string body = absl::StrCat(":", chain, " - [0:0]\n");
  for (const std::string& line : nat->RulesOf("POSTROUTING")) {
    if (IptJumpTarget(line) == chain) body += IptDeleteLine(line);
  }
  const char* multicast = v6 ? "ff00::/8" : "224.0.0.0/4";
  for (const net::IpPrefix& a : addrs) {
    body += IptLine("-A", chain, {"-d", a.Network().ToString(), "-j", "ACCEPT", "-m", "comment", "--comment", comment});
  }
  // One MASQUERADE after every ACCEPT (upstream's AppendUnique keeps one).
  body += IptLine("-A", chain, {"!", "-d", multicast, "-j", "MASQUERADE", "-m", "comment", "--comment", comment});
  for (const net::IpPrefix& a : addrs) {
    body += IptLine("-A", "POSTROUTING", {"-s", a.addr().ToString(), "-j", chain, "-m", "comment", "--comment", comment});
  }
  return IptablesRestore(v6, "nat", body);
}

absl::Status TeardownIptables(bool v6, const MasqTarget& t) {
  if (!IptablesAvailable(v6)) return absl::OkStatus();
  std::string chain = ChainName(t.network, t.container_id);
  absl::StatusOr<IptTable> nat = IptablesSave(v6, "nat");
  if (!nat.ok()) return nat.status();
  std::string body;
  // Any POSTROUTING rule jumping to the chain, whatever its -s form (upstream
  // once used the prefix, now the address).
  for (const std::string& line : nat->RulesOf("POSTROUTING")) {
    if (IptJumpTarget(line) == chain) body += IptDeleteLine(line);
  }
  if (nat->HasChain(chain)) absl::StrAppend(&body, "-F ", chain, "\n-X ", chain, "\n");
  if (body.empty()) return absl::OkStatus();
  return IptablesRestore(v6, "nat", body);
}

// --- nftables -------------------------------------------------------------

absl::Status SetupNft(net::NetlinkSocket& nf, const std::vector<net::IpPrefix>& addrs, const MasqTarget& t) {
  absl::StatusOr<std::vector<NftRule>> rules = nft::ListRules(nf, kFamily, kTable);
  if (!rules.ok()) return rules.status();
  std::string prefix = InstanceHash(t);
  NftBatch b;
  b.AddTable(kFamily, kTable, "Masquerading for plugins from github.com/containernetworking/plugins");
  b.AddChain(kFamily, kTable, kChain, std::nullopt,
             "Masquerade traffic from certain IPs to any (non-multicast) IP outside their subnet");
  b.AddChain(kFamily, kTable, "postrouting", NftHook{"nat", "postrouting", 100});
  b.FlushChain(kFamily, kTable, "postrouting");
  b.AddRule(kFamily, kTable, "postrouting", NftRuleSpec().DestAddress(*net::IpPrefix::Parse("224.0.0.0/4")).Return());
  b.AddRule(kFamily, kTable, "postrouting", NftRuleSpec().DestAddress(*net::IpPrefix::Parse("ff00::/8")).Return());
  b.AddRule(kFamily, kTable, "postrouting", NftRuleSpec().Goto(kChain));
  for (const NftRule& r : *rules) {
    if (r.chain == kChain && absl::StartsWith(r.comment, prefix)) b.DeleteRule(r);
  }
  std::string comment = MasqNftComment(t.network, t.ifname, t.container_id);
  for (const net::IpPrefix& a : addrs) {
    b.AddRule(kFamily, kTable, kChain,
              NftRuleSpec()
                  .SourceAddress(net::IpPrefix::Host(a.addr()))
                  .DestAddress(a.Network(), /*equal=*/false)
                  .Masquerade()
                  .Comment(comment));
  }
  return b.Commit(nf);
}

absl::Status DeleteNftRules(net::NetlinkSocket& nf, const std::function<bool(const NftRule&)>& doomed) {
  absl::StatusOr<std::vector<NftRule>> rules = nft::ListRules(nf, kFamily, kTable);
  if (!rules.ok()) return rules.status();
  NftBatch b;
  for (const NftRule& r : *rules) {
    if (r.chain == kChain && doomed(r)) b.DeleteRule(r);
  }
  return b.Commit(nf);  // nothing of ours: a no-op
}

}  // namespace

std::string MasqNftComment(absl::string_view network, absl::string_view ifname, absl::string_view id) {
  MasqTarget t{std::string(network), std::string(ifname), std::string(id)};
  std::string c = absl::StrCat(InstanceHash(t), ", net: ", StripQuotes(network), ", if: ", StripQuotes(ifname),
                               ", id: ", StripQuotes(id));
  if (c.size() > kNftCommentMax) c.resize(kNftCommentMax);
  return c;
}

absl::Status SetupIpMasq(Backend backend, const std::vector<net::IpPrefix>& addrs, const MasqTarget& t) {
  if (addrs.empty() || backend == Backend::kIptables) return SetupIpMasq(nullptr, backend, addrs, t);
  ASSIGN_OR_RETURN(net::NetlinkSocket nf, nft::OpenSocket(), "setting up ipMasq (nftables)");
  return SetupIpMasq(&nf, backend, addrs, t);
}

absl::Status SetupIpMasq(net::NetlinkSocket* nf, Backend backend, const std::vector<net::IpPrefix>& addrs,
                         const MasqTarget& t) {
  if (addrs.empty()) return absl::OkStatus();
  if (backend == Backend::kNftables) return Annotate(SetupNft(*nf, addrs, t), "setting up ipMasq (nftables)");
  for (bool v6 : {false, true}) {
    std::vector<net::IpPrefix> fam;
    for (const net::IpPrefix& a : addrs) {
      if (a.is_v4() != v6) fam.push_back(a);
    }
    if (fam.empty()) continue;
    absl::Status st = RetryOnConflict([&] { return SetupIptables(v6, fam, t); });
    if (!st.ok()) return Annotate(st, "setting up ipMasq (iptables)");
  }
  return absl::OkStatus();
}

absl::Status TeardownIpMasq(const MasqTarget& t) {
  absl::StatusOr<net::NetlinkSocket> nf = nft::OpenSocket();
  if (!nf.ok()) return Annotate(nf.status(), "tearing down ipMasq");
  return TeardownIpMasq(*nf, t);
}

absl::Status TeardownIpMasq(net::NetlinkSocket& nf, const MasqTarget& t) {
  std::vector<std::string> errors;
  for (bool v6 : {false, true}) {
    absl::Status st = RetryOnConflict([&] { return TeardownIptables(v6, t); });
    if (!st.ok()) errors.emplace_back(st.message());
  }
  std::string prefix = InstanceHash(t);
  absl::Status st = DeleteNftRules(nf, [&](const NftRule& r) { return absl::StartsWith(r.comment, prefix); });
  if (!st.ok()) errors.emplace_back(st.message());
  if (errors.empty()) return absl::OkStatus();
  return Error(ErrorCode::kInternal, absl::StrCat("tearing down ipMasq: ", absl::StrJoin(errors, "; ")));
}

absl::Status GcIpMasq(absl::string_view network, const std::vector<Attachment>& valid) {
  ASSIGN_OR_RETURN(net::NetlinkSocket nf, nft::OpenSocket(), "garbage-collecting ipMasq (nftables)");
  return GcIpMasq(nf, network, valid);
}

absl::Status GcIpMasq(net::NetlinkSocket& nf, absl::string_view network, const std::vector<Attachment>& valid) {
  std::string net_prefix = NetworkHash(network);
  std::vector<std::string> keep;
  for (const Attachment& a : valid) keep.push_back(MasqNftComment(network, a.ifname, a.container_id));
  absl::Status st = DeleteNftRules(nf, [&](const NftRule& r) {
    if (!absl::StartsWith(r.comment, net_prefix)) return false;
    for (const std::string& k : keep) {
      if (k == r.comment) return false;
    }
    return true;
  });
  return Annotate(st, "garbage-collecting ipMasq (nftables)");
}

}  // namespace cni::fw

#include "snapshot.h"

#include <filesystem>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "cni/base/exec.h"
#include "cni/base/status_macros.h"
#include "cni/net/addr.h"
#include "cni/net/link.h"
#include "cni/net/netlink.h"
#include "cni/net/netns.h"
#include "cni/net/route.h"
#include "cni/net/rule.h"

namespace conformance {
namespace {

using cni::net::IpAddress;
using cni::net::IpPrefix;

// fe80::/10 and ff00::/8: the kernel's own, per link.
bool KernelsOwnV6(const IpPrefix& p) {
  if (p.is_v4()) return false;
  const uint8_t* b = p.addr().data();
  return (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) || b[0] == 0xff;
}

// 127.0.0.0/8 and ::1 on lo: the kernel adds them (and their local routes)
// when lo comes up and keeps them when it goes down again.
bool KernelsOwnLoopback(const IpPrefix& p) {
  if (p.is_v4()) return p.addr().data()[0] == 127;
  return p.addr() == IpAddress::Parse("::1").value();
}

}  // namespace

absl::StatusOr<State> NetState(const std::string& netns_path, absl::string_view label) {
  std::optional<cni::net::NetlinkSocket> sock;
  if (netns_path.empty()) {
    ASSIGN_OR_RETURN(auto s, cni::net::NetlinkSocket::Open());
    sock.emplace(std::move(s));
  } else {
    ASSIGN_OR_RETURN(auto ns, cni::net::Netns::Open(netns_path));
    ASSIGN_OR_RETURN(auto s, cni::net::NetlinkSocket::OpenIn(ns));
    sock.emplace(std::move(s));
  }
  State state;
  ASSIGN_OR_RETURN(auto links, cni::net::ListLinks(*sock));
  std::map<int, std::string> names;
  for (const cni::net::LinkInfo& l : links) names[l.index] = l.name;
  auto name_of = [&](int index) {
    auto it = names.find(index);
    return it == names.end() ? absl::StrCat("#", index) : it->second;
  };
  // In a container, what a chained plugin changes (tuning: MTU, MAC,
  // promiscuous mode) must be put back by its DEL. Not on the host: a
  // bridge's MTU and MAC follow its ports.
  const bool details = label == "ctr";
  for (const cni::net::LinkInfo& l : links) {
    std::string line = absl::StrCat(label, " link ", l.name, l.kind.empty() ? "" : " ", l.kind, l.up() ? " up" : " down",
                                    l.master != 0 ? " master " + name_of(l.master) : "");
    if (details) {
      absl::StrAppend(&line, " mtu ", l.mtu, " mac ", l.mac.ToString(), l.promisc() ? " promisc" : "",
                      l.allmulti() ? " allmulti" : "");
    }
    state.insert(std::move(line));
  }
  ASSIGN_OR_RETURN(auto addrs, cni::net::ListAddresses(*sock));
  for (const cni::net::AddressInfo& a : addrs) {
    if (KernelsOwnV6(a.prefix) || (name_of(a.ifindex) == "lo" && KernelsOwnLoopback(a.prefix))) continue;
    state.insert(absl::StrCat(label, " addr ", name_of(a.ifindex), " ", a.prefix.ToString()));
  }
  ASSIGN_OR_RETURN(auto routes, cni::net::ListRoutes(*sock, {.table = std::nullopt}));
  for (const cni::net::RouteSpec& r : routes) {
    // The local table mirrors the addresses (tracked above), and its IPv6
    // entries appear only once duplicate address detection is done.
    if (r.table == 255 || KernelsOwnV6(r.dst) || (name_of(r.ifindex) == "lo" && KernelsOwnLoopback(r.dst))) continue;
    std::string line = absl::StrCat(label, " route table ", r.table, " ", r.dst.ToString());
    auto path = [&](const std::optional<IpAddress>& gw, int ifindex) {
      if (gw) absl::StrAppend(&line, " via ", gw->ToString());
      if (ifindex != 0) absl::StrAppend(&line, " dev ", name_of(ifindex));
    };
    path(r.gw, r.ifindex);
    for (const cni::net::Nexthop& nh : r.multipath) path(nh.gw, nh.ifindex);
    if (r.priority) absl::StrAppend(&line, " metric ", *r.priority);
    state.insert(std::move(line));
  }
  ASSIGN_OR_RETURN(auto rules, cni::net::ListRules(*sock));
  for (const cni::net::RuleSpec& r : rules) state.insert(absl::StrCat(label, " rule ", r.ToString()));
  return state;
}

absl::StatusOr<State> NetfilterState() {
  State state;
  std::string nft = cni::FindSystemProgram("nft");
  if (nft.empty()) return state;
  const std::vector<std::string> argv = {nft, "-s", "list", "ruleset"};
  const std::vector<std::string> env = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin"};
  cni::CommandOptions options;
  options.timeout = std::chrono::seconds(30);
  ASSIGN_OR_RETURN(cni::CommandResult run, cni::RunCommand(argv, env, "", options));
  if (run.exit_code != 0) return absl::InternalError(absl::StrCat("nft list ruleset: ", run.err));
  std::string table, chain;
  for (absl::string_view raw : absl::StrSplit(run.out, '\n')) {
    absl::string_view line = absl::StripAsciiWhitespace(raw);
    if (line.empty() || line == "}") continue;
    if (absl::ConsumePrefix(&line, "table ")) {
      table = std::string(absl::StripSuffix(line, " {"));
      chain.clear();
      state.insert(absl::StrCat("host nft table ", table));
    } else if (absl::ConsumePrefix(&line, "chain ")) {
      chain = std::string(absl::StripSuffix(line, " {"));
      state.insert(absl::StrCat("host nft table ", table, " / chain ", chain));
    } else {
      state.insert(absl::StrCat("host nft table ", table, chain.empty() ? "" : " / chain ", chain, ": ", line));
    }
  }
  return state;
}

State FileState(const std::vector<std::string>& dirs) {
  State state;
  for (const std::string& dir : dirs) {
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      if (!it->is_directory(ec)) state.insert(absl::StrCat("file ", it->path().string()));
    }
  }
  return state;
}

std::vector<std::string> Differences(const State& before, const State& after, size_t limit) {
  std::vector<std::string> out;
  size_t more = 0;
  auto add = [&](std::string line) {
    if (out.size() < limit) {
      out.push_back(std::move(line));
    } else {
      ++more;
    }
  };
  for (const std::string& line : after) {
    if (before.count(line) == 0) add("left: " + line);
  }
  for (const std::string& line : before) {
    if (after.count(line) == 0) add("gone: " + line);
  }
  if (more != 0) out.push_back(absl::StrCat("... and ", more, " more"));
  return out;
}

}  // namespace conformance

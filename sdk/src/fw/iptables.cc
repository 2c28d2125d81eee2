#include "cni/fw/iptables.h"

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cni/base/error.h"
#include "cni/base/exec.h"
#include "cni/fw/nft.h"

namespace cni::fw {
namespace {

// The binary's path (RunCommand does not search PATH), "" when absent.
std::string FindTool(absl::string_view name) { return FindSystemProgram(name); }

// A missing binary is a failed precondition, so RetryOnConflict gives up at once.
absl::Status ToolMissing(absl::string_view name) {
  return WithCode(absl::FailedPreconditionError(absl::StrCat(name, " not found")), ErrorCode::kInternal);
}

const char* Prog(bool ipv6, bool save) {
  if (save) return ipv6 ? "ip6tables-save" : "iptables-save";
  return ipv6 ? "ip6tables-restore" : "iptables-restore";
}

}  // namespace

bool IptTable::HasChain(absl::string_view chain) const {
  for (const std::string& c : chains) {
    if (c == chain) return true;
  }
  return false;
}

std::vector<std::string> IptTable::RulesOf(absl::string_view chain) const {
  std::vector<std::string> out;
  for (const auto& [c, line] : rules) {
    if (c == chain) out.push_back(line);
  }
  return out;
}

bool IptTable::HasJump(absl::string_view chain, absl::string_view target) const {
  for (const auto& [c, line] : rules) {
    if (c == chain && IptJumpTarget(line) == target) return true;
  }
  return false;
}

IptTable ParseIptablesSave(absl::string_view text, absl::string_view table) {
  IptTable t;
  bool in_table = false;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (line.empty() || line[0] == '#') continue;
    if (line[0] == '*') {
      in_table = line.substr(1) == table;
      continue;
    }
    if (!in_table) continue;
    if (line[0] == ':') {
      std::vector<absl::string_view> parts = absl::StrSplit(line.substr(1), ' ');
      t.chains.emplace_back(parts[0]);
    } else if (absl::StartsWith(line, "-A ")) {
      std::vector<absl::string_view> parts = absl::StrSplit(line, absl::MaxSplits(' ', 2));
      if (parts.size() >= 2) t.rules.emplace_back(std::string(parts[1]), std::string(line));
    }
  }
  return t;
}

bool IptablesAvailable(bool ipv6) {
  return !FindTool(Prog(ipv6, true)).empty() && !FindTool(Prog(ipv6, false)).empty();
}

// The links are followed one readlink each (Debian: iptables ->
// /etc/alternatives/iptables -> iptables-nft -> xtables-nft-multi): realpath()
// would also ask about every directory on the way, 11 system calls instead of
// 4 on every portmap and firewall call.
bool IsIptablesNftProgram(const std::string& tool) {
  std::string path = tool;
  for (int links = 0;; ++links) {
    if (links > 40) return false;  // a loop, as realpath's ELOOP
    char target[PATH_MAX];
    ssize_t n = readlink(path.c_str(), target, sizeof(target));
    if (n < 0 && errno == EINVAL) break;  // not a link: the program itself
    if (n <= 0 || static_cast<size_t>(n) >= sizeof(target)) return false;
    absl::string_view next(target, static_cast<size_t>(n));
    // A relative target is relative to the link's directory.
    path = next[0] == '/' ? std::string(next) : absl::StrCat(path.substr(0, path.rfind('/') + 1), next);
  }
  absl::string_view name(path);
  name = name.substr(name.rfind('/') + 1);
  return absl::StartsWith(name, "xtables-nft") || absl::EndsWith(name, "tables-nft");
}


bool IptablesIsNft(bool ipv6) {
  std::string tool = FindTool(ipv6 ? "ip6tables" : "iptables");
  return !tool.empty() && IsIptablesNftProgram(tool);
}

absl::StatusOr<bool> IptablesHasChain(bool ipv6, absl::string_view table, absl::string_view chain) {
  absl::StatusOr<net::NetlinkSocket> nf = nft::OpenSocket();
  return IptablesHasChain(nf.ok() ? &*nf : nullptr, ipv6, table, chain);
}

absl::StatusOr<bool> IptablesHasChain(net::NetlinkSocket* nf, bool ipv6, absl::string_view table,
                                      absl::string_view chain) {
  const char* prog = ipv6 ? "ip6tables" : "iptables";
  std::string tool = FindTool(prog);
  if (tool.empty()) return ToolMissing(prog);
  if (nf != nullptr && IsIptablesNftProgram(tool)) {
    absl::StatusOr<bool> has = nft::HasChain(*nf, IpFamily(ipv6), table, chain);
    if (has.ok()) return *has;
    // A failed lookup: ask iptables itself.
  }
  absl::StatusOr<CommandResult> r =
      RunCommand({tool, "--wait", "-t", std::string(table), "-S", std::string(chain)},
                 {"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}, "",
                 CommandOptions{.capture_stderr = true, .timeout = std::chrono::seconds(60)});
  if (!r.ok()) return Annotate(r.status(), absl::StrCat("running ", tool));
  if (r->exit_code == 0) return true;
  if (r->exit_code == 1) return false;
  return Error(ErrorCode::kInternal, absl::StrCat(tool, " -t ", table, " -S ", chain, " failed: ", r->err));
}

absl::StatusOr<IptTable> IptablesSave(bool ipv6, absl::string_view table) {
  std::string tool = FindTool(Prog(ipv6, true));
  if (tool.empty()) return ToolMissing(Prog(ipv6, true));
  absl::StatusOr<CommandResult> r =
      RunCommand({tool, "-t", std::string(table)}, {"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}, "",
                 CommandOptions{.capture_stderr = true, .timeout = std::chrono::seconds(60)});
  if (!r.ok()) return Annotate(r.status(), absl::StrCat("running ", tool));
  if (r->exit_code != 0) {
    return Error(ErrorCode::kInternal, absl::StrCat(tool, " -t ", table, " failed: ", r->err));
  }
  return ParseIptablesSave(r->out, table);
}

absl::Status IptablesRestore(bool ipv6, absl::string_view table, absl::string_view body) {
  std::string tool = FindTool(Prog(ipv6, false));
  if (tool.empty()) return ToolMissing(Prog(ipv6, false));
  std::string input = absl::StrCat("*", table, "\n", body, "COMMIT\n");
  absl::StatusOr<CommandResult> r =
      RunCommand({tool, "--noflush", "--wait"}, {"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}, input,
                 CommandOptions{.capture_stderr = true, .timeout = std::chrono::seconds(120)});
  if (!r.ok()) return Annotate(r.status(), absl::StrCat("running ", tool));
  if (r->exit_code != 0) {
    return Error(ErrorCode::kInternal, absl::StrCat(tool, " failed: ", r->err, "input:\n", input));
  }
  return absl::OkStatus();
}

absl::Status RetryOnConflict(const std::function<absl::Status()>& attempt) {
  absl::Status st;
  for (int i = 0; i < 5; ++i) {
    st = attempt();
    // A missing tool or library does not appear by waiting.
    if (st.ok() || absl::IsFailedPrecondition(st)) return st;
    usleep(20000 * (i + 1));
  }
  return st;
}

std::string IptDeleteLine(absl::string_view saved_append_line) {
  absl::string_view rest = saved_append_line;
  if (absl::StartsWith(rest, "-A ")) rest.remove_prefix(3);
  return absl::StrCat("-D ", rest, "\n");
}

std::string IptJumpTarget(absl::string_view saved_line) {
  std::vector<absl::string_view> words = absl::StrSplit(saved_line, ' ', absl::SkipEmpty());
  // The last one: a quoted comment before it may contain " -j ".
  std::string target;
  for (size_t i = 0; i + 1 < words.size(); ++i) {
    if (words[i] == "-j" || words[i] == "-g") target = std::string(words[i + 1]);
  }
  return target;
}

}  // namespace cni::fw

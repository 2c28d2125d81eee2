#include "tuning.h"

#include <set>
#include <utility>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "backup.h"
#include "cni/base/error.h"
#include "cni/base/fs.h"
#include "cni/base/status_macros.h"
#include "cni/net/link.h"
#include "cni/net/netlink.h"
#include "cni/net/netns.h"
#include "cni/net/sysctl.h"

namespace cni::tuning {
namespace {

absl::Status NotChained() {
  return Error(ErrorCode::kInvalidNetworkConfig,
               "tuning: must be called as a chained plugin (prevResult is required)");
}

// Puts back what `b` saved, in upstream's order; keeps going past failures and
// reports them all.
absl::Status RestoreLink(net::NetlinkSocket& sock, const net::LinkInfo& link, const Backup& b) {
  std::vector<std::string> errors;
  auto note = [&errors](const absl::Status& st) {
    if (!st.ok()) errors.emplace_back(st.message());
  };
  if (b.mtu != 0) note(net::SetLinkMtu(sock, link, b.mtu));
  if (!b.mac.empty()) {
    absl::StatusOr<net::MacAddress> mac = net::MacAddress::Parse(b.mac);
    note(mac.ok() ? net::SetLinkMac(sock, link, *mac) : mac.status());
  }
  if (b.promisc) note(net::SetLinkPromiscuous(sock, link, *b.promisc));
  if (b.allmulti) note(net::SetLinkAllmulti(sock, link, *b.allmulti));
  if (b.txqlen) note(net::SetLinkTxQLen(sock, link, *b.txqlen));
  if (errors.empty()) return absl::OkStatus();
  return Error(ErrorCode::kInternal,
               absl::StrCat("tuning: restoring \"", link.name, "\": ", absl::StrJoin(errors, "; ")));
}

Backup BackupOf(const Config& c, const net::LinkInfo& link) {
  Backup b;
  if (c.mac) b.mac = link.mac.ToString();
  if (c.promisc) b.promisc = link.promisc();
  if (c.mtu != 0) b.mtu = link.mtu;
  if (c.allmulti) b.allmulti = link.allmulti();
  if (c.txqlen) b.txqlen = link.txqlen;
  b.network = c.name;
  return b;
}

// The body of ADD, on a thread inside the container namespace. A failure
// undoes what was done: sysctls get their old values, the link its backup.
absl::Status ApplyHere(const Config& c, const CmdArgs& args, const std::string& backup_path) {
  std::vector<std::pair<std::string, std::string>> old_sysctls;
  std::optional<net::NetlinkSocket> sock;
  std::optional<net::LinkInfo> link;
  std::optional<Backup> backup;
  absl::Cleanup undo = [&] {
    for (auto it = old_sysctls.rbegin(); it != old_sysctls.rend(); ++it) {
      (void)net::WriteSysctlHere(it->first, it->second);
    }
    if (backup) {
      (void)RestoreLink(*sock, *link, *backup);
      (void)RemoveBackup(backup_path);
    }
  };

  if (c.ChangesLink()) {
    ASSIGN_OR_RETURN(sock, net::NetlinkSocket::Open());
    ASSIGN_OR_RETURN(link, net::LinkByName(*sock, args.ifname), "tuning");
    // The originals go to disk before the first change (sysctls included).
    Backup b = BackupOf(c, *link);
    RETURN_IF_ERROR(WriteBackup(backup_path, b));
    backup = b;
  }

  for (const Sysctl& s : c.sysctls) {
    ASSIGN_OR_RETURN(std::string old, net::ReadSysctlHere(s.path), "tuning");
    RETURN_IF_ERROR(net::WriteSysctlHere(s.path, s.value), "tuning");
    old_sysctls.emplace_back(s.path, old);
  }

  if (link) {
    absl::Status st;
    if (c.mac) st.Update(net::SetLinkMac(*sock, *link, *c.mac));
    if (st.ok() && c.promisc) st.Update(net::SetLinkPromiscuous(*sock, *link, true));
    if (st.ok() && c.mtu != 0) st.Update(net::SetLinkMtu(*sock, *link, c.mtu));
    if (st.ok() && c.allmulti) st.Update(net::SetLinkAllmulti(*sock, *link, *c.allmulti));
    if (st.ok() && c.txqlen) st.Update(net::SetLinkTxQLen(*sock, *link, *c.txqlen));
    RETURN_IF_ERROR(st, "tuning");
  }
  std::move(undo).Cancel();
  return absl::OkStatus();
}

// The checks of CHECK, on a thread inside the container namespace.
absl::Status VerifyHere(const Config& c, const CmdArgs& args) {
  for (const Sysctl& s : c.sysctls) {
    ASSIGN_OR_RETURN(std::string cur, net::ReadSysctlHere(s.path), "tuning");
    if (!SameSysctlValue(s.value, cur)) {
      return Error(ErrorCode::kInternal,
                   absl::StrCat("tuning: configured value of /proc/sys/", s.path, " is \"", s.value,
                                "\", current value is \"", cur, "\""));
    }
  }
  ASSIGN_OR_RETURN(net::NetlinkSocket sock, net::NetlinkSocket::Open());
  ASSIGN_OR_RETURN(net::LinkInfo link, net::LinkByName(sock, args.ifname),
                   "tuning: container link");
  auto mismatch = [&](absl::string_view what, auto want, auto have) {
    return Error(ErrorCode::kInternal, absl::StrCat("tuning: configured ", what, " of \"", args.ifname,
                                                    "\" is ", want, ", current value is ", have));
  };
  if (c.mac && *c.mac != link.mac) return mismatch("MAC", c.mac->ToString(), link.mac.ToString());
  // As upstream: promisc false means "must be off", not "don't care".
  if (c.promisc != link.promisc()) {
    return mismatch("promiscuous mode", c.promisc ? "on" : "off", link.promisc() ? "on" : "off");
  }
  if (c.mtu != 0 && c.mtu != link.mtu) return mismatch("MTU", c.mtu, link.mtu);
  if (c.allmulti && *c.allmulti != link.allmulti()) {
    return mismatch("all-multicast mode", *c.allmulti ? "on" : "off", link.allmulti() ? "on" : "off");
  }
  if (c.txqlen && *c.txqlen != link.txqlen) {
    return mismatch("transmit queue length", *c.txqlen, link.txqlen);
  }
  return absl::OkStatus();
}

// ADD and CHECK refuse an unchained call: the prevResult they pass on.
absl::StatusOr<Result> PrevResult(const Config& c) {
  RETURN_IF_ERROR(c.prev_result);
  if (!*c.prev_result) return NotChained();
  return **c.prev_result;
}

// DEL's restore, on a thread inside the container namespace. No interface:
// nothing left to restore.
absl::Status RestoreHere(const CmdArgs& args, const Backup& backup) {
  ASSIGN_OR_RETURN(net::NetlinkSocket sock, net::NetlinkSocket::Open());
  absl::StatusOr<net::LinkInfo> link = net::LinkByName(sock, args.ifname);
  if (absl::IsNotFound(link.status())) return absl::OkStatus();
  RETURN_IF_ERROR(link);
  return RestoreLink(sock, *link, backup);
}

}  // namespace

std::string AllowlistPath(const CmdArgs& args) {
  std::string prefix = absl::StrCat(kAllowlistEnv, "=");
  for (const std::string& kv : args.env) {
    if (absl::StartsWith(kv, prefix) && kv.size() > prefix.size()) return kv.substr(prefix.size());
  }
  return std::string(kDefaultAllowlist);
}

bool SameSysctlValue(absl::string_view configured, absl::string_view current) {
  std::vector<absl::string_view> a = absl::StrSplit(configured, absl::ByAnyChar(" \t\n"), absl::SkipEmpty());
  std::vector<absl::string_view> b = absl::StrSplit(current, absl::ByAnyChar(" \t\n"), absl::SkipEmpty());
  return a == b;
}

namespace {

absl::StatusOr<Result> Add(const CmdArgs& args, const Config& config) {
  ASSIGN_OR_RETURN(Result result, PrevResult(config));
  RETURN_IF_ERROR(CheckAllowlistFile(config, AllowlistPath(args)));
  ASSIGN_OR_RETURN(net::Netns ns, net::Netns::Open(args.netns));
  std::string backup_path = BackupPath(config.data_dir, args.container_id, args.ifname);
  RETURN_IF_ERROR(ns.Run([&] { return ApplyHere(config, args, backup_path); }));
  if (config.mac) {
    for (Interface& iface : result.interfaces) {
      if (iface.name == args.ifname) iface.mac = config.mac->ToString();
    }
  }
  result.cni_version = args.conf.cni_version;
  return result;
}

// Restores the link from its backup and removes the backup (with any
// temporary file a killed ADD left).
absl::Status Del(const CmdArgs& args, const BackupDir& dir) {
  std::string path = BackupPath(dir.path, args.container_id, args.ifname);
  absl::StatusOr<std::optional<Backup>> backup = ReadBackup(path);
  // A file that is not a backup cannot be restored from; keeping it would
  // only leak it (upstream ignores it too).
  if (CodeOf(backup.status()) == static_cast<int>(ErrorCode::kDecodingFailure)) {
    return RemoveBackup(path);
  }
  RETURN_IF_ERROR(backup);
  // No backup (perhaps only a killed writer's temporary file), no namespace:
  // nothing left to restore, only files to remove.
  if (!*backup) return RemoveBackup(path);
  ASSIGN_OR_RETURN(std::optional<net::Netns> ns, net::OpenNetnsForTeardown(args.netns));
  if (!ns) return RemoveBackup(path);
  // On failure the file stays: a later DEL may succeed.
  RETURN_IF_ERROR(ns->Run([&] { return RestoreHere(args, **backup); }));
  return RemoveBackup(path);
}

absl::Status Check(const CmdArgs& args, const Config& config) {
  RETURN_IF_ERROR(PrevResult(config));
  ASSIGN_OR_RETURN(net::Netns ns, net::Netns::Open(args.netns));
  return ns.Run([&] { return VerifyHere(config, args); });
}

// Removes backups of this network's attachments that are not in the valid list.
absl::Status Gc(const CmdArgs& args, const BackupDir& dir) {
  std::set<std::string> keep;
  for (const Attachment& a : args.conf.valid_attachments) {
    keep.insert(BackupPath(dir.path, a.container_id, a.ifname));
  }
  absl::StatusOr<std::vector<std::string>> names = ListDirectory(dir.path);
  if (!names.ok()) return absl::OkStatus();  // no directory: nothing to collect
  std::vector<std::string> errors;
  for (const std::string& name : *names) {
    std::string path = absl::StrCat(dir.path, "/", name);
    // ReadBackup reads regular files only: anything else is skipped below.
    if (!absl::EndsWith(path, ".json") || keep.count(path)) continue;
    absl::StatusOr<std::optional<Backup>> b = ReadBackup(path);
    // Only files this network wrote: the directory is shared by every network
    // using tuning, and upstream's files do not say whose they are.
    if (!b.ok() || !*b || (*b)->network != args.conf.name) continue;
    if (absl::Status st = RemoveBackup(path); !st.ok()) errors.emplace_back(st.message());
  }
  if (errors.empty()) return absl::OkStatus();
  return Error(ErrorCode::kIoFailure, absl::StrJoin(errors, "; "));
}

// Parsing the configuration is all there is to check.
absl::Status Status(const CmdArgs&, const Config&) { return absl::OkStatus(); }

}  // namespace

PluginFuncs Funcs() {
  // DEL and GC read only the dataDir (see BackupDir).
  return TypedWithTeardown<Config, BackupDir>({.add = Add, .check = Check, .status = Status}, {.del = Del, .gc = Gc});
}

}  // namespace cni::tuning

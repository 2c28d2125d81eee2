#include "cni/plugin/attachment_store.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <set>
#include <tuple>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/fs.h"
#include "cni/base/quoted.h"
#include "cni/base/status_macros.h"

namespace cni {
namespace {

// The file name of an attachment: "<containerID>@<ifname>".
std::string FileName(const Attachment& a) { return absl::StrCat(a.container_id, "@", a.ifname); }

// The attachment a file name stands for; nullopt for a name the store did
// not write (so GC leaves it alone).
std::optional<Attachment> AttachmentOf(absl::string_view name) {
  size_t at = name.find('@');
  if (at == absl::string_view::npos) return std::nullopt;
  Attachment a{std::string(name.substr(0, at)), std::string(name.substr(at + 1))};
  if (!IsValidContainerId(a.container_id) || a.ifname.empty()) return std::nullopt;
  return a;
}

absl::Status RequireKey(absl::string_view network, const Attachment& a) {
  if (!IsValidContainerId(network)) {
    return InvalidConfig("attachment store", absl::StrCat("invalid network name ", Quoted(network)));
  }
  if (!IsValidContainerId(a.container_id)) {
    return InvalidConfig("attachment store", absl::StrCat("invalid container ID ", Quoted(a.container_id)));
  }
  if (a.ifname.empty() || a.ifname == "." || a.ifname == ".." || absl::StrContains(a.ifname, '/')) {
    return InvalidConfig("attachment store", absl::StrCat("invalid interface name ", Quoted(a.ifname)));
  }
  return absl::OkStatus();
}

Attachment AttachmentOf(const CmdArgs& args) { return {args.container_id, args.ifname}; }

}  // namespace

std::string AttachmentStore::NetworkDir(absl::string_view network) const {
  return absl::StrCat(dir_, "/", network);
}

absl::StatusOr<std::string> AttachmentStore::PathOf(absl::string_view network, const Attachment& a) const {
  CNI_RETURN_IF_ERROR(RequireKey(network, a));
  return absl::StrCat(NetworkDir(network), "/", FileName(a));
}

absl::Status AttachmentStore::Save(absl::string_view network, const Attachment& a,
                                   absl::string_view data) const {
  CNI_ASSIGN_OR_RETURN(std::string path, PathOf(network, a));
  absl::Status st;
  // A Remove or Gc of the network's last other record may remove the
  // directory between our mkdir and our write: make it again.
  for (int attempt = 0; attempt < 3; ++attempt) {
    st = WriteFileAtomic(path, data, {.mode = 0600, .make_parents = true, .parent_mode = 0700});
    if (ErrnoOf(st) != ENOENT) break;
  }
  return st;
}

absl::StatusOr<std::optional<std::string>> AttachmentStore::Load(absl::string_view network,
                                                                const Attachment& a) const {
  CNI_ASSIGN_OR_RETURN(std::string path, PathOf(network, a));
  return ReadRegularFileIfExists(path);
}

absl::Status AttachmentStore::Remove(absl::string_view network, const Attachment& a) const {
  CNI_ASSIGN_OR_RETURN(std::string path, PathOf(network, a));
  CNI_RETURN_IF_ERROR(RemoveFileAndTemp(path));
  (void)::rmdir(NetworkDir(network).c_str());  // the last record of the network: leave no empty folder
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Attachment>> AttachmentStore::List(absl::string_view network) const {
  CNI_RETURN_IF_ERROR(RequireKey(network, {"list", "list"}));
  CNI_ASSIGN_OR_RETURN(std::vector<std::string> names, ListDirectoryIfExists(NetworkDir(network)));
  std::vector<Attachment> out;
  for (const std::string& name : names) {
    if (absl::EndsWith(name, "~")) continue;  // a killed writer's file, not a record
    if (std::optional<Attachment> a = AttachmentOf(name)) out.push_back(*std::move(a));
  }
  std::sort(out.begin(), out.end(), [](const Attachment& x, const Attachment& y) {
    return std::tie(x.container_id, x.ifname) < std::tie(y.container_id, y.ifname);
  });
  return out;
}

absl::Status AttachmentStore::Gc(absl::string_view network, const std::vector<Attachment>& valid) const {
  CNI_RETURN_IF_ERROR(RequireKey(network, {"gc", "gc"}));
  const std::string dir = NetworkDir(network);
  CNI_ASSIGN_OR_RETURN(std::vector<std::string> names, ListDirectoryIfExists(dir));
  std::set<std::string> keep;
  for (const Attachment& a : valid) keep.insert(FileName(a));
  std::set<std::string> stale;  // records, and the records a killed writer was writing
  for (absl::string_view name : names) {
    if (absl::EndsWith(name, "~")) name.remove_suffix(1);
    if (AttachmentOf(name) && !keep.count(std::string(name))) stale.emplace(name);
  }
  std::vector<absl::Status> failures;
  for (const std::string& name : stale) failures.push_back(RemoveFileAndTemp(absl::StrCat(dir, "/", name)));
  (void)::rmdir(dir.c_str());  // nothing left: leave no empty folder
  return JoinErrors(failures);
}

absl::Status AttachmentStore::Save(const CmdArgs& args, absl::string_view data) const {
  return Save(args.conf.name, AttachmentOf(args), data);
}

absl::StatusOr<std::optional<std::string>> AttachmentStore::Load(const CmdArgs& args) const {
  return Load(args.conf.name, AttachmentOf(args));
}

absl::Status AttachmentStore::Remove(const CmdArgs& args) const {
  return Remove(args.conf.name, AttachmentOf(args));
}

absl::Status AttachmentStore::Gc(const CmdArgs& args) const {
  return Gc(args.conf.name, args.conf.valid_attachments);
}

}  // namespace cni

// A plugin's state, one small file per attachment: what ADD did, kept for
// DEL (which must undo it even when the configuration changed since) and for
// GC (which drops the state of attachments the runtime no longer has).
//
//   const cni::AttachmentStore store("/var/lib/cni/my-plugin");
//   RETURN_IF_ERROR(store.Save(args, cni::Dump(record)));        // ADD, last step
//   ASSIGN_OR_RETURN(std::optional<std::string> saved, store.Load(args));  // DEL
//   RETURN_IF_ERROR(store.Remove(args));                         // DEL, last step
//   return store.Gc(args);                                       // GC
//
// An attachment is (network name, container ID, interface name); its file is
// <dir>/<network>/<containerID>@<ifname> ('@' is not allowed in a container
// ID, so the name reads back unambiguously). Writes are atomic
// (WriteFileAtomic: readers see the old or the new content); Remove and Gc
// also remove what a writer killed before its rename left. A network's
// records are only ever touched by that network's commands. Failures are
// code 5 with their errno (cni/base/fs.h); a key that cannot be a file name
// is code 7.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/base/attachment.h"
#include "cni/protocol/skel.h"

namespace cni {

// The records of one plugin (see above): one per attachment, under `dir`.
class AttachmentStore {
 public:
  // A store under `dir` (created on the first Save, with its parents).
  explicit AttachmentStore(std::string dir) : dir_(std::move(dir)) {}

  // The file of one attachment of `network`.
  absl::StatusOr<std::string> PathOf(absl::string_view network, const Attachment& a) const;

  // Replaces the record of the attachment with `data` (mode 0600).
  absl::Status Save(absl::string_view network, const Attachment& a, absl::string_view data) const;
  // The record, or nullopt when there is none.
  absl::StatusOr<std::optional<std::string>> Load(absl::string_view network, const Attachment& a) const;
  // Removes the record (and a killed writer's temporary file); none is success.
  absl::Status Remove(absl::string_view network, const Attachment& a) const;
  // The attachments of `network` that have a record, sorted.
  absl::StatusOr<std::vector<Attachment>> List(absl::string_view network) const;
  // Removes every record of `network` whose attachment is not in `valid`,
  // and temporary files of killed writers but for valid attachments' (whose
  // writer may be running). Keeps going past a failure and reports them all.
  absl::Status Gc(absl::string_view network, const std::vector<Attachment>& valid) const;

  // The same for the attachment a command is about: network args.conf.name,
  // container ID args.container_id, interface args.ifname.
  absl::Status Save(const CmdArgs& args, absl::string_view data) const;
  // Load of the command's attachment.
  absl::StatusOr<std::optional<std::string>> Load(const CmdArgs& args) const;
  // Remove of the command's attachment.
  absl::Status Remove(const CmdArgs& args) const;
  // GC as the command asks: network args.conf.name, keeping
  // args.conf.valid_attachments ("cni.dev/valid-attachments").
  absl::Status Gc(const CmdArgs& args) const;

  // The directory given at construction.
  const std::string& dir() const { return dir_; }

 private:
  std::string NetworkDir(absl::string_view network) const;
  std::string dir_;
};

}  // namespace cni

#include "backup.h"

#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/fs.h"
#include "cni/base/json.h"
#include "cni/base/status_macros.h"

namespace cni::tuning {

std::string Backup::ToJson() const {
  // Upstream writes its struct's fields in declaration order, indented by one
  // space; an ordered_json keeps that order.
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  if (!mac.empty()) j["mac"] = mac;
  if (promisc) j["promisc"] = *promisc;
  if (mtu != 0) j["mtu"] = mtu;
  if (allmulti) j["allmulti"] = *allmulti;
  if (txqlen) j["txQLen"] = *txqlen;
  if (!network.empty()) j["network"] = network;
  return j.dump(1);
}

absl::StatusOr<Backup> Backup::Parse(absl::string_view text) {
  ASSIGN_OR_RETURN(Json j, ParseJson(text));
  if (!j.is_object()) return Error(ErrorCode::kDecodingFailure, "tuning: backup is not an object");
  Backup b;
  ASSIGN_OR_RETURN(std::optional<std::string> mac, GetString(j, "mac"));
  b.mac = mac.value_or("");
  ASSIGN_OR_RETURN(b.promisc, GetBool(j, "promisc"));
  ASSIGN_OR_RETURN(std::optional<int64_t> mtu, GetInt(j, "mtu"));
  b.mtu = static_cast<int>(mtu.value_or(0));
  ASSIGN_OR_RETURN(b.allmulti, GetBool(j, "allmulti"));
  ASSIGN_OR_RETURN(std::optional<int64_t> txqlen, GetInt(j, "txQLen"));
  if (txqlen) b.txqlen = static_cast<int>(*txqlen);
  ASSIGN_OR_RETURN(std::optional<std::string> network, GetString(j, "network"));
  b.network = network.value_or("");
  return b;
}

std::string BackupPath(absl::string_view dir, absl::string_view container_id,
                       absl::string_view ifname) {
  return absl::StrCat(dir, "/", container_id, "_", ifname, ".json");
}

std::string OldTempPath(absl::string_view path) { return absl::StrCat(path, ".tmp"); }

absl::Status WriteBackup(const std::string& path, const Backup& backup) {
  return Annotate(WriteFileAtomic(path, backup.ToJson(), {.mode = 0600, .make_parents = true}),
                  "tuning");
}

absl::StatusOr<std::optional<Backup>> ReadBackup(const std::string& path) {
  ASSIGN_OR_RETURN(std::optional<std::string> text, ReadRegularFileIfExists(path), "tuning");
  if (!text) return std::optional<Backup>();
  ASSIGN_OR_RETURN(Backup b, Backup::Parse(*text), "tuning: backup ", path);
  return std::optional<Backup>(std::move(b));
}

absl::Status RemoveBackup(const std::string& path) {
  // Also what a writer killed before its rename left: today's "<path>~" and
  // the "<path>.tmp" of earlier versions.
  absl::Status st = RemoveFileAndTemp(path);
  if (unlink(OldTempPath(path).c_str()) != 0 && errno != ENOENT && st.ok()) {
    st = IoError("removing", OldTempPath(path), errno);
  }
  return Annotate(st, "tuning");
}

}  // namespace cni::tuning

#include "backup.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "cni/error.h"
#include "cni/json.h"

namespace cni::tuning {
namespace {

absl::Status IoError(absl::string_view op, absl::string_view path, int err) {
  return Error(ErrorCode::kIoFailure,
               absl::StrCat("tuning: ", op, " ", path, ": ", std::strerror(err)));
}

}  // namespace

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
  absl::StatusOr<Json> j = ParseJson(text);
  if (!j.ok()) return j.status();
  if (!j->is_object()) return Error(ErrorCode::kDecodingFailure, "tuning: backup is not an object");
  Backup b;
  absl::StatusOr<std::optional<std::string>> mac = GetString(*j, "mac");
  if (!mac.ok()) return mac.status();
  b.mac = mac->value_or("");
  absl::StatusOr<std::optional<bool>> promisc = GetBool(*j, "promisc");
  if (!promisc.ok()) return promisc.status();
  b.promisc = *promisc;
  absl::StatusOr<std::optional<int64_t>> mtu = GetInt(*j, "mtu");
  if (!mtu.ok()) return mtu.status();
  b.mtu = static_cast<int>(mtu->value_or(0));
  absl::StatusOr<std::optional<bool>> allmulti = GetBool(*j, "allmulti");
  if (!allmulti.ok()) return allmulti.status();
  b.allmulti = *allmulti;
  absl::StatusOr<std::optional<int64_t>> txqlen = GetInt(*j, "txQLen");
  if (!txqlen.ok()) return txqlen.status();
  if (*txqlen) b.txqlen = static_cast<int>(**txqlen);
  absl::StatusOr<std::optional<std::string>> network = GetString(*j, "network");
  if (!network.ok()) return network.status();
  b.network = network->value_or("");
  return b;
}

std::string BackupPath(absl::string_view dir, absl::string_view container_id,
                       absl::string_view ifname) {
  return absl::StrCat(dir, "/", container_id, "_", ifname, ".json");
}

absl::Status WriteBackup(const std::string& path, const Backup& backup) {
  std::filesystem::path p(path);
  std::error_code ec;
  std::filesystem::create_directories(p.parent_path(), ec);
  if (ec) return IoError("creating backup directory", p.parent_path().string(), ec.value());
  std::string tmp = path + ".tmp";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return IoError("writing", tmp, errno);
  std::string data = backup.ToJson();
  ssize_t n = write(fd, data.data(), data.size());
  int err = errno;
  if (close(fd) != 0 && n >= 0) {
    n = -1;
    err = errno;
  }
  if (n != static_cast<ssize_t>(data.size())) {
    unlink(tmp.c_str());
    return IoError("writing", tmp, n < 0 ? err : EIO);
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    err = errno;
    unlink(tmp.c_str());
    return IoError("saving", path, err);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<Backup>> ReadBackup(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    if (errno == ENOENT) return std::optional<Backup>();
    return IoError("reading", path, errno);
  }
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<Backup> b = Backup::Parse(text.str());
  if (!b.ok()) return Annotate(b.status(), absl::StrCat("tuning: backup ", path));
  return std::optional<Backup>(*std::move(b));
}

absl::Status RemoveBackup(const std::string& path) {
  if (unlink(path.c_str()) != 0 && errno != ENOENT) return IoError("removing", path, errno);
  return absl::OkStatus();
}

}  // namespace cni::tuning

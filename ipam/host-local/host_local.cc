#include "host_local.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "allocator.h"
#include "cni/error.h"
#include "cni/version.h"
#include "config.h"
#include "fs.h"
#include "store.h"

namespace cni::hostlocal {
namespace {

absl::StatusOr<Config> Load(const CmdArgs& args) {
  return ParseConfig(args.conf.raw, args.conf.cni_version, args.conf.name, args.args);
}

absl::StatusOr<Dns> ReadResolvConf(const std::string& path) {
  absl::StatusOr<std::optional<std::string>> text = ReadFileAt(AT_FDCWD, path);
  if (!text.ok()) return text.status();
  if (!text->has_value()) return IoError("reading resolvConf", path, ENOENT);
  return ParseResolvConf(**text);
}

// Every command works on the store under its lock, taken once for the whole
// operation (upstream locks per range set; one lock is simpler and atomic).
template <typename Fn>
auto WithStore(const Config& cfg, Fn fn) -> decltype(fn(std::declval<Store&>())) {
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(cfg.StoreDir());
  if (!store.ok()) return store.status();
  StoreLock lock(**store);
  absl::Status st = lock.Acquire();
  if (!st.ok()) return st;
  auto out = fn(**store);
  // A failed index stamp is not the operation's failure: the reservations are
  // on disk, and the next operation simply rebuilds the index.
  (void)lock.Release();
  return out;
}

}  // namespace

absl::StatusOr<Result> Add(const CmdArgs& args) {
  absl::StatusOr<Config> cfg = Load(args);
  if (!cfg.ok()) return cfg.status();
  Result result;
  result.cni_version = std::string(kCurrentVersion);
  if (!cfg->resolv_conf.empty()) {
    absl::StatusOr<Dns> dns = ReadResolvConf(cfg->resolv_conf);
    if (!dns.ok()) return dns.status();
    result.dns = *std::move(dns);
  }

  return WithStore(*cfg, [&](Store& store) -> absl::StatusOr<Result> {
    std::vector<net::IpAddress> requested = cfg->requested_ips;
    std::vector<net::IpAddress> taken;
    // On any failure release exactly what this ADD reserved (upstream releases
    // everything the attachment owns, including older reservations).
    auto rollback = [&] {
      for (const net::IpAddress& ip : taken)
        (void)store.ReleaseIp(args.container_id, args.ifname, ip);
    };
    for (size_t idx = 0; idx < cfg->ranges.size(); ++idx) {
      const RangeSet& set = cfg->ranges[idx];
      std::optional<net::IpAddress> want;
      for (auto it = requested.begin(); it != requested.end(); ++it) {
        if (RangeSetContains(set, *it)) {
          want = *it;
          requested.erase(it);
          break;
        }
      }
      Allocator alloc(set, store, static_cast<int>(idx));
      absl::StatusOr<IpConfig> ip = alloc.Get(args.container_id, args.ifname, want);
      if (!ip.ok()) {
        rollback();
        return Annotate(ip.status(), absl::StrCat("failed to allocate for range ", idx));
      }
      taken.push_back(ip->address.addr());
      result.ips.push_back(*std::move(ip));
    }
    if (!requested.empty()) {
      rollback();
      return absl::InvalidArgumentError(absl::StrCat(
          "failed to allocate all requested IPs: ",
          absl::StrJoin(requested, " ", [](std::string* out, const net::IpAddress& ip) {
            absl::StrAppend(out, ip.ToString());
          })));
    }
    result.routes = cfg->routes;
    return result;
  });
}

absl::Status Del(const CmdArgs& args) {
  absl::StatusOr<Config> cfg = Load(args);
  if (!cfg.ok()) return cfg.status();
  return WithStore(*cfg, [&](Store& store) {
    // Once per range set, as upstream releases: the first pass takes the
    // attachment's files; a later one, finding none left in the current
    // format, falls back to files of the old format that hold only the
    // container ID. So with two or more range sets, a DEL also releases the
    // container's old-format reservations, as upstream's does. Keep going
    // past a failure and report them all.
    std::vector<absl::Status> failures;
    for (size_t pass = 0; pass < std::max<size_t>(cfg->ranges.size(), 1); ++pass) {
      if (absl::Status st = store.ReleaseByAttachment(args.container_id, args.ifname); !st.ok()) {
        failures.push_back(st);
      }
    }
    return JoinErrors(failures);
  });
}

absl::Status Check(const CmdArgs& args) {
  absl::StatusOr<Config> cfg = Load(args);
  if (!cfg.ok()) return cfg.status();
  return WithStore(*cfg, [&](Store& store) -> absl::Status {
    absl::StatusOr<bool> found = store.FindByAttachment(args.container_id, args.ifname);
    if (!found.ok()) return found.status();
    if (!*found) {
      return Error(ErrorCode::kUnknownContainer,
                   absl::StrCat("host-local: Failed to find address added by container ",
                                args.container_id));
    }
    return absl::OkStatus();
  });
}

absl::Status Gc(const CmdArgs& args) {
  absl::StatusOr<Config> cfg = Load(args);
  if (!cfg.ok()) return cfg.status();
  absl::flat_hash_set<std::string> valid_owners, valid_ids;
  for (const Attachment& a : args.conf.valid_attachments) {
    valid_owners.insert(OwnerKey(a.container_id, a.ifname));
    valid_ids.insert(std::string(TrimSpace(a.container_id)));
  }
  return WithStore(*cfg, [&](Store& store) -> absl::Status {
    absl::StatusOr<std::vector<Reservation>> all = store.Scan();
    if (!all.ok()) return all.status();
    std::vector<Reservation> victims;
    for (const Reservation& r : *all) {
      // Old upstream files hold only the container ID: kept while any
      // attachment of that container is valid.
      bool legacy = r.owner.find('\n') == std::string::npos;
      bool keep = legacy ? valid_ids.contains(r.owner) : valid_owners.contains(r.owner);
      if (!keep) victims.push_back(r);
    }
    return store.ReleaseReservations(victims);
  });
}

absl::Status Status(const CmdArgs& args) {
  absl::StatusOr<Config> cfg = Load(args);
  if (!cfg.ok()) return cfg.status();
  // Usable: the network directory (or, before the first ADD, its nearest
  // existing ancestor, where ADD would create it) is a writable directory.
  // Nothing is created here.
  std::string path = cfg->StoreDir();
  for (;;) {
    struct stat st;
    if (stat(path.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode) || access(path.c_str(), W_OK | X_OK) != 0) {
        return Error(ErrorCode::kPluginNotAvailable,
                     absl::StrCat("host-local: store directory \"", path, "\" is not usable"));
      }
      return absl::OkStatus();
    }
    if (errno != ENOENT || path == "/" || path == ".") {
      return Error(
          ErrorCode::kPluginNotAvailable,
          absl::StrCat("host-local: store directory \"", cfg->StoreDir(), "\" is not usable"));
    }
    size_t slash = path.find_last_of('/');
    path = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  }
}

PluginFuncs Funcs() { return {.add = Add, .del = Del, .check = Check, .gc = Gc, .status = Status}; }

}  // namespace cni::hostlocal

#include "host_local.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <string>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "allocator.h"
#include "cni/base/error.h"
#include "cni/base/fs.h"
#include "cni/base/status_macros.h"
#include "cni/protocol/version.h"
#include "config.h"
#include "fs.h"
#include "store.h"

namespace cni::hostlocal {
namespace {

// resolvConf names any path: only a regular file, read within bounds (so
// "/dev/zero" or a directory is a clear error, not a hang).
absl::StatusOr<Dns> ReadResolvConf(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadRegularFile(path), "resolvConf");
  return ParseResolvConf(text);
}

// Every command works on the store under its lock, taken once for the whole
// operation (upstream locks per range set; one lock is simpler and atomic).
template <typename Fn>
auto WithStore(const Config& cfg, Fn fn) -> decltype(fn(std::declval<Store&>())) {
  ASSIGN_OR_RETURN(std::unique_ptr<Store> store, Store::Open(cfg.StoreDir()));
  StoreLock lock(*store);
  RETURN_IF_ERROR(lock.Acquire());
  auto out = fn(*store);
  // A failed index stamp is not the operation's failure: the reservations are
  // on disk, and the next operation simply rebuilds the index.
  (void)lock.Release();
  return out;
}

// One address from each range set for the attachment. On any failure it
// releases exactly what it reserved (upstream releases everything the
// attachment owns, including older reservations).
absl::StatusOr<std::vector<IpConfig>> Allocate(const CmdArgs& args, const Config& cfg,
                                               Store& store) {
  std::vector<net::IpAddress> requested = cfg.requested_ips;
  std::vector<IpConfig> ips;
  absl::Cleanup rollback = [&] {
    for (const IpConfig& ip : ips) {
      (void)store.ReleaseIp(args.container_id, args.ifname, ip.address.addr());
    }
  };
  for (size_t idx = 0; idx < cfg.ranges.size(); ++idx) {
    const RangeSet& set = cfg.ranges[idx];
    std::optional<net::IpAddress> want = ipam::TakeRequested(set, requested);
    Allocator alloc(set, store, static_cast<int>(idx));
    ASSIGN_OR_RETURN(IpConfig ip, alloc.Get(args.container_id, args.ifname, want),
                     "failed to allocate for range ", idx);
    ips.push_back(std::move(ip));
  }
  RETURN_IF_ERROR(ipam::UnusedRequestedIps(requested));
  std::move(rollback).Cancel();
  return ips;
}

absl::StatusOr<Result> Add(const CmdArgs& args, const Config& cfg) {
  Result result;
  result.cni_version = std::string(kCurrentVersion);
  if (!cfg.resolv_conf.empty()) {
    ASSIGN_OR_RETURN(result.dns, ReadResolvConf(cfg.resolv_conf));
  }
  ASSIGN_OR_RETURN(result.ips, WithStore(cfg, [&](Store& store) {
                     return Allocate(args, cfg, store);
                   }));
  result.routes = cfg.routes;
  return result;
}

absl::Status Del(const CmdArgs& args, const Config& cfg) {
  return WithStore(cfg, [&](Store& store) {
    // Once per range set, as upstream releases: the first pass takes the
    // attachment's files; a later one, finding none left in the current
    // format, falls back to files of the old format that hold only the
    // container ID. So with two or more range sets, a DEL also releases the
    // container's old-format reservations, as upstream's does. Keep going
    // past a failure and report them all.
    std::vector<absl::Status> failures;
    for (size_t pass = 0; pass < std::max<size_t>(cfg.ranges.size(), 1); ++pass) {
      if (absl::Status st = store.ReleaseByAttachment(args.container_id, args.ifname); !st.ok()) {
        failures.push_back(st);
      }
    }
    return JoinErrors(failures);
  });
}

absl::Status Check(const CmdArgs& args, const Config& cfg) {
  return WithStore(cfg, [&](Store& store) -> absl::Status {
    ASSIGN_OR_RETURN(bool found, store.FindByAttachment(args.container_id, args.ifname));
    // A failed check, not code 3: that code tells the runtime the container
    // is unknown and needs no DEL, and a DEL may still have work to do.
    if (!found) {
      return Error(ErrorCode::kInternal,
                   absl::StrCat("host-local: Failed to find address added by container ",
                                args.container_id));
    }
    return absl::OkStatus();
  });
}

absl::Status Gc(const CmdArgs& args, const Config& cfg) {
  absl::flat_hash_set<std::string> valid_owners, valid_ids;
  for (const Attachment& a : args.conf.valid_attachments) {
    valid_owners.insert(OwnerKey(a.container_id, a.ifname));
    valid_ids.insert(std::string(TrimSpace(a.container_id)));
  }
  return WithStore(cfg, [&](Store& store) -> absl::Status {
    ASSIGN_OR_RETURN(std::vector<Reservation> all, store.Scan());
    std::vector<Reservation> victims;
    for (const Reservation& r : all) {
      // Old upstream files hold only the container ID: kept while any
      // attachment of that container is valid.
      bool legacy = r.owner.find('\n') == std::string::npos;
      bool keep = legacy ? valid_ids.contains(r.owner) : valid_owners.contains(r.owner);
      if (!keep) victims.push_back(r);
    }
    return store.ReleaseReservations(victims);
  });
}

absl::Status Status(const CmdArgs&, const Config& cfg) {
  // Usable: the network directory (or, before the first ADD, its nearest
  // existing ancestor, where ADD would create it) is a writable directory.
  // Nothing is created here.
  std::string path = cfg.StoreDir();
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
          absl::StrCat("host-local: store directory \"", cfg.StoreDir(), "\" is not usable"));
    }
    size_t slash = path.find_last_of('/');
    path = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  }
}

}  // namespace

PluginFuncs Funcs() {
  return Typed<Config>({.add = Add, .del = Del, .check = Check, .gc = Gc, .status = Status});
}

}  // namespace cni::hostlocal

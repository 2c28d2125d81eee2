#include "daemon.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <thread>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "cni/base/error.h"
#include "cni/base/fs.h"
#include "cni/base/status_macros.h"
#include "cni/protocol/version.h"
#include "protocol.h"

namespace cni::dhcp {
namespace {

void Log(absl::string_view msg) {
  std::string line = absl::StrCat(absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(), absl::UTCTimeZone()),
                                  " ", msg, "\n");
  fputs(line.c_str(), stderr);
}

absl::Status Usage(absl::string_view msg) {
  return Error(ErrorCode::kInvalidEnvironment,
               absl::StrCat(msg, "\nusage: dhcp daemon [-socketpath path] [-pidfile path] [-hostprefix path] "
                                 "[-statedir dir] [-broadcast] [-timeout 10s] [-resendmax 62s] "
                                 "[-resendtimeout 208s]"));
}

// sd_listen_fds(3): the listening socket systemd passed, if it passed one to us.
absl::StatusOr<int> ActivationSocket() {
  const char* pid = getenv("LISTEN_PID");
  const char* fds = getenv("LISTEN_FDS");
  int listen_pid = 0, count = 0;
  if (pid == nullptr || fds == nullptr || !absl::SimpleAtoi(pid, &listen_pid) || listen_pid != getpid() ||
      !absl::SimpleAtoi(fds, &count)) {
    return -1;
  }
  unsetenv("LISTEN_PID");
  unsetenv("LISTEN_FDS");
  unsetenv("LISTEN_FDNAMES");
  if (count == 0) return -1;
  if (count > 1) return Error(ErrorCode::kInvalidEnvironment, absl::StrCat("too many (", count, ") sockets passed by socket activation"));
  fcntl(3, F_SETFD, FD_CLOEXEC);
  return 3;
}

absl::StatusOr<UniqueFd> Listen(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) return Usage(absl::StrCat("socket path too long: ", path));
  std::memcpy(addr.sun_path, path.data(), path.size());
  size_t slash = path.rfind('/');
  if (slash != std::string::npos && slash > 0) RETURN_IF_ERROR(MkdirAll(path.substr(0, slash), 0700));
  UniqueFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return ErrnoError(errno, "opening a unix socket");
  // A socket file left by a daemon that died is replaced; a live daemon's is not.
  struct stat st {};
  if (lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) {
    UniqueFd probe(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (connect(probe.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
      return Error(ErrorCode::kInternal, absl::StrCat("another dhcp daemon listens on ", path));
    }
    unlink(path.c_str());
  }
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    return ErrnoError(errno, absl::StrCat("binding ", path));
  }
  if (listen(fd.get(), 128) != 0) return ErrnoError(errno, absl::StrCat("listening on ", path));
  return fd;
}

}  // namespace

absl::StatusOr<DaemonOptions> ParseDaemonFlags(const std::vector<std::string>& args) {
  DaemonOptions o;
  for (size_t i = 0; i < args.size(); ++i) {
    absl::string_view a = args[i];
    if (!absl::ConsumePrefix(&a, "-")) return Usage(absl::StrCat("unexpected argument \"", a, "\""));
    absl::ConsumePrefix(&a, "-");
    std::string name(a), value;
    bool has_value = false;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
      has_value = true;
    }
    if (name == "broadcast") {
      if (has_value && !absl::SimpleAtob(value, &o.timing.broadcast)) return Usage("bad -broadcast value");
      if (!has_value) o.timing.broadcast = true;
      continue;
    }
    if (!has_value) {
      if (i + 1 >= args.size()) return Usage(absl::StrCat("flag needs an argument: -", name));
      value = args[++i];
    }
    auto duration = [&](absl::Duration& out) -> absl::Status {
      if (!absl::ParseDuration(value, &out) || out < absl::ZeroDuration()) {
        return Usage(absl::StrCat("invalid duration \"", value, "\" for -", name));
      }
      return absl::OkStatus();
    };
    if (name == "socketpath") {
      o.socket_path = value;
    } else if (name == "pidfile") {
      o.pidfile = value;
    } else if (name == "hostprefix") {
      o.host_prefix = value;
    } else if (name == "statedir") {
      o.state_dir = value;
    } else if (name == "timeout") {
      RETURN_IF_ERROR(duration(o.timing.timeout));
    } else if (name == "resendmax") {
      RETURN_IF_ERROR(duration(o.timing.resend_max));
    } else if (name == "resendtimeout") {
      RETURN_IF_ERROR(duration(o.timing.resend_timeout));
    } else {
      return Usage(absl::StrCat("flag provided but not defined: -", name));
    }
  }
  if (o.socket_path.empty()) o.socket_path = kDefaultSocketPath;
  if (!o.pidfile.empty() && o.pidfile[0] != '/') {
    return Usage(absl::StrCat("Error writing pidfile \"", o.pidfile, "\": path not absolute"));
  }
  return o;
}

std::string Daemon::StatePath() const { return absl::StrCat(options_.host_prefix, options_.state_dir, "/leases.json"); }

std::shared_ptr<std::mutex> Daemon::AttachmentLock(const std::string& id) {
  std::lock_guard<std::mutex> lk(mu_);
  std::shared_ptr<std::mutex>& m = locks_[id];
  if (!m) m = std::make_shared<std::mutex>();
  return m;
}

std::shared_ptr<LeaseBase> Daemon::Find(const std::string& key) {
  std::lock_guard<std::mutex> lk(mu_);
  auto it = leases_.find(key);
  return it == leases_.end() ? nullptr : it->second;
}

void Daemon::Save() {
  std::lock_guard<std::mutex> save(save_mu_);
  Json leases = Json::array();
  {
    std::lock_guard<std::mutex> lk(mu_);
    for (const auto& [id, lease] : leases_) {
      if (lease->state() == Lease::State::kBound) leases.push_back(lease->ToJson());
    }
  }
  absl::Status st = WriteFileAtomic(StatePath(), Dump(Json{{"leases", leases}}) + "\n",
                                    {.mode = 0600, .make_parents = true, .parent_mode = 0700});
  if (!st.ok()) Log(absl::StrCat("saving the lease table: ", st.message()));
}

void Daemon::Resume() {
  absl::StatusOr<std::optional<std::string>> text = ReadRegularFileIfExists(StatePath());
  if (!text.ok()) {
    Log(absl::StrCat("reading the lease table: ", text.status().message()));
    return;
  }
  if (!*text) return;
  absl::StatusOr<Json> doc = ParseJson(**text);
  if (!doc.ok() || !doc->is_object() || !doc->contains("leases") || !(*doc)["leases"].is_array()) {
    Log(absl::StrCat(StatePath(), " is not a lease table, starting empty"));
    return;
  }
  for (const Json& record : (*doc)["leases"]) {
    absl::StatusOr<LeaseSpec> spec = LeaseSpec::FromJson(record.value("spec", Json::object()));
    if (spec.ok() && record.value("family", std::string("ipv4")) == "ipv6") {
      std::string key = Key(spec->ClientId(), true);
      auto lease = std::make_shared<Lease6>(*std::move(spec), options_.timing, [this] { Save(); });
      if (absl::Status st = lease->Resume(record); !st.ok()) {
        Log(absl::StrCat("skipping an unreadable IPv6 lease record: ", st.message()));
        continue;
      }
      std::lock_guard<std::mutex> lk(mu_);
      leases_[key] = lease;
      continue;
    }
    std::string ack_hex = record.value("ack", std::string());
    absl::StatusOr<Message> ack = Message::Decode(absl::HexStringToBytes(ack_hex));
    absl::StatusOr<net::MacAddress> mac = net::MacAddress::Parse(record.value("serverMac", std::string()));
    if (!spec.ok() || !ack.ok() || !mac.ok()) {
      Log("skipping an unreadable lease record");
      continue;
    }
    std::string id = spec->ClientId();
    auto lease = std::make_shared<Lease>(*std::move(spec), options_.timing, [this] { Save(); });
    {
      std::lock_guard<std::mutex> lk(mu_);
      leases_[id] = lease;
    }
    lease->Resume(*std::move(ack), *mac, absl::FromUnixSeconds(record.value("boundAt", int64_t{0})));
  }
}

namespace {

// One result of an attachment's leases (IPv4 first, then IPv6).
Result Merge(const std::vector<Result>& parts) {
  Result out;
  out.cni_version = "1.1.0";
  for (const Result& r : parts) {
    out.ips.insert(out.ips.end(), r.ips.begin(), r.ips.end());
    out.routes.insert(out.routes.end(), r.routes.begin(), r.routes.end());
    out.dns.nameservers.insert(out.dns.nameservers.end(), r.dns.nameservers.begin(), r.dns.nameservers.end());
    if (out.dns.domain.empty()) out.dns.domain = r.dns.domain;
    for (const std::string& s : r.dns.search) {
      if (std::find(out.dns.search.begin(), out.dns.search.end(), s) == out.dns.search.end()) out.dns.search.push_back(s);
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<Result> Daemon::Add(LeaseSpec spec, std::optional<absl::Duration> budget, uint64_t seq) {
  const absl::Time start = absl::Now();
  // The exchange ends a little before the plugin stops waiting, so that the
  // plugin reports the daemon's own reason (no reply, NAK...) and no lease is
  // acquired for an ADD that has already failed.
  absl::Time deadline = start + options_.timing.resend_timeout;
  if (budget) deadline = std::min(deadline, start + *budget - std::min(*budget / 10, absl::Seconds(2)));
  spec.netns = options_.host_prefix + spec.netns;
  std::string id = spec.ClientId();
  std::shared_ptr<std::mutex> lock = AttachmentLock(id);
  std::lock_guard<std::mutex> attachment(*lock);
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (auto it = deleted_.find(id); it != deleted_.end() && it->second.seq > seq) {
      return Error(ErrorCode::kTryAgainLater,
                   absl::StrCat("dhcp: ", id, " was deleted after this ADD was sent; not acquiring"));
    }
  }
  // Each family the configuration asks for: the lease the daemon keeps, or
  // a new one. A family that fails releases the leases this ADD acquired.
  std::vector<std::shared_ptr<LeaseBase>> have, fresh;
  auto rollback = [&] {
    for (const std::shared_ptr<LeaseBase>& l : fresh) {
      {
        std::lock_guard<std::mutex> lk(mu_);
        for (auto it = leases_.begin(); it != leases_.end();) it = it->second == l ? leases_.erase(it) : std::next(it);
      }
      (void)l->Stop(true);
    }
    if (!fresh.empty()) Save();
  };
  for (bool v6 : {false, true}) {
    if (v6 ? !spec.v6 : !spec.v4) continue;
    const std::string key = Key(id, v6);
    if (std::shared_ptr<LeaseBase> old = Find(key)) {
      if (old->state() == LeaseBase::State::kBound) {
        have.push_back(old);
        continue;
      }
      {
        std::lock_guard<std::mutex> lk(mu_);
        leases_.erase(key);
      }
      (void)old->Stop(false);  // expired or gone: acquire anew
    }
    std::shared_ptr<LeaseBase> lease;
    if (v6) {
      lease = std::make_shared<Lease6>(spec, options_.timing, [this] { Save(); });
    } else {
      lease = std::make_shared<Lease>(spec, options_.timing, [this] { Save(); });
    }
    bool deleted = false;
    {
      std::lock_guard<std::mutex> lk(mu_);
      auto it = deleted_.find(id);
      deleted = it != deleted_.end() && it->second.seq > seq;
      if (!deleted) acquiring_[id] = lease;
    }
    absl::Status acquired = deleted ? absl::CancelledError("deleted") : lease->Acquire(deadline);
    {
      std::lock_guard<std::mutex> lk(mu_);
      acquiring_.erase(id);
      auto it = deleted_.find(id);
      deleted = it != deleted_.end() && it->second.seq > seq;
      if (acquired.ok() && !deleted) leases_[key] = lease;
    }
    if (deleted) {
      // A DEL came while the exchange ran (and cancelled it, or came just
      // after it ended): nobody will use, or release, this lease.
      if (acquired.ok()) (void)lease->Stop(true);
      rollback();
      return Error(ErrorCode::kTryAgainLater,
                   absl::StrCat("dhcp: ", id, " was deleted while its lease was being acquired"));
    }
    if (!acquired.ok()) {
      rollback();
      return acquired;
    }
    fresh.push_back(lease);
    have.push_back(lease);
  }
  if (!fresh.empty()) Save();
  std::vector<Result> parts;
  for (const std::shared_ptr<LeaseBase>& l : have) {
    ASSIGN_OR_RETURN(Result r, l->CurrentResult());
    parts.push_back(std::move(r));
  }
  return Merge(parts);
}

absl::Status Daemon::Del(const LeaseSpec& spec, uint64_t seq) {
  std::string id = spec.ClientId();
  // Before the attachment's lock: an ADD that holds it, still waiting for a
  // server, gives up at once (and one waiting for it never starts).
  std::shared_ptr<LeaseBase> acquiring;
  {
    std::lock_guard<std::mutex> lk(mu_);
    const absl::Time now = absl::Now();
    for (auto it = deleted_.begin(); it != deleted_.end();) {
      it = now - it->second.at > absl::Hours(1) ? deleted_.erase(it) : std::next(it);
    }
    Deleted& d = deleted_[id];
    d.seq = std::max(d.seq, seq);
    d.at = now;
    if (auto it = acquiring_.find(id); it != acquiring_.end()) acquiring = it->second;
  }
  if (acquiring) acquiring->Cancel();
  std::shared_ptr<std::mutex> lock = AttachmentLock(id);
  std::lock_guard<std::mutex> attachment(*lock);
  // Both families, whatever this DEL's configuration says.
  std::vector<std::shared_ptr<LeaseBase>> leases;
  {
    std::lock_guard<std::mutex> lk(mu_);
    for (bool v6 : {false, true}) {
      auto it = leases_.find(Key(id, v6));
      if (it == leases_.end()) continue;
      leases.push_back(it->second);
      leases_.erase(it);
    }
  }
  if (leases.empty()) return absl::OkStatus();
  for (const std::shared_ptr<LeaseBase>& lease : leases) {
    absl::Status st = lease->Stop(true);
    if (!st.ok()) Log(absl::StrCat(id, ": failed to release the DHCP lease: ", st.message()));
  }
  Save();
  return absl::OkStatus();  // as upstream: a failed RELEASE is logged, the lease is forgotten
}

absl::StatusOr<Result> Daemon::Check(const LeaseSpec& spec) {
  std::string id = spec.ClientId();
  std::vector<Result> parts;
  for (bool v6 : {false, true}) {
    if (v6 ? !spec.v6 : !spec.v4) continue;
    const char* family = v6 ? "IPv6 " : "";
    std::shared_ptr<LeaseBase> lease = Find(Key(id, v6));
    if (!lease) return Error(ErrorCode::kInternal, absl::StrCat("dhcp: no ", family, "lease for ", id));
    switch (lease->state()) {
      case LeaseBase::State::kBound: {
        ASSIGN_OR_RETURN(Result r, lease->CurrentResult());
        parts.push_back(std::move(r));
        continue;
      }
      case LeaseBase::State::kExpired:
        return Error(ErrorCode::kInternal, absl::StrCat("dhcp: the ", family, "lease for ", id, " expired unrenewed"));
      case LeaseBase::State::kGone:
        break;
    }
    return Error(ErrorCode::kInternal, absl::StrCat("dhcp: the interface of ", id, " is gone"));
  }
  return Merge(parts);
}

absl::Status Daemon::Gc(const std::string& network, const Json& valid, uint64_t seq) {
  std::set<std::pair<std::string, std::string>> keep;
  if (valid.is_array()) {
    for (const Json& a : valid) keep.emplace(a.value("containerID", ""), a.value("ifname", ""));
  }
  std::map<std::string, LeaseSpec> stale;  // one per attachment: its DEL releases both families
  {
    std::lock_guard<std::mutex> lk(mu_);
    for (const auto& [key, lease] : leases_) {
      const LeaseSpec& s = lease->spec();
      if (s.network == network && !keep.count({s.container_id, s.ifname})) stale.emplace(s.ClientId(), s);
    }
  }
  for (const auto& [id, s] : stale) RETURN_IF_ERROR(Del(s, seq));
  return absl::OkStatus();
}

Json Daemon::Handle(const Json& request, uint64_t seq) {
  std::string op = request.value("op", "");
  absl::StatusOr<LeaseSpec> spec = LeaseSpec::FromJson(request.value("lease", Json::object()));
  auto with_result = [](const absl::StatusOr<Result>& r) -> Json {
    if (!r.ok()) return ErrorAnswer(r.status());
    absl::StatusOr<Json> j = ResultToJson(*r, "1.1.0");
    if (!j.ok()) return ErrorAnswer(j.status());
    return {{"result", *j}};
  };
  auto done = [](const absl::Status& st) -> Json { return st.ok() ? Json::object() : ErrorAnswer(st); };
  if (op == "STATUS") return Json::object();
  if (op == "GC") return done(Gc(request.value("network", ""), request.value("valid", Json::array()), seq));
  if (!spec.ok()) return ErrorAnswer(spec.status());
  if (op == "ADD") {
    std::optional<absl::Duration> budget;
    if (const Json* ms = FindKey(request, "budgetMs"); ms != nullptr && ms->is_number_integer()) {
      budget = absl::Milliseconds(ms->get<int64_t>());
    }
    return with_result(Add(*std::move(spec), budget, seq));
  }
  if (op == "DEL") return done(Del(*spec, seq));
  if (op == "CHECK") return with_result(Check(*spec));
  return ErrorAnswer(Error(ErrorCode::kInvalidEnvironment, absl::StrCat("dhcp daemon: unknown request \"", op, "\"")));
}

namespace {

void Serve(Daemon& daemon, UniqueFd conn, uint64_t seq) {
  timeval tv{30, 0};
  setsockopt(conn.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  absl::StatusOr<std::string> text = ReadToEnd(conn.get(), 1 << 20);
  Json answer;
  if (!text.ok()) {
    answer = ErrorAnswer(text.status());
  } else if (absl::StatusOr<Json> request = ParseJson(*text); !request.ok() || !request->is_object()) {
    answer = ErrorAnswer(Error(ErrorCode::kDecodingFailure, "dhcp daemon: the request is not a JSON object"));
  } else {
    answer = daemon.Handle(*request, seq);
  }
  (void)WriteAll(conn.get(), Dump(answer), "the dhcp socket");
}

}  // namespace

int DaemonMain(const std::vector<std::string>& args) {
  absl::StatusOr<DaemonOptions> options = ParseDaemonFlags(args);
  if (!options.ok()) {
    fprintf(stderr, "%s\n", std::string(options.status().message()).c_str());
    return 2;
  }
  auto fail = [](const absl::Status& st) {
    Log(st.message());
    return 1;
  };
  // SIGTERM and SIGINT arrive on a signalfd of the main thread; every thread
  // started later inherits the blocked mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);
  UniqueFd sigfd(signalfd(-1, &signals, SFD_CLOEXEC));
  if (!sigfd.valid()) return fail(ErrnoError(errno, "signalfd"));

  if (!options->pidfile.empty()) {
    absl::Status st = WriteFileAtomic(options->pidfile, absl::StrCat(getpid()), {.mode = 0644});
    if (!st.ok()) return fail(Annotate(st, absl::StrCat("Error writing pidfile ", options->pidfile)));
  }
  std::string socket_path = options->host_prefix + options->socket_path;
  absl::StatusOr<int> activated = ActivationSocket();
  if (!activated.ok()) return fail(activated.status());
  UniqueFd listener;
  if (*activated >= 0) {
    listener.reset(*activated);
    Log("listening on the socket systemd passed");
  } else {
    absl::StatusOr<UniqueFd> fd = Listen(socket_path);
    if (!fd.ok()) return fail(fd.status());
    listener = *std::move(fd);
    Log(absl::StrCat("listening on ", socket_path));
  }

  auto* daemon = new Daemon(*options);  // lives until _exit: connection threads may still use it
  daemon->Resume();
  uint64_t accepted = 0;
  for (;;) {
    pollfd fds[2] = {{listener.get(), POLLIN, 0}, {sigfd.get(), POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return fail(ErrnoError(errno, "poll"));
    }
    if (fds[1].revents & POLLIN) break;
    if (fds[0].revents & POLLIN) {
      int c = accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      std::thread(Serve, std::ref(*daemon), UniqueFd(c), ++accepted).detach();
    }
  }
  Log("stopping; leases stay persisted for the next start");
  if (*activated < 0) unlink(socket_path.c_str());
  if (!options->pidfile.empty()) unlink(options->pidfile.c_str());
  fflush(stderr);
  _exit(0);
}

}  // namespace cni::dhcp

#include "lease6.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"

namespace cni::dhcp {
namespace {

// RFC 8415 7.6's transmission parameters (the daemon's -timeout and
// -resendmax cap them further).
constexpr absl::Duration kSolTimeout = absl::Seconds(1), kSolMaxRt = absl::Seconds(3600);
constexpr absl::Duration kReqTimeout = absl::Seconds(1), kReqMaxRt = absl::Seconds(30);
constexpr absl::Duration kRenTimeout = absl::Seconds(10), kRenMaxRt = absl::Seconds(600);
constexpr absl::Duration kRelTimeout = absl::Seconds(1);

uint32_t NewXid() {
  uint32_t xid = 0;
  while (getrandom(&xid, sizeof(xid), 0) != sizeof(xid)) {
  }
  return xid & 0xffffff;
}

std::string U16s(const std::vector<uint16_t>& codes) {
  std::string out;
  for (uint16_t c : codes) {
    out.push_back(static_cast<char>(c >> 8));
    out.push_back(static_cast<char>(c & 0xff));
  }
  return out;
}

absl::Duration Seconds32(uint32_t s) {
  return s == 0xffffffff ? absl::Hours(24 * 3650) : absl::Seconds(s);
}

bool IsGone(const absl::Status& st) {
  return CodeOf(st) == static_cast<int>(ErrorCode::kUnknownContainer) || absl::IsNotFound(st);
}

}  // namespace

Result ResultFromLease6(const net::IpAddress& addr, const RouterAdvert& ra, const v6::Message& reply, int priority) {
  Result r;
  r.cni_version = "1.1.0";
  IpConfig ip;
  int len = 128;
  for (const RouterAdvert::Prefix& p : ra.prefixes) {
    if (p.on_link && p.prefix.Contains(addr)) len = p.prefix.len();
  }
  ip.address = net::IpPrefix(addr, len);
  if (ra.router_lifetime > 0) ip.gateway = ra.router;
  r.ips.push_back(ip);
  const net::IpPrefix any(net::IpAddress::V6({}), 0);
  if (ra.router_lifetime > 0) r.routes.push_back({.dst = any, .gw = ra.router});
  for (const RouterAdvert::RouteInfo& ri : ra.routes) {
    if (ri.lifetime == 0 || (ri.prefix == any && ra.router_lifetime > 0)) continue;
    r.routes.push_back({.dst = ri.prefix, .gw = ra.router});
  }
  if (priority != 0) {
    for (Route& route : r.routes) route.priority = priority;
  }
  for (const net::IpAddress& dns : v6::DnsServers(reply)) r.dns.nameservers.push_back(dns.ToString());
  r.dns.search = v6::DomainList(reply);
  return r;
}

LeaseTimes TimesOf6(uint32_t t1, uint32_t t2, const v6::IaAddress& addr, absl::Time bound_at) {
  absl::Duration preferred = Seconds32(addr.preferred), valid = Seconds32(addr.valid);
  absl::Duration renew = t1 > 0 ? Seconds32(t1) : preferred / 2;
  absl::Duration rebind = t2 > 0 ? Seconds32(t2) : preferred * 8 / 10;
  return {bound_at + renew, bound_at + std::max(rebind, renew), bound_at + valid};
}

uint32_t IaidOf(const LeaseSpec& spec) {
  uint32_t h = 2166136261u;  // FNV-1a
  for (unsigned char c : spec.ClientId()) h = (h ^ c) * 16777619u;
  return h;
}

Lease6::Lease6(LeaseSpec spec, Timing timing, std::function<void()> on_change)
    : spec_(std::move(spec)), timing_(timing), on_change_(std::move(on_change)),
      cancel_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)), iaid_(IaidOf(spec_)) {}

Lease6::~Lease6() { (void)Stop(false); }

void Lease6::Log(absl::string_view msg) const {
  std::string line = absl::StrCat(absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(), absl::UTCTimeZone()), " ",
                                  spec_.ClientId(), " (IPv6): ", msg, "\n");
  fputs(line.c_str(), stderr);
}

v6::Message Lease6::NewMessage(v6::MessageType type) const {
  v6::Message m;
  m.type = type;
  m.xid = NewXid();
  m.Add(v6::opt::kClientId, duid_);
  if (type != v6::MessageType::kRelease && type != v6::MessageType::kDecline) {
    std::vector<uint16_t> oro = {v6::opt::kDnsServers, v6::opt::kDomainList};
    for (uint16_t c : spec_.request6) {
      if (std::find(oro.begin(), oro.end(), c) == oro.end()) oro.push_back(c);
    }
    m.Add(v6::opt::kOptionRequest, U16s(oro));
    for (const auto& [code, value] : spec_.provide6) m.Add(code, value);
  }
  return m;
}

absl::StatusOr<Lease6::Bound> Lease6::BoundOf(const v6::Message& reply, const RouterAdvert& ra) const {
  if (uint16_t st = v6::StatusOf(reply); st != v6::kStatusSuccess) {
    return Error(ErrorCode::kTryAgainLater, absl::StrCat("the DHCPv6 server answered with status ", st));
  }
  for (const auto& [code, value] : reply.options) {
    if (code != v6::opt::kIaNa) continue;
    absl::StatusOr<v6::IaNa> ia = v6::DecodeIaNa(value);
    if (!ia.ok() || ia->iaid != iaid_) continue;
    if (ia->status != v6::kStatusSuccess) {
      return Error(ErrorCode::kTryAgainLater, absl::StrCat("the DHCPv6 server gave no address (status ", ia->status,
                                                           ia->status_message.empty() ? "" : ": ",
                                                           ia->status_message, ")"));
    }
    for (const v6::IaAddress& a : ia->addresses) {
      if (a.valid == 0) continue;
      const std::string* server = reply.Get(v6::opt::kServerId);
      return Bound{reply, server != nullptr ? *server : std::string(), a, ia->t1, ia->t2, ra, absl::Now()};
    }
  }
  return Error(ErrorCode::kTryAgainLater, "the DHCPv6 reply has no address for the IA");
}

absl::StatusOr<Lease6::Bound> Lease6::Solicit(Conn6& conn, absl::Time deadline) {
  v6::Message solicit = NewMessage(v6::MessageType::kSolicit);
  if (spec_.rapid_commit) solicit.Add(v6::opt::kRapidCommit, "");
  solicit.Add(v6::opt::kIaNa, v6::EncodeIaNa({.iaid = iaid_}));
  const uint32_t xid = solicit.xid;
  auto ours = [&](const v6::Message& m, uint32_t want) {
    const std::string* client = m.Get(v6::opt::kClientId);
    return m.xid == want && client != nullptr && *client == duid_ && m.Get(v6::opt::kServerId) != nullptr;
  };
  // RFC 8415 18.2.1 and 18.2.9: the ADVERTISEs that offer an address are
  // collected until the first retransmission timeout (about 1 s) ends, and
  // the one with the highest preference (option 7; the first among equals)
  // is taken; one with preference 255 is taken at once, as is a Rapid
  // Commit REPLY. After that first timeout, the first offer to come is
  // taken. With two servers on a link, the first to answer is not
  // necessarily the one the network prefers.
  // An ADVERTISE without an address (NoAddrsAvail) is no answer (keep
  // soliciting), but its reason goes into the error.
  std::string refusal;
  std::optional<v6::Message> best;
  int best_preference = -1;
  bool first_timeout_over = false;
  absl::StatusOr<v6::Message> answered = Exchange6(
      conn, solicit,
      [&](const v6::Message& m) {
        if (!ours(m, xid)) return false;
        if (m.type == v6::MessageType::kReply) return m.Get(v6::opt::kRapidCommit) != nullptr;
        if (m.type != v6::MessageType::kAdvertise) return false;
        absl::StatusOr<Bound> offer = BoundOf(m, {});
        if (!offer.ok()) {
          refusal = std::string(offer.status().message());
          return false;
        }
        const std::string* pref = m.Get(v6::opt::kPreference);
        const int preference = pref != nullptr && pref->size() == 1 ? static_cast<uint8_t>((*pref)[0]) : 0;
        if (preference > best_preference) {
          best = m;
          best_preference = preference;
        }
        return preference == 255 || first_timeout_over;
      },
      deadline, timing_, kSolTimeout, kSolMaxRt, cancel_.get(), "SOLICIT", [&]() -> std::optional<v6::Message> {
        first_timeout_over = true;
        return best;
      });
  if (!answered.ok() && !refusal.empty()) {
    return WithCode(absl::Status(answered.status().code(), absl::StrCat(answered.status().message(), " (", refusal, ")")),
                    static_cast<ErrorCode>(CodeOf(answered.status())));
  }
  ASSIGN_OR_RETURN(v6::Message answer, std::move(answered));
  if (answer.type == v6::MessageType::kReply) {
    Log("rapid commit");
    return BoundOf(answer, {});
  }
  ASSIGN_OR_RETURN(Bound offered, BoundOf(answer, {}));
  v6::Message request = NewMessage(v6::MessageType::kRequest);
  request.Add(v6::opt::kServerId, offered.server_id);
  request.Add(v6::opt::kIaNa, v6::EncodeIaNa({.iaid = iaid_, .addresses = {{offered.addr.addr, 0, 0}}}));
  const uint32_t rxid = request.xid;
  absl::StatusOr<v6::Message> reply = Exchange6(
      conn, request,
      [&](const v6::Message& m) { return ours(m, rxid) && m.type == v6::MessageType::kReply; }, deadline,
      timing_, kReqTimeout, kReqMaxRt, cancel_.get(), "REQUEST");
  if (!reply.ok()) {
    // The server may have bound the address and its REPLY been lost.
    ReleaseOnce(conn, offered.server_id, offered.addr.addr);
    return reply.status();
  }
  return BoundOf(*reply, {});
}

absl::StatusOr<Lease6::Bound> Lease6::Renew(Conn6& conn, absl::Time deadline, bool rebind) {
  Bound cur;
  {
    std::lock_guard<std::mutex> lk(mu_);
    cur = *bound_;
  }
  v6::Message msg = NewMessage(rebind ? v6::MessageType::kRebind : v6::MessageType::kRenew);
  if (!rebind) msg.Add(v6::opt::kServerId, cur.server_id);
  msg.Add(v6::opt::kIaNa, v6::EncodeIaNa({.iaid = iaid_, .addresses = {{cur.addr.addr, 0, 0}}}));
  const uint32_t xid = msg.xid;
  ASSIGN_OR_RETURN(v6::Message reply,
                   Exchange6(
                       conn, msg,
                       [&](const v6::Message& m) {
                         const std::string* client = m.Get(v6::opt::kClientId);
                         return m.xid == xid && m.type == v6::MessageType::kReply && client != nullptr &&
                                *client == duid_;
                       },
                       deadline, timing_, kRenTimeout, kRenMaxRt, cancel_.get(), rebind ? "REBIND" : "RENEW"));
  // RFC 8415 18.2.10.1: the server has no binding for the IA (dnsmasq
  // after losing its lease file; Kea binds the address again instead):
  // REQUEST it from the server that answered, within the same deadline.
  if (NoBinding(reply) && reply.Get(v6::opt::kServerId) != nullptr) {
    Log(absl::StrCat("the server has no binding for ", cur.addr.addr.ToString(), ", requesting it"));
    v6::Message request = NewMessage(v6::MessageType::kRequest);
    request.Add(v6::opt::kServerId, *reply.Get(v6::opt::kServerId));
    request.Add(v6::opt::kIaNa, v6::EncodeIaNa({.iaid = iaid_, .addresses = {{cur.addr.addr, 0, 0}}}));
    const uint32_t rxid = request.xid;
    ASSIGN_OR_RETURN(reply, Exchange6(
                                conn, request,
                                [&](const v6::Message& m) {
                                  const std::string* client = m.Get(v6::opt::kClientId);
                                  return m.xid == rxid && m.type == v6::MessageType::kReply && client != nullptr &&
                                         *client == duid_;
                                },
                                deadline, timing_, kReqTimeout, kReqMaxRt, cancel_.get(), "REQUEST"));
  }
  absl::StatusOr<Bound> b = BoundOf(reply, cur.ra);
  if (!b.ok()) return WithCode(b.status(), ErrorCode::kInternal);
  if (b->addr.addr != cur.addr.addr) {
    Log(absl::StrCat("the server gave a different address, ", b->addr.addr.ToString(),
                     ": the container keeps a stale one"));
  }
  if (b->server_id.empty()) b->server_id = cur.server_id;
  return b;
}

bool Lease6::NoBinding(const v6::Message& reply) const {
  for (const auto& [code, value] : reply.options) {
    if (code != v6::opt::kIaNa) continue;
    absl::StatusOr<v6::IaNa> ia = v6::DecodeIaNa(value);
    if (ia.ok() && ia->iaid == iaid_ && ia->status == v6::kStatusNoBinding) return true;
  }
  return false;
}

void Lease6::Commit(Bound b, bool notify) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (bound_) ++renewals_;
    Log(absl::StrCat("bound ", b.addr.addr.ToString(), " valid ", b.addr.valid, "s, router ",
                     b.ra.router.ToString()));
    bound_ = std::move(b);
    state_ = State::kBound;
  }
  if (notify && on_change_) on_change_();
}

absl::Status Lease6::Acquire(absl::Time deadline) {
  Log(absl::StrCat("acquiring a lease on ", spec_.ifname, " in ", spec_.netns));
  ASSIGN_OR_RETURN(Conn6 conn, Conn6::Open(spec_.netns, spec_.ifname, /*solicit=*/true, deadline, cancel_.get()),
                   "acquiring a DHCPv6 lease");
  duid_ = spec_.duid.empty() ? v6::DuidLl(conn.mac().bytes()) : spec_.duid;
  // An address that fails duplicate address detection is DECLINEd and
  // another one solicited (RFC 8415 18.2.8), a few times at most.
  absl::StatusOr<Bound> b;
  for (int attempt = 0;; ++attempt) {
    b = Solicit(conn, deadline);
    if (!b.ok()) return Annotate(b.status(), "acquiring a DHCPv6 lease");
    absl::StatusOr<bool> duplicate = conn.Duplicate(b->addr.addr, deadline, cancel_.get());
    if (!duplicate.ok()) {
      ReleaseOnce(conn, b->server_id, b->addr.addr);
      return Annotate(duplicate.status(), "acquiring a DHCPv6 lease");
    }
    if (!*duplicate) break;
    Log(absl::StrCat(b->addr.addr.ToString(), " is in use on the link (DAD failed), declining it"));
    Decline(conn, b->server_id, b->addr.addr);
    if (attempt == 2) {
      return Error(ErrorCode::kTryAgainLater,
                   absl::StrCat("acquiring a DHCPv6 lease: every address offered (the last ", b->addr.addr.ToString(),
                                ") is in use on the link"));
    }
  }
  // The routes: wait for the link's RA, within the same deadline.
  if (absl::Status st = conn.WaitRouter(deadline, cancel_.get()); !st.ok()) {
    ReleaseOnce(conn, b->server_id, b->addr.addr);
    return Annotate(st, "acquiring a DHCPv6 lease");
  }
  b->ra = *conn.ra();
  Commit(*std::move(b), /*notify=*/false);
  thread_ = std::thread([this] { Maintain(false); });
  return absl::OkStatus();
}

absl::Status Lease6::Resume(const Json& record) {
  try {
    absl::StatusOr<v6::Message> reply = v6::Message::Decode(absl::HexStringToBytes(record.at("reply").get<std::string>()));
    if (!reply.ok()) return reply.status();
    ASSIGN_OR_RETURN(RouterAdvert ra, RouterAdvert::FromJson(record.at("ra")));
    duid_ = absl::HexStringToBytes(record.at("duid").get<std::string>());
    ASSIGN_OR_RETURN(Bound b, BoundOf(*reply, ra));
    b.bound_at = absl::FromUnixSeconds(record.at("boundAt").get<int64_t>());
    {
      std::lock_guard<std::mutex> lk(mu_);
      bound_ = std::move(b);
      state_ = State::kBound;
    }
  } catch (const Json::exception& e) {
    return Error(ErrorCode::kDecodingFailure, absl::StrCat("IPv6 lease record: ", e.what()));
  }
  Log(absl::StrCat("resuming the lease of ", bound_->addr.addr.ToString(), ", renewing it now"));
  thread_ = std::thread([this] { Maintain(true); });
  return absl::OkStatus();
}

void Lease6::Maintain(bool renew_now) {
  enum class Phase { kBound, kRenewing, kRebinding } phase = renew_now ? Phase::kRenewing : Phase::kBound;
  for (;;) {
    LeaseTimes t;
    {
      std::unique_lock<std::mutex> lk(mu_);
      if (stopping_) return;
      t = TimesOf6(bound_->t1, bound_->t2, bound_->addr, bound_->bound_at);
      if (phase == Phase::kBound) {
        if (absl::Now() < t.renew) {
          cv_.wait_until(lk, absl::ToChronoTime(t.renew), [this] { return stopping_; });
          continue;
        }
        phase = Phase::kRenewing;
      }
    }
    absl::Time now = absl::Now();
    absl::StatusOr<Conn6> conn =
        Conn6::Open(spec_.netns, spec_.ifname, /*solicit=*/false, now + timing_.timeout, cancel_.get());
    if (!conn.ok()) {
      if (absl::IsCancelled(conn.status())) return;
      if (IsGone(conn.status())) {
        Log(absl::StrCat("attachment gone (", conn.status().message(), "), no longer maintaining the lease"));
        {
          std::lock_guard<std::mutex> lk(mu_);
          state_ = State::kGone;
        }
        if (on_change_) on_change_();
        return;
      }
      Log(conn.status().message());
      if (!Pause(absl::Seconds(1))) return;
      continue;
    }
    const bool rebind = phase == Phase::kRebinding;
    Log(rebind ? "rebinding the lease" : "renewing the lease");
    absl::Time until = rebind ? t.expire : t.rebind;
    absl::Time deadline = until > now ? std::min(until, now + timing_.resend_timeout) : now + timing_.timeout;
    absl::StatusOr<Bound> b = Renew(*conn, deadline, rebind);
    if (b.ok()) {
      Commit(*std::move(b), /*notify=*/true);
      phase = Phase::kBound;
      continue;
    }
    if (absl::IsCancelled(b.status())) return;
    Log(b.status().message());
    if (absl::Now() - now < absl::Seconds(1) && !Pause(absl::Seconds(1))) return;
    if (!rebind && (absl::Now() >= t.rebind || CodeOf(b.status()) == static_cast<int>(ErrorCode::kInternal))) {
      phase = Phase::kRebinding;
    } else if (rebind && absl::Now() >= t.expire) {
      // The address stays on the interface (the kernel has no lifetime for
      // it): CHECK reports the expiry.
      Log("lease expired");
      {
        std::lock_guard<std::mutex> lk(mu_);
        state_ = State::kExpired;
      }
      if (on_change_) on_change_();
      return;
    }
  }
}

bool Lease6::Pause(absl::Duration d) {
  pollfd fd{cancel_.get(), POLLIN, 0};
  int ms = static_cast<int>(absl::ToInt64Milliseconds(d));
  while (poll(&fd, 1, ms) < 0 && errno == EINTR) {
  }
  return !(fd.revents & POLLIN);
}

void Lease6::Decline(Conn6& conn, const std::string& server_id, const net::IpAddress& addr) {
  v6::Message decline = NewMessage(v6::MessageType::kDecline);
  decline.Add(v6::opt::kServerId, server_id);
  decline.Add(v6::opt::kIaNa, v6::EncodeIaNa({.iaid = iaid_, .addresses = {{addr, 0, 0}}}));
  const uint32_t xid = decline.xid;
  // DEC_TIMEOUT is 1 s; one transmission and its REPLY are enough here.
  (void)Exchange6(
      conn, decline, [&](const v6::Message& m) { return m.xid == xid && m.type == v6::MessageType::kReply; },
      absl::Now() + kRelTimeout, timing_, kRelTimeout, kRelTimeout, -1, "DECLINE");
}

void Lease6::ReleaseOnce(Conn6& conn, const std::string& server_id, const net::IpAddress& addr) {
  v6::Message release = NewMessage(v6::MessageType::kRelease);
  if (!server_id.empty()) release.Add(v6::opt::kServerId, server_id);
  release.Add(v6::opt::kIaNa, v6::EncodeIaNa({.iaid = iaid_, .addresses = {{addr, 0, 0}}}));
  const uint32_t xid = release.xid;
  // One transmission and REL_TIMEOUT for the REPLY: the interface plugin
  // deletes the link right after DEL.
  absl::StatusOr<v6::Message> reply = Exchange6(
      conn, release, [&](const v6::Message& m) { return m.xid == xid && m.type == v6::MessageType::kReply; },
      absl::Now() + kRelTimeout, timing_, kRelTimeout, kRelTimeout, -1, "RELEASE");
  Log(absl::StrCat("released ", addr.ToString(), reply.ok() ? "" : " (no reply)"));
}

absl::Status Lease6::SendRelease() {
  Bound cur;
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (!bound_ || state_ == State::kGone) return absl::OkStatus();
    cur = *bound_;
  }
  absl::StatusOr<Conn6> conn =
      Conn6::Open(spec_.netns, spec_.ifname, /*solicit=*/false, absl::Now() + timing_.timeout, -1);
  if (!conn.ok()) {
    if (IsGone(conn.status())) return absl::OkStatus();
    return conn.status();
  }
  ReleaseOnce(*conn, cur.server_id, cur.addr.addr);
  return absl::OkStatus();
}

void Lease6::Cancel() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  uint64_t one = 1;
  if (cancel_.valid()) (void)!write(cancel_.get(), &one, sizeof(one));
}

absl::Status Lease6::Stop(bool release) {
  Cancel();
  if (thread_.joinable()) thread_.join();
  if (!release) return absl::OkStatus();
  return SendRelease();
}

Lease6::State Lease6::state() const {
  std::lock_guard<std::mutex> lk(mu_);
  return state_;
}

int Lease6::renewals() const {
  std::lock_guard<std::mutex> lk(mu_);
  return renewals_;
}

absl::StatusOr<Result> Lease6::CurrentResult() const {
  std::lock_guard<std::mutex> lk(mu_);
  if (!bound_) return Error(ErrorCode::kInternal, "no lease");
  return ResultFromLease6(bound_->addr.addr, bound_->ra, bound_->reply, spec_.priority);
}

Json Lease6::ToJson() const {
  std::lock_guard<std::mutex> lk(mu_);
  Json j = {{"family", "ipv6"}, {"spec", spec_.ToJson()}, {"duid", absl::BytesToHexString(duid_)}};
  if (bound_) {
    j["reply"] = absl::BytesToHexString(bound_->reply.Encode());
    j["ra"] = bound_->ra.ToJson();
    j["boundAt"] = absl::ToUnixSeconds(bound_->bound_at);
  }
  return j;
}

}  // namespace cni::dhcp

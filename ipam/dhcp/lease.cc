#include "lease.h"

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

constexpr int kScopeLink = 253;

uint32_t NewXid() {
  uint32_t xid = 0;
  while (getrandom(&xid, sizeof(xid), 0) != sizeof(xid)) {
  }
  return xid;
}

std::chrono::system_clock::time_point ToChrono(absl::Time t) { return absl::ToChronoTime(t); }

// How long a RELEASE waits for the kernel to resolve the server's link
// address and send it (an ARP exchange on a LAN takes well under a
// millisecond; the kernel gives up after 3 s).
constexpr absl::Duration kReleaseResolveWait = absl::Seconds(2);

// The ACK's subnet mask as a prefix length (32 without one).
int PrefixLength(const Message& ack) {
  std::optional<net::IpAddress> mask = ack.Ip(opt::kSubnetMask);
  if (!mask) return 32;
  int len = 0;
  for (int i = 0; i < 4; ++i) len += __builtin_popcount(mask->data()[i]);
  return len;
}

// Forgets the learnt link addresses of the ACK's server and router.
void ForgetNextHops(Conn& conn, const Message& ack) {
  if (std::optional<net::IpAddress> server = ack.Ip(opt::kServerId)) conn.ForgetNeighbour(*server);
  if (std::optional<net::IpAddress> router = ack.Ip(opt::kRouter)) conn.ForgetNeighbour(*router);
}

bool IsGone(const absl::Status& st) {
  return CodeOf(st) == static_cast<int>(ErrorCode::kUnknownContainer) || absl::IsNotFound(st);
}

}  // namespace

std::string LeaseSpec::ClientId() const {
  std::string id = absl::StrCat(container_id, "/", network, "/", ifname);
  if (id.size() > 254) id.resize(254);
  return id;
}

Json LeaseSpec::ToJson() const {
  Json provided = Json::array();
  for (const auto& [code, value] : provide) provided.push_back({{"code", code}, {"value", absl::BytesToHexString(value)}});
  Json provided6 = Json::array();
  for (const auto& [code, value] : provide6) provided6.push_back({{"code", code}, {"value", absl::BytesToHexString(value)}});
  return {{"containerID", container_id}, {"network", network}, {"ifname", ifname},
          {"netns", netns}, {"parameterList", absl::BytesToHexString(parameter_list)},
          {"provide", provided}, {"priority", priority},
          {"family", v4 && v6 ? "dual" : v6 ? "ipv6" : "ipv4"}, {"duid", absl::BytesToHexString(duid)},
          {"request6", request6}, {"provide6", provided6}, {"rapidCommit", rapid_commit}};
}

absl::StatusOr<LeaseSpec> LeaseSpec::FromJson(const Json& j) {
  try {
    LeaseSpec s;
    s.container_id = j.at("containerID").get<std::string>();
    s.network = j.at("network").get<std::string>();
    s.ifname = j.at("ifname").get<std::string>();
    s.netns = j.at("netns").get<std::string>();
    s.parameter_list = absl::HexStringToBytes(j.at("parameterList").get<std::string>());
    for (const Json& p : j.at("provide")) {
      s.provide.emplace_back(p.at("code").get<uint8_t>(), absl::HexStringToBytes(p.at("value").get<std::string>()));
    }
    s.priority = j.at("priority").get<int>();
    // Absent in records of daemons without DHCPv6: IPv4 only.
    std::string family = j.value("family", std::string("ipv4"));
    s.v4 = family != "ipv6";
    s.v6 = family != "ipv4";
    s.duid = absl::HexStringToBytes(j.value("duid", std::string()));
    s.request6 = j.value("request6", std::vector<uint16_t>());
    s.rapid_commit = j.value("rapidCommit", true);
    if (const Json* p6 = FindKey(j, "provide6"); p6 != nullptr) {
      for (const Json& p : *p6) {
        s.provide6.emplace_back(p.at("code").get<uint16_t>(), absl::HexStringToBytes(p.at("value").get<std::string>()));
      }
    }
    return s;
  } catch (const Json::exception& e) {
    return Error(ErrorCode::kDecodingFailure, absl::StrCat("lease record: ", e.what()));
  }
}

LeaseTimes TimesOf(const Message& ack, absl::Time bound_at) {
  absl::Duration lease = absl::Seconds(ack.U32(opt::kLeaseTime).value_or(3600));
  absl::Duration t1 = lease / 2, t2 = lease * 85 / 100;
  if (std::optional<uint32_t> v = ack.U32(opt::kRenewalTime)) t1 = absl::Seconds(*v);
  if (std::optional<uint32_t> v = ack.U32(opt::kRebindingTime)) t2 = absl::Seconds(*v);
  return {bound_at + t1, bound_at + t2, bound_at + lease};
}

absl::StatusOr<Result> ResultFromAck(const Message& ack, int priority) {
  std::optional<net::IpAddress> mask = ack.Ip(opt::kSubnetMask);
  if (!mask) return Error(ErrorCode::kInternal, "DHCP option Subnet Mask not found in DHCPACK");
  int len = 0;
  for (int i = 0; i < 4; ++i) len += __builtin_popcount(mask->data()[i]);
  Result r;
  r.cni_version = "1.1.0";
  IpConfig ip;
  ip.address = net::IpPrefix(Message::AddrOf(ack.yiaddr), len);
  std::optional<net::IpAddress> router = ack.Ip(opt::kRouter);
  ip.gateway = router;
  r.ips.push_back(ip);
  std::vector<StaticRoute> routes = ack.ClasslessRoutes();
  bool classless = !routes.empty();
  if (!classless) routes = ack.StaticRoutes();
  for (const StaticRoute& s : routes) {
    Route route;
    route.dst = s.dst;
    if (s.gw.IsUnspecified()) {
      route.scope = kScopeLink;  // on-link (upstream: SCOPE_LINK)
    } else {
      route.gw = s.gw;
    }
    r.routes.push_back(route);
  }
  if (!classless && router) {
    Route def;
    def.dst = net::IpPrefix(net::IpAddress::V4({0, 0, 0, 0}), 0);
    def.gw = router;
    r.routes.push_back(def);
  }
  if (priority != 0) {
    for (Route& route : r.routes) route.priority = priority;
  }
  for (const net::IpAddress& dns : ack.IpList(opt::kDnsServers)) r.dns.nameservers.push_back(dns.ToString());
  if (const std::string* domain = ack.Get(opt::kDomainName)) {
    r.dns.domain = std::string(domain->c_str());  // some servers NUL-terminate it
  }
  return r;
}

Lease::Lease(LeaseSpec spec, Timing timing, std::function<void()> on_change)
    : spec_(std::move(spec)), timing_(timing), on_change_(std::move(on_change)),
      cancel_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

Lease::~Lease() { (void)Stop(false); }

void Lease::Log(absl::string_view msg) const {
  std::string line = absl::StrCat(absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(), absl::UTCTimeZone()), " ",
                                  spec_.ClientId(), ": ", msg, "\n");
  fputs(line.c_str(), stderr);
}

Message Lease::NewMessage(MessageType type, uint32_t xid, const net::MacAddress& mac) const {
  Message m;
  m.xid = xid;
  std::copy(mac.bytes().begin(), mac.bytes().end(), m.chaddr.begin());
  m.Set(opt::kMessageType, std::string(1, static_cast<char>(type)));
  m.Set(opt::kClientId, std::string(1, '\0') + spec_.ClientId());
  if (type == MessageType::kDiscover || type == MessageType::kRequest) {
    if (timing_.broadcast) m.flags = 0x8000;
    if (!spec_.parameter_list.empty()) m.Set(opt::kParameterList, spec_.parameter_list);
    for (const auto& [code, value] : spec_.provide) m.Set(code, value);
  }
  return m;
}

absl::StatusOr<Lease::Bound> Lease::Discover(Conn& conn, absl::Time deadline) {
  net::IpAddress any;
  for (;;) {
    uint32_t xid = NewXid();
    std::array<uint8_t, 16> chaddr{};
    std::copy(conn.mac().bytes().begin(), conn.mac().bytes().end(), chaddr.begin());
    auto ours = [xid, chaddr](const Message& m) { return m.xid == xid && m.chaddr == chaddr; };
    auto broadcast = [&](const Message& m) { return conn.Send(m, any, Broadcast(), BroadcastMac()); };
    ASSIGN_OR_RETURN(Reply offer,
                     Exchange(
                         conn, NewMessage(MessageType::kDiscover, xid, conn.mac()), broadcast,
                         [&](const Message& m) {
                           return ours(m) && m.Type() == MessageType::kOffer && m.yiaddr != std::array<uint8_t, 4>{} &&
                                  m.Ip(opt::kServerId).has_value();
                         },
                         deadline, timing_, cancel_.get(), "DISCOVER"));
    net::IpAddress server = *offer.msg.Ip(opt::kServerId);
    Message request = NewMessage(MessageType::kRequest, xid, conn.mac());
    request.SetIp(opt::kRequestedIp, Message::AddrOf(offer.msg.yiaddr));
    request.SetIp(opt::kServerId, server);
    absl::StatusOr<Reply> answered = Exchange(
        conn, request, broadcast,
        [&](const Message& m) {
          std::optional<MessageType> t = m.Type();
          return ours(m) && (t == MessageType::kAck || t == MessageType::kNak) && m.Ip(opt::kServerId) == server;
        },
        deadline, timing_, cancel_.get(), "REQUEST");
    if (!answered.ok()) {
      // The server may have bound the address and its ACK be on the way (or
      // lost): give it back, so that it does not wait for the lease to expire.
      Message release = NewMessage(MessageType::kRelease, NewXid(), conn.mac());
      release.ciaddr = offer.msg.yiaddr;
      release.SetIp(opt::kServerId, server);
      (void)conn.SendUnicast(release, Message::AddrOf(offer.msg.yiaddr), PrefixLength(offer.msg), server,
                             offer.from_mac);
      return answered.status();
    }
    Reply ack = *std::move(answered);
    if (ack.msg.Type() == MessageType::kNak) {
      Log(absl::StrCat("NAK from ", server.ToString(), " for ", Message::AddrOf(offer.msg.yiaddr).ToString(),
                       ", discovering again"));
      if (!Pause(absl::Seconds(1))) return absl::CancelledError("lease stopped");
      continue;
    }
    if (!ack.msg.Ip(opt::kSubnetMask)) {
      return Error(ErrorCode::kInternal, "DHCP option Subnet Mask not found in DHCPACK");
    }
    return Bound{std::move(ack.msg), ack.from_mac, absl::Now()};
  }
}

absl::StatusOr<Lease::Bound> Lease::Renew(Conn& conn, absl::Time deadline) {
  Bound cur;
  {
    std::lock_guard<std::mutex> lk(mu_);
    cur = *bound_;
  }
  uint32_t xid = NewXid();
  Message request = NewMessage(MessageType::kRequest, xid, conn.mac());
  request.flags = 0;  // the server answers ciaddr by unicast
  request.ciaddr = cur.ack.yiaddr;
  net::IpAddress addr = Message::AddrOf(cur.ack.yiaddr);
  std::optional<net::IpAddress> server = cur.ack.Ip(opt::kServerId);
  const int prefix_len = PrefixLength(cur.ack);
  // Unicast through the container's UDP stack, which finds the server's
  // link address as it is now (see Conn::SendUnicast). A transmission that
  // went unanswered may have gone to a link address the server no longer
  // has: the next one resolves it afresh.
  int sent = 0;
  auto send = [&](const Message& m) -> absl::Status {
    if (!server) return conn.Send(m, addr, Broadcast(), BroadcastMac());
    if (sent++ > 0) ForgetNextHops(conn, cur.ack);
    return conn.SendUnicast(m, addr, prefix_len, *server, cur.server_mac).status();
  };
  ASSIGN_OR_RETURN(Reply ack, Exchange(
                                  conn, request, send,
                                  [&](const Message& m) {
                                    std::optional<MessageType> t = m.Type();
                                    return m.xid == xid && (t == MessageType::kAck || t == MessageType::kNak);
                                  },
                                  deadline, timing_, cancel_.get(), "REQUEST (renewal)"));
  if (ack.msg.Type() == MessageType::kNak) {
    return Error(ErrorCode::kInternal, absl::StrCat("renewal of ", addr.ToString(), " refused (NAK)"));
  }
  if (ack.msg.yiaddr != cur.ack.yiaddr || !ack.msg.Ip(opt::kSubnetMask)) {
    return Error(ErrorCode::kInternal, absl::StrCat("renewal ACK for ", addr.ToString(), " is not usable"));
  }
  return Bound{std::move(ack.msg), ack.from_mac, absl::Now()};
}

void Lease::Commit(Bound b, bool notify) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (bound_) ++renewals_;
    Log(absl::StrCat("bound ", Message::AddrOf(b.ack.yiaddr).ToString(), " lease ",
                     b.ack.U32(opt::kLeaseTime).value_or(3600), "s from ",
                     b.ack.Ip(opt::kServerId).value_or(net::IpAddress()).ToString()));
    bound_ = std::move(b);
    state_ = State::kBound;
  }
  if (notify && on_change_) on_change_();
}

absl::Status Lease::Acquire(absl::Time deadline) {
  Log(absl::StrCat("acquiring a lease on ", spec_.ifname, " in ", spec_.netns));
  ASSIGN_OR_RETURN(Conn conn, Conn::Open(spec_.netns, spec_.ifname));
  absl::StatusOr<Bound> b = Discover(conn, deadline);
  Conn::CloseInBackground(std::move(conn));
  if (!b.ok()) return Annotate(b.status(), "acquiring a DHCP lease");
  Commit(*std::move(b), /*notify=*/false);  // the daemon saves once the lease is in its table
  // Maintain returns at once when Cancel() came meanwhile.
  thread_ = std::thread([this] { Maintain(false); });
  return absl::OkStatus();
}

void Lease::Resume(Message ack, net::MacAddress server_mac, absl::Time bound_at) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    bound_ = Bound{std::move(ack), server_mac, bound_at};
    state_ = State::kBound;
  }
  Log(absl::StrCat("resuming the lease of ", Message::AddrOf(bound_->ack.yiaddr).ToString(), ", renewing it now"));
  thread_ = std::thread([this] { Maintain(true); });
}

void Lease::Maintain(bool renew_now) {
  enum class Phase { kBound, kRenewing, kRebinding } phase = renew_now ? Phase::kRenewing : Phase::kBound;
  for (;;) {
    LeaseTimes t;
    {
      std::unique_lock<std::mutex> lk(mu_);
      if (stopping_) return;
      t = TimesOf(bound_->ack, bound_->bound_at);
      if (phase == Phase::kBound) {
        if (absl::Now() < t.renew) {
          cv_.wait_until(lk, ToChrono(t.renew), [this] { return stopping_; });
          continue;
        }
        phase = Phase::kRenewing;
      }
    }
    absl::StatusOr<Conn> conn = Conn::Open(spec_.netns, spec_.ifname);
    if (!conn.ok()) {
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
      std::unique_lock<std::mutex> lk(mu_);
      cv_.wait_for(lk, std::chrono::seconds(1), [this] { return stopping_; });
      continue;
    }
    absl::Time now = absl::Now();
    if (phase == Phase::kRenewing) {
      Log("renewing the lease");
      absl::Time deadline = t.rebind > now ? std::min(t.rebind, now + timing_.resend_timeout) : now + timing_.timeout;
      absl::StatusOr<Bound> b = Renew(*conn, deadline);
      if (b.ok()) {
        Commit(*std::move(b), /*notify=*/true);
        phase = Phase::kBound;
        continue;
      }
      if (absl::IsCancelled(b.status())) return;
      Log(b.status().message());
      if (absl::Now() - now < absl::Seconds(1) && !Pause(absl::Seconds(1))) return;  // failed at once: no busy loop
      if (absl::Now() >= t.rebind || CodeOf(b.status()) == static_cast<int>(ErrorCode::kInternal)) phase = Phase::kRebinding;
    } else {
      Log("rebinding the lease");
      absl::Time deadline = t.expire > now ? std::min(t.expire, now + timing_.resend_timeout) : now + timing_.timeout;
      absl::StatusOr<Bound> b = Discover(*conn, deadline);
      if (b.ok()) {
        if (b->ack.yiaddr != bound_->ack.yiaddr) {
          Log(absl::StrCat("the server gave a different address, ", Message::AddrOf(b->ack.yiaddr).ToString(),
                           ": the container keeps a stale one"));
        }
        Commit(*std::move(b), /*notify=*/true);
        phase = Phase::kBound;
        continue;
      }
      if (absl::IsCancelled(b.status())) return;
      Log(b.status().message());
      if (absl::Now() - now < absl::Seconds(1) && !Pause(absl::Seconds(1))) return;
      if (absl::Now() >= t.expire) {
        Log(absl::StrCat("lease expired, setting ", spec_.ifname, " down"));
        (void)conn->SetDown();
        {
          std::lock_guard<std::mutex> lk(mu_);
          state_ = State::kExpired;
        }
        if (on_change_) on_change_();
        return;
      }
    }
  }
}

bool Lease::Pause(absl::Duration d) {
  pollfd fd{cancel_.get(), POLLIN, 0};
  int ms = static_cast<int>(absl::ToInt64Milliseconds(d));
  while (poll(&fd, 1, ms) < 0 && errno == EINTR) {
  }
  return !(fd.revents & POLLIN);
}

absl::Status Lease::SendRelease() {
  Bound cur;
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (!bound_ || state_ == State::kGone) return absl::OkStatus();
    cur = *bound_;
  }
  absl::StatusOr<Conn> conn = Conn::Open(spec_.netns, spec_.ifname);
  if (!conn.ok()) {
    if (IsGone(conn.status())) return absl::OkStatus();  // nothing left to release from
    return conn.status();
  }
  Message release = NewMessage(MessageType::kRelease, NewXid(), conn->mac());
  release.ciaddr = cur.ack.yiaddr;
  std::optional<net::IpAddress> server = cur.ack.Ip(opt::kServerId);
  if (server) release.SetIp(opt::kServerId, *server);
  const net::IpAddress addr = Message::AddrOf(cur.ack.yiaddr);
  Log(absl::StrCat("releasing ", addr.ToString()));
  absl::Status st;
  if (!server) {
    st = conn->Send(release, addr, Broadcast(), BroadcastMac());
  } else {
    // Resolve the server's (or its router's) link address afresh: a learnt
    // entry may be stale (a bridge's MAC changes with its ports).
    ForgetNextHops(*conn, cur.ack);
    const int prefix_len = PrefixLength(cur.ack);
    absl::StatusOr<bool> kernel = conn->SendUnicast(release, addr, prefix_len, *server, cur.server_mac);
    if (!kernel.ok()) {
      st = kernel.status();
    } else if (*kernel && !conn->WaitSent(absl::Now() + kReleaseResolveWait)) {
      // The link address did not resolve in time (the server may not
      // answer ARP): the packet socket's copy is the last chance before
      // the interface goes.
      Log(absl::StrCat("no neighbour for ", server->ToString(), " yet, sending the RELEASE by link broadcast too"));
      const bool on_link = net::IpPrefix(addr, prefix_len).Contains(*server);
      st = conn->Send(release, addr, *server, on_link ? BroadcastMac() : cur.server_mac);
    }
  }
  Conn::CloseInBackground(*std::move(conn));
  return st;
}

void Lease::Cancel() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  uint64_t one = 1;
  if (cancel_.valid()) (void)!write(cancel_.get(), &one, sizeof(one));
}

absl::Status Lease::Stop(bool release) {
  Cancel();
  if (thread_.joinable()) thread_.join();
  if (!release) return absl::OkStatus();
  return SendRelease();
}

Lease::State Lease::state() const {
  std::lock_guard<std::mutex> lk(mu_);
  return state_;
}

int Lease::renewals() const {
  std::lock_guard<std::mutex> lk(mu_);
  return renewals_;
}

absl::StatusOr<Result> Lease::CurrentResult() const {
  std::lock_guard<std::mutex> lk(mu_);
  if (!bound_) return Error(ErrorCode::kInternal, "no lease");
  return ResultFromAck(bound_->ack, spec_.priority);
}

Json Lease::ToJson() const {
  std::lock_guard<std::mutex> lk(mu_);
  Json j = {{"spec", spec_.ToJson()}};
  if (bound_) {
    j["ack"] = absl::BytesToHexString(bound_->ack.Encode());
    j["serverMac"] = bound_->server_mac.ToString();
    j["boundAt"] = absl::ToUnixSeconds(bound_->bound_at);
  }
  return j;
}

}  // namespace cni::dhcp

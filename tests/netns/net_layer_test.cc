// Real-kernel tests of the SDK's namespace + netlink layer (sdk/include/cni/net).
// Every test case starts with a NetnsFixture: all kernel work happens in a
// private host namespace and container namespaces created inside it.
#include <linux/if_addr.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/json.h"
#include "cni/net/addr.h"
#include "cni/net/bridge.h"
#include "cni/net/devconf.h"
#include "cni/net/link.h"
#include "cni/net/netlink.h"
#include "cni/net/netns.h"
#include "cni/net/qdisc.h"
#include "cni/net/route.h"
#include "cni/net/rule.h"
#include "cni/net/sysctl.h"
#include "cni/net/veth.h"
#include "cni/plugin/ipam_apply.h"
#include "support/netns_fixture.h"
#include "support/netns_tools.h"

namespace {

using namespace cni::net;  // NOLINT: test brevity
using cni::test::NetnsFixture;
using cni::test::MustExec;

template <typename T>
T Must(absl::StatusOr<T> v) {
  INFO(v.status().ToString());
  REQUIRE(v.ok());
  return std::move(*v);
}

void MustOk(const absl::Status& st) {
  INFO(st.ToString());
  REQUIRE(st.ok());
}

IpPrefix P(const char* text) { return Must(IpPrefix::Parse(text)); }
IpAddress A(const char* text) { return Must(IpAddress::Parse(text)); }

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

bool HasAddress(NetlinkSocket& sock, int ifindex, const IpPrefix& p) {
  for (const AddressInfo& a : Must(ListAddresses(sock, ifindex))) {
    if (a.prefix == p) return true;
  }
  return false;
}

std::optional<RouteSpec> FindRoute(NetlinkSocket& sock, const IpPrefix& dst, int table = 254) {
  RouteFilter f;
  f.table = table;
  for (const RouteSpec& r : Must(ListRoutes(sock, f))) {
    if (r.dst == dst) return r;
  }
  return std::nullopt;
}

// A veth pair "ve-host" (host namespace) <-> "ve-ctr" (in `ctr`).
struct Pair {
  NetlinkSocket host;
  NetlinkSocket ctr;
  LinkInfo host_link;
  LinkInfo ctr_link;
};

Pair MakePair(const Netns& ctr_ns) {
  NetlinkSocket host = Must(NetlinkSocket::Open());
  NetlinkSocket ctr = Must(NetlinkSocket::OpenIn(ctr_ns));
  VethSpec spec;
  spec.name = "ve-host";
  spec.peer_name = "ve-ctr";
  spec.peer_netns = &ctr_ns;
  MustOk(CreateVeth(host, spec));
  LinkInfo h = Must(LinkByName(host, "ve-host"));
  LinkInfo c = Must(LinkByName(ctr, "ve-ctr"));
  return Pair{std::move(host), std::move(ctr), h, c};
}

}  // namespace

TEST_CASE("fixture gives a private host namespace and cleans up", "[netns]") {
  struct stat before {};
  REQUIRE(stat("/proc/thread-self/ns/net", &before) == 0);
  std::string path;
  {
    NetnsFixture fx;
    struct stat mine {};
    REQUIRE(stat("/proc/thread-self/ns/net", &mine) == 0);
    CHECK(mine.st_ino != before.st_ino);
    CHECK(fx.Links() == std::vector<std::string>{"lo"});
    path = fx.AddNetns("fixture-check");
    CHECK(path == "/run/netns/fixture-check");
    CHECK(fx.Links(path) == std::vector<std::string>{"lo"});
    cni::test::RunResult r = fx.Exec(path, {"ip", "-o", "link", "show"});
    CHECK(r.exit_code == 0);
    CHECK(absl::StrContains(r.out, "lo:"));
    CHECK(fx.Leftovers() == std::vector<std::string>{"netns /run/netns/fixture-check"});
    // /run is private: plugin state written there is reported, and the
    // machine never sees it.
    REQUIRE(mkdir("/run/cni", 0755) == 0);
    std::ofstream("/run/cni/left") << "x";
    CHECK(fx.Leftovers() ==
          std::vector<std::string>{"netns /run/netns/fixture-check", "state file /run/cni/left"});
    REQUIRE(unlink("/run/cni/left") == 0);
  }
  // The destructor unpinned it.
  struct stat gone {};
  CHECK(stat(path.c_str(), &gone) != 0);
}

TEST_CASE("Netns::Open checks that the path is a network namespace", "[netns]") {
  NetnsFixture fx;
  std::string path = fx.AddNetns();

  Netns ns = Must(Netns::Open(path));
  Netns again = Must(Netns::Open(path));
  Netns here = Must(Netns::Current());
  CHECK(Netns::Same(ns, again));
  CHECK_FALSE(Netns::Same(ns, here));
  CHECK(ns.path() == path);

  // Run happens inside the namespace, on another thread; we stay where we are.
  bool same_inside = false;
  MustOk(ns.Run([&] {
    same_inside = Netns::Same(*Netns::Current(), ns);
    return absl::OkStatus();
  }));
  CHECK(same_inside);
  CHECK(Netns::Same(Must(Netns::Current()), here));
  // Each namespace has its own cookie, the same every time it is asked.
  uint64_t cookie_here = Must(cni::net::CurrentNetnsCookie());
  CHECK(Must(cni::net::CurrentNetnsCookie()) == cookie_here);
  uint64_t cookie_inside = Must(ns.RunFor<uint64_t>([] { return cni::net::CurrentNetnsCookie(); }));
  CHECK(cookie_inside != cookie_here);
  // Errors from the function come back.
  absl::Status inner = ns.Run([] { return absl::InternalError("boom"); });
  CHECK(inner.message() == "boom");

  SECTION("a regular file") {
    cni::test::TempDir dir;
    std::string file = dir.str() + "/plain";
    std::ofstream(file) << "x";
    absl::StatusOr<Netns> bad = Netns::Open(file);
    REQUIRE_FALSE(bad.ok());
    CHECK(absl::StrContains(bad.status().message(), "not a network namespace"));
    CHECK(absl::StrContains(bad.status().message(), file));
    CHECK(cni::CodeOf(bad.status()) == 4);
  }
  SECTION("a namespace of another kind") {
    absl::StatusOr<Netns> bad = Netns::Open("/proc/self/ns/uts");
    REQUIRE_FALSE(bad.ok());
    CHECK(absl::StrContains(bad.status().message(), "not a network namespace"));
  }
  SECTION("a missing path") {
    absl::StatusOr<Netns> bad = Netns::Open("/run/netns/does-not-exist");
    REQUIRE_FALSE(bad.ok());
    CHECK(absl::IsNotFound(bad.status()));
    CHECK(cni::CodeOf(bad.status()) == 3);
    CHECK(absl::StrContains(bad.status().message(), "/run/netns/does-not-exist"));
  }
}

// Netns::Current and NetlinkSocket::Open learn the namespace from a socket
// (SIOCGSKNS), not from /proc/thread-self: a Netns::Run thread that looks up
// /proc/<pid>/task/<tid> makes the runtime's reaping of the plugin spin in the
// kernel (netns.cc). Here /proc is hidden from the thread (a tmpfs over it, in
// a mount namespace of its own that ends with it), so only the socket can answer.
TEST_CASE("Netns::Current and a netlink socket's namespace need no /proc", "[netns]") {
  NetnsFixture fx;
  Netns ns = Must(Netns::Open(fx.AddNetns()));
  bool proc_hidden = false, current_is_ns = false, socket_is_ns = false;
  std::string current_path;
  MustOk(ns.Run([&]() -> absl::Status {
    if (unshare(CLONE_NEWNS) != 0 || mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        mount("tmpfs", "/proc", "tmpfs", 0, nullptr) != 0) {
      return absl::InternalError(absl::StrCat("hiding /proc: ", std::strerror(errno)));
    }
    proc_hidden = access("/proc/thread-self/ns/net", F_OK) != 0;
    absl::StatusOr<Netns> current = Netns::Current();
    current_is_ns = current.ok() && Netns::Same(*current, ns);
    if (current.ok()) current_path = current->path();
    absl::StatusOr<NetlinkSocket> sock = NetlinkSocket::Open();
    socket_is_ns = sock.ok() && Netns::Same(sock->netns(), ns);
    return absl::OkStatus();
  }));
  CHECK(proc_hidden);
  CHECK(current_is_ns);
  CHECK(current_path == "/proc/thread-self/ns/net");  // what messages call it
  CHECK(socket_is_ns);
}

// Without CAP_NET_ADMIN over the namespace the kernel will not name a socket's
// namespace, and Current falls back to /proc/thread-self. A forked child (one
// thread, so it may enter a user namespace) loses the capability that way.
TEST_CASE("Netns::Current falls back to /proc without CAP_NET_ADMIN", "[netns]") {
  NetnsFixture fx;
  Netns here = Must(Netns::Current());
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    if (unshare(CLONE_NEWUSER) != 0) _exit(10);
    cni::UniqueFd sock(socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (Netns::OfSocket(sock.get(), "probe").ok()) _exit(11);  // the kernel refuses it
    absl::StatusOr<Netns> current = Netns::Current();
    if (!current.ok()) _exit(12);
    _exit(Netns::Same(*current, here) ? 0 : 13);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("veth pair with the peer created directly in a container namespace", "[netns]") {
  NetnsFixture fx;
  std::string path = fx.AddNetns("ctr");
  Netns ctr_ns = Must(Netns::Open(path));
  Pair p = MakePair(ctr_ns);

  CHECK(fx.Links() == std::vector<std::string>{"lo", "ve-host"});
  CHECK(fx.Links(path) == std::vector<std::string>{"lo", "ve-ctr"});
  CHECK(p.host_link.kind == "veth");
  CHECK(p.ctr_link.kind == "veth");
  // Each end knows its peer's ifindex (in the other namespace).
  CHECK(Must(VethPeerIndex(p.host, p.host_link)) == p.ctr_link.index);
  CHECK(Must(VethPeerIndex(p.ctr, p.ctr_link)) == p.host_link.index);
  CHECK(p.host_link.link_netnsid.has_value());

  SECTION("a taken name is AlreadyExists, with the kernel's words") {
    VethSpec spec;
    spec.name = "ve-host";
    spec.peer_name = "ve-other";
    spec.peer_netns = &ctr_ns;
    absl::Status st = CreateVeth(p.host, spec);
    CHECK(absl::IsAlreadyExists(st));
    CHECK(st.message() == "creating veth \"ve-host\" (peer \"ve-other\"): File exists");
  }
  SECTION("deleting one end removes both") {
    MustOk(DeleteLink(p.host, p.host_link));
    CHECK(fx.Links() == std::vector<std::string>{"lo"});
    CHECK(fx.Links(path) == std::vector<std::string>{"lo"});
    MustOk(DeleteLinkByNameIfExists(p.host, "ve-host"));  // already gone: fine
    absl::StatusOr<LinkInfo> missing = LinkByName(p.host, "ve-host");
    CHECK(absl::IsNotFound(missing.status()));
    CHECK(missing.status().message() == "looking up link \"ve-host\": No such device");
  }
  SECTION("peer MACs and MTU are set at creation") {
    NetlinkSocket host = Must(NetlinkSocket::Open());
    VethSpec spec;
    spec.name = "vm-a";
    spec.peer_name = "vm-b";
    spec.mtu = 1400;
    spec.mac = Must(MacAddress::Parse("02:00:00:00:00:0a"));
    spec.peer_mac = Must(MacAddress::Parse("02:00:00:00:00:0b"));
    MustOk(CreateVeth(host, spec));  // both ends here
    LinkInfo a = Must(LinkByName(host, "vm-a"));
    LinkInfo b = Must(LinkByName(host, "vm-b"));
    CHECK(a.mtu == 1400);
    CHECK(b.mtu == 1400);
    CHECK(a.mac.ToString() == "02:00:00:00:00:0a");
    CHECK(b.mac.ToString() == "02:00:00:00:00:0b");
    MustOk(DeleteLink(host, a));
  }
  MustOk(DeleteLinkByNameIfExists(p.host, "ve-host"));
  CHECK(fx.Links() == std::vector<std::string>{"lo"});
}

TEST_CASE("link changes: up/down, MTU, MAC, rename, alias, master", "[netns]") {
  NetnsFixture fx;
  Netns ctr_ns = Must(Netns::Open(fx.AddNetns()));
  Pair p = MakePair(ctr_ns);
  NetlinkSocket& s = p.ctr;
  LinkInfo l = p.ctr_link;

  MustOk(SetLinkMtu(s, l, 1280));
  MustOk(SetLinkMac(s, l, Must(MacAddress::Parse("0a:58:0a:00:00:05"))));
  MustOk(SetLinkAlias(s, l, "orig-name"));
  LinkInfo now = Must(LinkByIndex(s, l.index));
  CHECK(now.mtu == 1280);
  CHECK(now.mac.ToString() == "0a:58:0a:00:00:05");
  CHECK(now.alias == "orig-name");

  absl::Status bad_mtu = SetLinkMtu(s, l, 10);
  CHECK_FALSE(bad_mtu.ok());
  CHECK(absl::StartsWith(bad_mtu.message(), "setting MTU 10 on \"ve-ctr\": Invalid argument"));

  MustOk(RenameLink(s, l, "eth0"));
  CHECK(Must(LinkByName(s, "eth0")).index == l.index);
  l.name = "eth0";
  absl::Status taken = RenameLink(s, l, "lo");
  CHECK(absl::IsAlreadyExists(taken));
  CHECK(taken.message() == "renaming link \"eth0\" to \"lo\": File exists");
  MustOk(SetLinkUp(s, l));
  CHECK(Must(LinkByIndex(s, l.index)).up());
  MustOk(SetLinkDown(s, l));
  CHECK_FALSE(Must(LinkByIndex(s, l.index)).up());

  // Master / nomaster, with a bridge made by iproute2 (not by the code under test).
  REQUIRE(fx.Exec("", {"ip", "link", "add", "br-test", "type", "bridge"}).exit_code == 0);
  LinkInfo br = Must(LinkByName(p.host, "br-test"));
  CHECK(br.kind == "bridge");
  MustOk(SetLinkMaster(p.host, p.host_link, br.index));
  CHECK(Must(LinkByIndex(p.host, p.host_link.index)).master == br.index);
  MustOk(SetLinkNoMaster(p.host, p.host_link));
  CHECK(Must(LinkByIndex(p.host, p.host_link.index)).master == 0);

  // Bridges cannot change namespace; the kernel says so through extack.
  absl::Status immovable = MoveLinkToNetns(p.host, br, ctr_ns);
  CHECK_FALSE(immovable.ok());
  CHECK(absl::StrContains(immovable.message(), "moving link \"br-test\" to netns"));
  MustOk(DeleteLink(p.host, br));

  // Moving a link (one end of a second pair) to another namespace.
  VethSpec both_here;
  both_here.name = "mv-a";
  both_here.peer_name = "mv-b";
  MustOk(CreateVeth(p.host, both_here));
  MustOk(MoveLinkToNetns(p.host, Must(LinkByName(p.host, "mv-b")), ctr_ns));
  CHECK(Contains(fx.Links(ctr_ns.path()), "mv-b"));
  CHECK_FALSE(Contains(fx.Links(), "mv-b"));
  MustOk(DeleteLinkByNameIfExists(p.host, "mv-a"));

  bool found_ctr = false;
  for (const LinkInfo& li : Must(ListLinks(s))) found_ctr = found_ctr || li.name == "eth0";
  CHECK(found_ctr);
  MustOk(DeleteLink(p.host, p.host_link));
  CHECK(fx.Links() == std::vector<std::string>{"lo"});
}

TEST_CASE("addresses: add, list, delete, IPv4 and IPv6", "[netns]") {
  NetnsFixture fx;
  Netns ctr_ns = Must(Netns::Open(fx.AddNetns()));
  Pair p = MakePair(ctr_ns);
  NetlinkSocket& s = p.ctr;
  int idx = p.ctr_link.index;

  MustOk(AddAddress(s, idx, P("10.1.2.3/24")));
  AddressOptions nodad;
  nodad.flags = IFA_F_NODAD;
  MustOk(AddAddress(s, idx, P("fd00:1::3/64"), nodad));

  CHECK(HasAddress(s, idx, P("10.1.2.3/24")));
  CHECK(HasAddress(s, idx, P("fd00:1::3/64")));
  auto v6 = Must(ListAddresses(s, idx, Family::kV6));
  REQUIRE(v6.size() >= 1);
  for (const AddressInfo& a : v6) {
    if (a.prefix == P("fd00:1::3/64")) CHECK((a.flags & IFA_F_NODAD) != 0);
  }
  // Broadcast was filled in like upstream's netlink library does.
  cni::test::RunResult show = fx.Exec(ctr_ns.path(), {"ip", "-4", "addr", "show", "dev", "ve-ctr"});
  CHECK(absl::StrContains(show.out, "brd 10.1.2.255"));

  absl::Status dup = AddAddress(s, idx, P("10.1.2.3/24"));
  CHECK(absl::IsAlreadyExists(dup));
  CHECK(absl::StrContains(dup.message(), "adding address 10.1.2.3/24"));

  MustOk(DeleteAddress(s, idx, P("10.1.2.3/24")));
  CHECK_FALSE(HasAddress(s, idx, P("10.1.2.3/24")));
  CHECK(absl::IsNotFound(DeleteAddress(s, idx, P("10.1.2.3/24"))));
  MustOk(DeleteAddress(s, idx, P("fd00:1::3/64")));
  CHECK(Must(ListAddresses(s, idx, Family::kV6)).size() < v6.size());
}

TEST_CASE("routes: add, replace, delete, list, tables, multipath", "[netns]") {
  NetnsFixture fx;
  Netns ctr_ns = Must(Netns::Open(fx.AddNetns()));
  Pair p = MakePair(ctr_ns);
  NetlinkSocket& s = p.ctr;
  int idx = p.ctr_link.index;
  MustOk(SetLinkUp(s, p.ctr_link));
  MustOk(AddAddress(s, idx, P("10.1.0.2/24")));

  // The kernel's own subnet route ("proto kernel") can be deleted without
  // naming its protocol, and replaced by a host route + subnet via gw (ptp).
  REQUIRE(FindRoute(s, P("10.1.0.0/24")).has_value());
  CHECK(FindRoute(s, P("10.1.0.0/24"))->protocol == RTPROT_KERNEL);
  RouteSpec subnet;
  subnet.dst = P("10.1.0.0/24");
  subnet.ifindex = idx;
  MustOk(DeleteRoute(s, subnet));
  CHECK_FALSE(FindRoute(s, P("10.1.0.0/24")).has_value());

  RouteSpec gw_host;
  gw_host.dst = P("10.1.0.1/32");
  gw_host.ifindex = idx;
  gw_host.scope = RT_SCOPE_LINK;
  MustOk(AddRoute(s, gw_host));
  RouteSpec via;
  via.dst = P("10.1.0.0/24");
  via.gw = A("10.1.0.1");
  via.ifindex = idx;
  via.src = A("10.1.0.2");
  MustOk(AddRoute(s, via));
  auto got = FindRoute(s, P("10.1.0.0/24"));
  REQUIRE(got.has_value());
  CHECK(got->gw == A("10.1.0.1"));
  CHECK(got->ifindex == idx);
  CHECK(got->src == A("10.1.0.2"));
  CHECK(got->protocol == RTPROT_BOOT);
  CHECK(got->scope == RT_SCOPE_UNIVERSE);
  CHECK(FindRoute(s, P("10.1.0.1/32"))->scope == RT_SCOPE_LINK);

  absl::Status dup = AddRoute(s, via);
  CHECK(absl::IsAlreadyExists(dup));
  CHECK(absl::StartsWith(dup.message(), "adding route 10.1.0.0/24 via 10.1.0.1"));

  // Default route, metric, then replace it with another metric-equal route.
  RouteSpec def;
  def.dst = P("0.0.0.0/0");
  def.gw = A("10.1.0.1");
  def.ifindex = idx;
  def.priority = 100;
  def.mtu = 1300;
  MustOk(AddRoute(s, def));
  got = FindRoute(s, P("0.0.0.0/0"));
  REQUIRE(got.has_value());
  CHECK(got->priority == 100u);
  CHECK(got->mtu == 1300);
  def.gw = A("10.1.0.254");
  def.mtu.reset();
  RouteSpec gw2_host = gw_host;
  gw2_host.dst = P("10.1.0.254/32");
  MustOk(AddRoute(s, gw2_host));
  MustOk(ReplaceRoute(s, def));
  got = FindRoute(s, P("0.0.0.0/0"));
  REQUIRE(got.has_value());
  CHECK(got->gw == A("10.1.0.254"));

  // Another table.
  RouteSpec tabled;
  tabled.dst = P("192.168.50.0/24");
  tabled.gw = A("10.1.0.1");
  tabled.ifindex = idx;
  tabled.table = 100;
  MustOk(AddRoute(s, tabled));
  CHECK_FALSE(FindRoute(s, tabled.dst).has_value());
  CHECK(FindRoute(s, tabled.dst, 100).has_value());
  MustOk(DeleteRoute(s, tabled));
  CHECK_FALSE(FindRoute(s, tabled.dst, 100).has_value());

  // Multipath.
  RouteSpec ecmp;
  ecmp.dst = P("172.16.0.0/16");
  ecmp.multipath = {Nexthop{A("10.1.0.1"), idx, 1}, Nexthop{A("10.1.0.254"), idx, 3}};
  MustOk(AddRoute(s, ecmp));
  got = FindRoute(s, ecmp.dst);
  REQUIRE(got.has_value());
  REQUIRE(got->multipath.size() == 2);
  CHECK(got->multipath[0].gw == A("10.1.0.1"));
  CHECK(got->multipath[1].weight == 3);

  // IPv6 device route, and delete semantics.
  MustOk(AddAddress(s, idx, P("fd00:2::2/64"), AddressOptions{IFA_F_NODAD, false}));
  RouteSpec v6;
  v6.dst = P("fd00:99::/64");
  v6.gw = A("fd00:2::1");
  v6.ifindex = idx;
  MustOk(AddRoute(s, v6));
  RouteFilter f6;
  f6.family = Family::kV6;
  bool found = false;
  for (const RouteSpec& r : Must(ListRoutes(s, f6))) found = found || r.dst == v6.dst;
  CHECK(found);
  MustOk(DeleteRoute(s, v6));
  absl::Status missing = DeleteRoute(s, v6);
  CHECK(absl::IsNotFound(missing));
  MustOk(DeleteRoute(s, ecmp));
  CHECK(absl::IsNotFound(DeleteRoute(s, ecmp)));
}

// Two routes that differ only by their device (a default route through each
// of two interfaces) are two routes: a listing keyed like libnl's cache
// (destination, table, metric) kept only one of them.
TEST_CASE("routes: one destination through two links lists both, PathsThrough picks a link's", "[netns]") {
  NetnsFixture fx;
  std::string path = fx.AddNetns();
  Netns ns = Must(Netns::Open(path));
  cni::test::MustExec(fx, path, {"ip", "link", "add", "la", "type", "veth", "peer", "name", "lb"});
  cni::test::MustExecLines(fx, path,
                           "ip link set la up\nip link set lb up\n"
                           "ip addr add 10.2.0.2/24 dev la\nip addr add 10.3.0.2/24 dev lb\n"
                           "ip route add default via 10.2.0.1 dev la\n"
                           "ip route append default via 10.3.0.1 dev lb\n"
                           "ip -6 addr add fd00:2::2/64 dev la nodad\nip -6 addr add fd00:3::2/64 dev lb nodad\n"
                           "ip -6 route add default via fd00:2::1 dev la\n"
                           "ip -6 route append default via fd00:3::1 dev lb");
  NetlinkSocket s = Must(NetlinkSocket::OpenIn(ns));
  int la = Must(LinkByName(s, "la")).index;
  int lb = Must(LinkByName(s, "lb")).index;
  std::vector<RouteSpec> main = Must(ListRoutes(s));
  int v4_defaults = 0;
  for (const RouteSpec& r : main) v4_defaults += r.dst == P("0.0.0.0/0") ? 1 : 0;
  CHECK(v4_defaults == 2);

  // IPv6: one route with a path through each link; PathsThrough splits it.
  std::vector<RouteSpec> via_la = PathsThrough(main, la);
  std::vector<IpAddress> gws;
  for (const RouteSpec& r : via_la) {
    CHECK(r.ifindex == la);
    CHECK(r.multipath.empty());
    if (r.dst.len() == 0 && r.gw) gws.push_back(*r.gw);
  }
  CHECK(std::count(gws.begin(), gws.end(), A("10.2.0.1")) == 1);
  CHECK(std::count(gws.begin(), gws.end(), A("fd00:2::1")) == 1);
  CHECK(std::count(gws.begin(), gws.end(), A("10.3.0.1")) == 0);
  CHECK(std::count(gws.begin(), gws.end(), A("fd00:3::1")) == 0);
  for (const RouteSpec& r : PathsThrough(main, lb)) CHECK(r.ifindex == lb);
  fx.DelNetns(path);
}

// Every field of every route, in every table, against `ip -N -d -j route
// show table all` (numbers, not names): tables above 255, metrics, preferred
// source, MTU/advmss, a blackhole, onlink, weighted IPv4 multipath, the IPv6
// multipath default route, local and multicast routes.
RouteSpec RouteAsShown(const cni::Json& r, bool v6, const std::map<std::string, int>& index_of) {
  RouteSpec want;
  std::string dst = r["dst"].get<std::string>();
  if (dst == "default") dst = v6 ? "::/0" : "0.0.0.0/0";
  if (dst.find('/') == std::string::npos) dst += v6 ? "/128" : "/32";
  want.dst = P(dst.c_str());
  auto gateway = [](const cni::Json& j) {
    return j.contains("gateway") ? std::optional<IpAddress>(A(j["gateway"].get<std::string>().c_str()))
                                 : std::nullopt;
  };
  auto dev = [&](const cni::Json& j) { return j.contains("dev") ? index_of.at(j["dev"].get<std::string>()) : 0; };
  if (r.contains("nexthops")) {
    for (const cni::Json& nh : r["nexthops"]) want.multipath.push_back({gateway(nh), dev(nh), nh["weight"].get<int>()});
  } else {
    want.gw = gateway(r);
    want.ifindex = dev(r);
    want.onlink = std::find(r["flags"].begin(), r["flags"].end(), "onlink") != r["flags"].end();
  }
  want.scope = std::stoi(r["scope"].get<std::string>());
  want.table = std::stoi(r["table"].get<std::string>());
  want.priority = r.value("metric", 0u);
  want.protocol = std::stoi(r["protocol"].get<std::string>());
  want.type = std::stoi(r["type"].get<std::string>());
  if (r.contains("prefsrc")) want.src = A(r["prefsrc"].get<std::string>().c_str());
  if (r.contains("metrics")) {
    const cni::Json& m = r["metrics"][0];
    if (m.contains("mtu")) want.mtu = m["mtu"].get<int>();
    if (m.contains("advmss")) want.advmss = m["advmss"].get<int>();
  }
  return want;
}

TEST_CASE("ListRoutes reads each route as ip -d route shows it", "[netns]") {
  NetnsFixture fx;
  std::string path = fx.AddNetns();
  cni::test::MustExecLines(fx, path,
                "ip link add la type veth peer name lb\nip link set la up\nip link set lb up\n"
                "ip addr add 10.2.0.2/24 dev la\nip addr add 10.3.0.2/24 dev lb\n"
                "ip route add 10.9.0.0/16 via 10.2.0.1 dev la metric 50 mtu 1400 advmss 1300 src 10.2.0.2 "
                "table 1000 proto static\n"
                "ip route add 10.8.0.0/16 nexthop via 10.2.0.1 dev la weight 1 nexthop via 10.3.0.1 dev lb weight 4\n"
                "ip route add blackhole 10.7.0.0/16 table 7\n"
                "ip route add 192.168.9.9 via 172.16.0.1 dev la onlink\n"
                "ip route add default via 10.2.0.1 dev la\n"
                "ip -6 addr add fd00:2::2/64 dev la nodad\nip -6 addr add fd00:3::2/64 dev lb nodad\n"
                "ip -6 route add default via fd00:2::1 dev la\nip -6 route append default via fd00:3::1 dev lb\n"
                "ip -6 route add fd00:9::/64 via fd00:2::1 dev la metric 7 table 300");
  std::map<std::string, int> index_of;
  for (const cni::Json& l : cni::Json::parse(cni::test::MustExec(fx, path, {"ip", "-j", "link", "show"}))) {
    index_of[l["ifname"].get<std::string>()] = l["ifindex"].get<int>();
  }
  NetlinkSocket s = Must(NetlinkSocket::OpenIn(Must(Netns::Open(path))));
  const std::vector<RouteSpec> listed = Must(ListRoutes(s, RouteFilter{.table = std::nullopt}));
  size_t shown = 0;
  for (bool v6 : {false, true}) {
    for (const cni::Json& r : cni::Json::parse(cni::test::MustExec(
             fx, path, {"ip", v6 ? "-6" : "-4", "-N", "-d", "-j", "route", "show", "table", "all"}))) {
      ++shown;
      RouteSpec want = RouteAsShown(r, v6, index_of);
      INFO(r.dump() << " -> " << want.ToString());
      CHECK(std::count(listed.begin(), listed.end(), want) == 1);
    }
  }
  CHECK(listed.size() == shown);
  // The filters: one table, one family, one link (a multipath route through it counts).
  RouteFilter in_1000{.table = 1000};
  CHECK(Must(ListRoutes(s, in_1000)).size() == 1);
  RouteFilter v6_only{.family = Family::kV6};
  for (const RouteSpec& r : Must(ListRoutes(s, v6_only))) CHECK(r.dst.family() == Family::kV6);
  RouteFilter through_lb{.ifindex = index_of.at("lb")};
  std::vector<RouteSpec> via_lb = Must(ListRoutes(s, through_lb));
  CHECK(std::any_of(via_lb.begin(), via_lb.end(), [](const RouteSpec& r) { return r.dst == P("10.8.0.0/16"); }));
  CHECK(std::none_of(via_lb.begin(), via_lb.end(), [](const RouteSpec& r) { return r.dst == P("10.9.0.0/16"); }));
  fx.DelNetns(path);
}

TEST_CASE("rules: add, list, delete, IPv4 and IPv6, tables above 255", "[netns]") {
  NetnsFixture fx;
  std::string path = fx.AddNetns();
  NetlinkSocket s = Must(NetlinkSocket::OpenIn(Must(Netns::Open(path))));
  RuleSpec v4{.family = Family::kV4, .src = P("10.2.0.2/32"), .table = 100};
  RuleSpec v6{.family = Family::kV6, .src = P("fd00:2::2/128"), .table = 300};
  MustOk(AddRule(s, v4));
  MustOk(AddRule(s, v6));
  RuleSpec pinned{.family = Family::kV4, .dst = P("192.168.0.0/16"), .table = 7, .priority = 1000};
  MustOk(AddRule(s, pinned));
  absl::Status dup = AddRule(s, pinned);
  CHECK(absl::IsAlreadyExists(dup));
  CHECK(absl::StrContains(dup.message(), "adding rule \"from all to 192.168.0.0/16 lookup 7 pref 1000\""));

  std::string text = cni::test::MustExec(fx, path, {"ip", "rule"});
  INFO(text);
  CHECK(absl::StrContains(text, "from 10.2.0.2 lookup 100"));
  CHECK(absl::StrContains(text, "1000:\tfrom all to 192.168.0.0/16 lookup 7"));
  CHECK(absl::StrContains(cni::test::MustExec(fx, path, {"ip", "-6", "rule"}), "from fd00:2::2 lookup 300"));

  std::vector<RuleSpec> rules = Must(ListRules(s));
  auto find = [&](const RuleSpec& want) -> std::optional<RuleSpec> {
    for (const RuleSpec& r : rules) {
      if (r.family == want.family && r.src == want.src && r.dst == want.dst && r.table == want.table) return r;
    }
    return std::nullopt;
  };
  REQUIRE(find(v4).has_value());
  CHECK(find(v4)->priority.has_value());
  CHECK(find(v4)->protocol == 0);
  REQUIRE(find(v6).has_value());
  REQUIRE(find(pinned).has_value());
  CHECK(find(pinned)->priority == 1000u);
  // The kernel's own: main (254) and local (255) lookups.
  CHECK(find(RuleSpec{.family = Family::kV4, .table = 254}).has_value());
  for (const RuleSpec& r : Must(ListRules(s, Family::kV6))) CHECK(r.family == Family::kV6);

  MustOk(DeleteRule(s, v4));
  CHECK(absl::IsNotFound(DeleteRule(s, v4)));
  MustOk(DeleteRule(s, *find(v6)));
  MustOk(DeleteRule(s, pinned));
  rules = Must(ListRules(s));
  CHECK_FALSE(find(v4).has_value());
  CHECK_FALSE(find(v6).has_value());
  CHECK_FALSE(find(pinned).has_value());
  fx.DelNetns(path);
}

TEST_CASE("sysctls are read and written inside the namespace only", "[netns]") {
  NetnsFixture fx;
  Netns ctr_ns = Must(Netns::Open(fx.AddNetns()));
  Pair p = MakePair(ctr_ns);

  std::string host_before = Must(ReadSysctlHere("net/ipv4/ip_forward"));
  MustOk(WriteSysctl(ctr_ns, "net.ipv4.ip_forward", "1"));
  CHECK(Must(ReadSysctl(ctr_ns, "net/ipv4/ip_forward")) == "1");
  CHECK(Must(ReadSysctlHere("net/ipv4/ip_forward")) == host_before);

  // Per-interface keys exist only where the interface is.
  MustOk(WriteSysctl(ctr_ns, "net/ipv6/conf/ve-ctr/disable_ipv6", "1"));
  CHECK(Must(ReadSysctl(ctr_ns, "net/ipv6/conf/ve-ctr/disable_ipv6")) == "1");
  absl::StatusOr<std::string> absent = ReadSysctlHere("net/ipv6/conf/ve-ctr/disable_ipv6");
  CHECK(absl::IsNotFound(absent.status()));
  CHECK(absl::StrContains(absent.status().message(), "net/ipv6/conf/ve-ctr/disable_ipv6"));

  // Keys outside net/ or with ".." are refused before touching anything.
  absl::StatusOr<std::string> escape = ReadSysctl(ctr_ns, "net/../kernel/hostname");
  CHECK(cni::CodeOf(escape.status()) == 7);
  CHECK(cni::CodeOf(WriteSysctl(ctr_ns, "kernel.hostname", "x")) == 7);
}

TEST_CASE("SetupVeth + ConfigureInterface with a dual-stack result, then ping", "[netns]") {
  NetnsFixture fx;
  std::string path = fx.AddNetns("pod");
  Netns ctr_ns = Must(Netns::Open(path));
  Netns host_ns = Must(Netns::Current());

  MacAddress mac = Must(MacAddress::Parse("0a:58:0a:0a:00:02"));
  VethPair pair = Must(SetupVeth(ctr_ns, "eth0", 1400, mac, host_ns));
  CHECK(absl::StartsWith(pair.host.name, "veth"));
  CHECK(pair.host.name.size() == 12);
  CHECK(pair.container.name == "eth0");
  CHECK(pair.container.mac == "0a:58:0a:0a:00:02");
  CHECK(pair.container.sandbox == path);
  CHECK(fx.Links() == std::vector<std::string>{"lo", pair.host.name});
  CHECK(fx.Links(path) == std::vector<std::string>{"eth0", "lo"});

  // A second SetupVeth with the same container name is refused up front.
  absl::StatusOr<VethPair> again = SetupVeth(ctr_ns, "eth0", 0, std::nullopt, host_ns);
  CHECK(absl::IsAlreadyExists(again.status()));
  CHECK(again.status().message() == "container veth name \"eth0\" already exists");

  // Host side: the gateways.
  NetlinkSocket host = Must(NetlinkSocket::Open());
  LinkInfo hv = Must(LinkByName(host, pair.host.name));
  CHECK(hv.up());
  CHECK(hv.mtu == 1400);
  CHECK(hv.mac.ToString() == pair.host.mac);
  MustOk(AddAddress(host, hv.index, P("10.10.0.1/24")));
  MustOk(AddAddress(host, hv.index, P("fd00:10::1/64"), AddressOptions{IFA_F_NODAD, false}));

  // Container side: start with IPv6 switched off, as some sandboxes do (on
  // lo too).
  MustOk(WriteSysctl(ctr_ns, "net/ipv6/conf/eth0/disable_ipv6", "1"));
  MustOk(WriteSysctl(ctr_ns, "net/ipv6/conf/lo/disable_ipv6", "1"));

  cni::Result result;
  result.cni_version = "1.1.0";
  result.interfaces = {cni::Interface{.name = pair.host.name, .mac = pair.host.mac},
                       cni::Interface{.name = pair.container.name, .mac = pair.container.mac,
                                 .sandbox = pair.container.sandbox}};
  result.ips = {
      cni::IpConfig{1, P("10.10.0.2/24"), A("10.10.0.1")},
      cni::IpConfig{1, P("fd00:10::2/64"), A("fd00:10::1")},
      cni::IpConfig{0, P("10.99.0.1/32"), std::nullopt},  // for the host link: skipped
  };
  cni::Route def4;
  def4.dst = P("0.0.0.0/0");
  cni::Route def6;
  def6.dst = P("::/0");
  cni::Route extra;
  extra.dst = P("10.20.0.0/16");
  extra.gw = A("10.10.0.254");
  extra.priority = 50;
  result.routes = {def4, def6, extra};

  NetlinkSocket ctr = Must(NetlinkSocket::OpenIn(ctr_ns));
  MustOk(ConfigureInterface(ctr, "eth0", result));

  LinkInfo eth0 = Must(LinkByName(ctr, "eth0"));
  CHECK(eth0.up());
  CHECK(HasAddress(ctr, eth0.index, P("10.10.0.2/24")));
  CHECK(HasAddress(ctr, eth0.index, P("fd00:10::2/64")));
  CHECK_FALSE(HasAddress(ctr, eth0.index, P("10.99.0.1/32")));
  CHECK(Must(ReadSysctl(ctr_ns, "net/ipv6/conf/eth0/disable_ipv6")) == "0");
  CHECK(Must(ReadSysctl(ctr_ns, "net/ipv6/conf/lo/disable_ipv6")) == "0");
  CHECK(Must(ReadSysctl(ctr_ns, "net/ipv6/conf/eth0/keep_addr_on_down")) == "1");
  auto d4 = FindRoute(ctr, P("0.0.0.0/0"));
  REQUIRE(d4.has_value());
  CHECK(d4->gw == A("10.10.0.1"));
  CHECK(d4->ifindex == eth0.index);
  auto d6 = FindRoute(ctr, P("::/0"));
  REQUIRE(d6.has_value());
  CHECK(d6->gw == A("fd00:10::1"));
  auto e = FindRoute(ctr, P("10.20.0.0/16"));
  REQUIRE(e.has_value());
  CHECK(e->gw == A("10.10.0.254"));
  CHECK(e->priority == 50u);

  // Real traffic both ways, both families.
  CHECK(cni::test::Ping("", A("10.10.0.2")));
  CHECK(cni::test::Ping("", A("fd00:10::2")));
  CHECK(cni::test::Ping(path, A("10.10.0.1")));
  CHECK(cni::test::Ping(path, A("fd00:10::1")));
  // And the check can fail: nobody answers for an unused address.
  CHECK_FALSE(cni::test::Ping("", A("10.10.0.77"), 500));

  // Applying the same result twice reports the duplicate address, named.
  absl::Status twice = ConfigureInterface(ctr, "eth0", result);
  CHECK(absl::IsAlreadyExists(twice));
  CHECK(absl::StartsWith(twice.message(), "configuring \"eth0\": adding address 10.10.0.2/24"));

  // Cleanup: deleting the container end takes the host end with it.
  MustOk(DeleteLinkByNameIfExists(ctr, "eth0"));
  fx.DelNetns(path);
  CHECK(fx.Leftovers().empty());
}

TEST_CASE("ConfigureInterface waits for DAD only when asked", "[netns]") {
  NetnsFixture fx;
  std::string path = fx.AddNetns();
  Netns ctr_ns = Must(Netns::Open(path));
  Netns host_ns = Must(Netns::Current());
  VethPair pair = Must(SetupVeth(ctr_ns, "eth0", 0, std::nullopt, host_ns));

  cni::Result result;
  result.interfaces = {cni::Interface{.name = pair.host.name, .mac = pair.host.mac},
                       cni::Interface{.name = pair.container.name, .mac = pair.container.mac,
                                 .sandbox = pair.container.sandbox}};
  result.ips = {cni::IpConfig{1, P("fd00:20::2/64"), std::nullopt}};
  NetlinkSocket ctr = Must(NetlinkSocket::OpenIn(ctr_ns));
  ConfigureOptions opts;
  opts.enable_dad = true;
  MustOk(ConfigureInterface(ctr, "eth0", result, opts));
  LinkInfo eth0 = Must(LinkByName(ctr, "eth0"));
  for (const AddressInfo& a : Must(ListAddresses(ctr, eth0.index, Family::kV6))) {
    if (a.prefix == P("fd00:20::2/64")) {
      CHECK((a.flags & IFA_F_TENTATIVE) == 0);
      CHECK((a.flags & IFA_F_NODAD) == 0);
    }
  }

  SECTION("an out-of-range interface index is an error") {
    cni::Result bad = result;
    bad.ips = {cni::IpConfig{7, P("fd00:20::3/64"), std::nullopt}};
    absl::Status st = ConfigureInterface(ctr, "eth0", bad);
    CHECK_FALSE(st.ok());
    CHECK(absl::StrContains(st.message(), "interface index 7 is out of range"));
  }
  SECTION("a missing interface is NotFound, named") {
    absl::Status st = ConfigureInterface(ctr, "eth9", result);
    CHECK(absl::IsNotFound(st));
    CHECK(st.message() == "configuring \"eth9\": looking up link \"eth9\": No such device");
  }
}

TEST_CASE("addresses: a link's list holds only its own, the whole list every link's", "[netns]") {
  NetnsFixture fx;
  Netns ctr_ns = Must(Netns::Open(fx.AddNetns()));
  Pair p = MakePair(ctr_ns);
  MustOk(AddAddress(p.ctr, p.ctr_link.index, P("10.1.2.3/24")));
  LinkInfo lo = Must(LinkByName(p.ctr, "lo"));
  MustOk(SetLinkUp(p.ctr, lo));
  auto has = [](const std::vector<AddressInfo>& list, const IpPrefix& prefix) {
    return std::any_of(list.begin(), list.end(), [&](const AddressInfo& a) { return a.prefix == prefix; });
  };
  std::vector<AddressInfo> own = Must(ListAddresses(p.ctr, p.ctr_link.index));
  CHECK(has(own, P("10.1.2.3/24")));
  CHECK_FALSE(has(own, P("127.0.0.1/8")));
  for (const AddressInfo& a : own) CHECK(a.ifindex == p.ctr_link.index);
  std::vector<AddressInfo> of_lo = Must(ListAddresses(p.ctr, lo.index, Family::kV4));
  REQUIRE(of_lo.size() == 1);
  CHECK(of_lo[0].prefix == P("127.0.0.1/8"));
  CHECK(of_lo[0].scope == RT_SCOPE_HOST);
  std::vector<AddressInfo> all = Must(ListAddresses(p.ctr, 0));
  CHECK(has(all, P("10.1.2.3/24")));
  CHECK(has(all, P("127.0.0.1/8")));
  CHECK(has(all, P("::1/128")));
  // The socket still answers unfiltered requests as before (strict checking
  // is switched on only for the filtered dump).
  CHECK(Must(ListLinks(p.ctr)).size() == 2);
}

TEST_CASE("bridge ports: the state from one GET agrees with the AF_BRIDGE dump", "[netns]") {
  NetnsFixture fx;
  Netns ctr_ns = Must(Netns::Open(fx.AddNetns()));
  Pair p = MakePair(ctr_ns);
  BridgeSpec spec;
  spec.name = "br-test";
  LinkInfo br = Must(EnsureBridge(p.host, spec));
  MustOk(SetLinkUp(p.host, br));
  CHECK(absl::IsNotFound(GetBridgePortState(p.host, p.host_link).status()));
  MustOk(SetLinkMaster(p.host, p.host_link, br.index));
  MustOk(SetBridgePortFlags(p.host, p.host_link, {.hairpin = true, .isolated = true}));
  BridgePortInfo dumped = Must(GetBridgePort(p.host, p.host_link));
  BridgePortInfo got = Must(GetBridgePortState(p.host, p.host_link));
  CHECK(got.index == p.host_link.index);
  CHECK(got.master == br.index);
  CHECK(got.master == dumped.master);
  CHECK(got.state == dumped.state);
  CHECK(got.hairpin);
  CHECK(got.isolated);
  CHECK(got.hairpin == dumped.hairpin);
  CHECK(got.isolated == dumped.isolated);
  CHECK(got.learning == dumped.learning);
  CHECK(got.vlans.empty());
  CHECK(absl::IsNotFound(GetBridgePortState(p.host, br).status()));
  MustOk(DeleteLink(p.host, br));
}

TEST_CASE("qdiscs: one GET answers for the root and the ingress qdisc, built-in or not", "[netns]") {
  NetnsFixture fx;
  Netns ctr_ns = Must(Netns::Open(fx.AddNetns()));
  Pair p = MakePair(ctr_ns);
  const int idx = p.host_link.index;
  // A veth's own root qdisc (noqueue) is built in: the kernel does not show it.
  CHECK_FALSE(Must(GetQdisc(p.host, idx, kTcRoot)).has_value());
  CHECK_FALSE(Must(GetQdisc(p.host, idx, kTcIngress)).has_value());
  const TbfParams tbf{.rate = 1250000, .limit = 80000, .buffer = 50000};
  MustOk(AddTbfQdisc(p.host, idx, TcHandle(1, 0), tbf));
  MustOk(AddIngressQdisc(p.host, idx));
  std::optional<QdiscInfo> root = Must(GetQdisc(p.host, idx, kTcRoot));
  REQUIRE(root.has_value());
  CHECK(root->kind == "tbf");
  CHECK(root->handle == TcHandle(1, 0));
  REQUIRE(root->tbf.has_value());
  CHECK(*root->tbf == tbf);
  std::optional<QdiscInfo> ingress = Must(GetQdisc(p.host, idx, kTcIngress));
  REQUIRE(ingress.has_value());
  CHECK(ingress->kind == "ingress");
  // The same as the dump says.
  std::vector<QdiscInfo> listed = Must(ListQdiscs(p.host, idx));
  CHECK(listed.size() == 2);
  MustOk(DeleteQdisc(p.host, idx, kTcIngress));
  CHECK_FALSE(Must(GetQdisc(p.host, idx, kTcIngress)).has_value());
  // The socket still works after answers without a reply.
  CHECK(Must(GetQdisc(p.host, idx, kTcRoot)).has_value());
}

TEST_CASE("routes: one lookup names the interface the kernel would send through", "[netns]") {
  NetnsFixture fx;
  Netns ctr_ns = Must(Netns::Open(fx.AddNetns()));
  Pair p = MakePair(ctr_ns);
  MustOk(SetLinkUp(p.host, p.host_link));
  MustOk(SetLinkUp(p.ctr, p.ctr_link));
  MustOk(AddAddress(p.host, p.host_link.index, P("10.77.0.1/16")));
  MustOk(AddAddress(p.host, p.host_link.index, P("fd00:77::1/64"), AddressOptions{IFA_F_NODAD, false}));
  LinkInfo lo = Must(LinkByName(p.host, "lo"));
  MustOk(SetLinkUp(p.host, lo));
  // A more specific route through another link wins, as in the kernel's lookup.
  MustOk(AddRoute(p.host, RouteSpec{.dst = P("10.77.5.0/24"), .ifindex = lo.index}));
  CHECK(Must(RouteOutputInterface(p.host, A("10.77.9.9"))) == p.host_link.index);
  CHECK(Must(RouteOutputInterface(p.host, A("10.77.5.9"))) == lo.index);
  CHECK(Must(RouteOutputInterface(p.host, A("fd00:77::5"))) == p.host_link.index);
  // No route (the private namespace has no default): the kernel's errno.
  absl::StatusOr<int> none = RouteOutputInterface(p.host, A("192.0.2.1"));
  REQUIRE_FALSE(none.ok());
  CHECK(cni::ErrnoOf(none.status()) == ENETUNREACH);
  // The socket still answers afterwards.
  CHECK(Must(RouteOutputInterface(p.host, A("10.77.0.2"))) == p.host_link.index);
}

TEST_CASE("devconf: IPv4 and IPv6 settings and forwarding through rtnetlink agree with /proc/sys", "[netns]") {
  NetnsFixture fx;
  Netns ctr_ns = Must(Netns::Open(fx.AddNetns()));
  Pair p = MakePair(ctr_ns);
  auto sysctl = [&ctr_ns](const std::string& key) { return Must(ReadSysctl(ctr_ns, key)); };
  const std::string conf = "net/ipv4/conf/ve-ctr/";
  REQUIRE(sysctl(conf + "arp_notify") == "0");
  REQUIRE(sysctl(conf + "route_localnet") == "0");
  MustOk(SetIpv4DevConf(p.ctr, p.ctr_link.index, IPV4_DEVCONF_ARP_NOTIFY, 1));
  MustOk(SetIpv4DevConf(p.ctr, p.ctr_link.index, IPV4_DEVCONF_ROUTE_LOCALNET, 1));
  CHECK(sysctl(conf + "arp_notify") == "1");
  CHECK(sysctl(conf + "route_localnet") == "1");
  // Only that interface: the host end keeps its defaults.
  CHECK(Must(ReadSysctlHere("net/ipv4/conf/ve-host/arp_notify")) == "0");
  MustOk(SetIpv4DevConf(p.ctr, p.ctr_link.index, IPV4_DEVCONF_ARP_NOTIFY, 0));
  CHECK(sysctl(conf + "arp_notify") == "0");
  // Read back from the link, and what /proc/sys wrote too.
  CHECK(Must(Ipv4DevConf(p.ctr, p.ctr_link.index, IPV4_DEVCONF_ARP_NOTIFY)) == 0);
  CHECK(Must(Ipv4DevConf(p.ctr, p.ctr_link.index, IPV4_DEVCONF_ROUTE_LOCALNET)) == 1);
  MustOk(WriteSysctl(ctr_ns, conf + "route_localnet", "0"));
  MustOk(WriteSysctl(ctr_ns, conf + "rp_filter", "2"));
  CHECK(Must(Ipv4DevConf(p.ctr, p.ctr_link.index, IPV4_DEVCONF_ROUTE_LOCALNET)) == 0);
  CHECK(Must(Ipv4DevConf(p.ctr, p.ctr_link.index, IPV4_DEVCONF_RP_FILTER)) == 2);
  CHECK(absl::IsNotFound(Ipv4DevConf(p.ctr, p.ctr_link.index, 4096).status()));
  // A setting id the kernel does not have is refused.
  CHECK_FALSE(SetIpv4DevConf(p.ctr, p.ctr_link.index, 4096, 1).ok());

  // IPv6 settings are read from the link (and written through /proc/sys).
  const std::string conf6 = "net/ipv6/conf/ve-ctr/";
  for (const std::string value : {"0", "2", "1"}) {
    MustOk(WriteSysctl(ctr_ns, conf6 + "accept_ra", value));
    CHECK(Must(Ipv6DevConf(p.ctr, p.ctr_link.index, DEVCONF_ACCEPT_RA)) == std::stoi(value));
  }
  MustOk(WriteSysctl(ctr_ns, conf6 + "accept_dad", "0"));
  CHECK(Must(Ipv6DevConf(p.ctr, p.ctr_link.index, DEVCONF_ACCEPT_DAD)) == 0);
  CHECK(Must(Ipv6DevConf(p.ctr, p.ctr_link.index, DEVCONF_ACCEPT_RA)) == 1);  // the other one kept
  // Several from one read agree with one at a time.
  Ipv6DevConfs confs = Must(ReadIpv6DevConfs(p.ctr, p.ctr_link.index));
  CHECK(Must(confs.Get(DEVCONF_ACCEPT_DAD)) == 0);
  CHECK(Must(confs.Get(DEVCONF_ACCEPT_RA)) == 1);
  CHECK(absl::IsNotFound(confs.Get(4096).status()));
  // Past the kernel's settings, or on an interface without IPv6 (an MTU
  // below IPv6's 1280 takes it away): NotFound.
  CHECK(absl::IsNotFound(Ipv6DevConf(p.ctr, p.ctr_link.index, 4096).status()));
  MustOk(SetLinkMtu(p.ctr, p.ctr_link, 1200));
  CHECK(absl::IsNotFound(Ipv6DevConf(p.ctr, p.ctr_link.index, DEVCONF_ACCEPT_RA).status()));
  MustOk(SetLinkMtu(p.ctr, p.ctr_link, 1500));

  // Forwarding, read and turned on, in the container's namespace (a fresh
  // one starts with both families off).
  for (Family f : {Family::kV4, Family::kV6}) {
    const std::string key = f == Family::kV4 ? "net/ipv4/ip_forward" : "net/ipv6/conf/all/forwarding";
    REQUIRE(sysctl(key) == "0");
    CHECK_FALSE(Must(ForwardingEnabled(p.ctr, f)));
    MustOk(ctr_ns.Run([&] { return EnsureForwarding(p.ctr, f); }));
    CHECK(sysctl(key) == "1");
    CHECK(Must(ForwardingEnabled(p.ctr, f)));
    MustOk(ctr_ns.Run([&] { return EnsureForwarding(p.ctr, f); }));  // already on: no write
    CHECK(sysctl(key) == "1");
  }
}

// LinkByName and ListLinks read every LinkInfo field from the kernel's
// message themselves; `ip -d link` (iproute2's own reading) is the oracle,
// over links of every shape the plugins meet: a bridge with an alias, a
// transmit queue length and an MTU of its own, an enslaved veth, a
// promiscuous one, a macvlan on it, a vxlan, a tap, lo, and a veth whose
// peer lives in another namespace.
TEST_CASE("LinkByName and ListLinks read each link as ip -d link shows it", "[netns]") {
  NetnsFixture fx;
  const std::string other = fx.AddNetns();
  for (const std::vector<std::string>& cmd : std::vector<std::vector<std::string>>{
           {"ip", "link", "add", "lbr", "mtu", "1400", "txqueuelen", "321", "type", "bridge"},
           {"ip", "link", "set", "lbr", "alias", "an alias, with spaces", "up"},
           {"ip", "link", "add", "lv0", "type", "veth", "peer", "name", "lv1"},
           {"ip", "link", "set", "lv0", "master", "lbr", "up"},
           {"ip", "link", "set", "lv1", "promisc", "on"},
           {"ip", "link", "add", "lmv", "link", "lv1", "type", "macvlan", "mode", "bridge"},
           {"ip", "link", "add", "lvx", "type", "vxlan", "id", "42", "dstport", "4789"},
           {"ip", "tuntap", "add", "ltap", "mode", "tap"},
           {"ip", "link", "add", "lout", "type", "veth", "peer", "name", "lin", "netns", other}}) {
    MustExec(fx, "", cmd);
  }
  cni::Json shown = cni::Json::parse(MustExec(fx, "", {"ip", "-j", "-d", "link", "show"}));
  std::map<std::string, int> index_of;
  for (const cni::Json& l : shown) index_of[l["ifname"].get<std::string>()] = l["ifindex"].get<int>();

  NetlinkSocket sock = Must(NetlinkSocket::Open());
  std::vector<LinkInfo> listed = Must(ListLinks(sock));
  REQUIRE(listed.size() == shown.size());
  for (const cni::Json& l : shown) {
    const std::string name = l["ifname"].get<std::string>();
    INFO(name);
    LinkInfo got = Must(LinkByName(sock, name));
    CHECK(got.index == l["ifindex"].get<int>());
    CHECK(got.name == name);
    CHECK(got.kind == (l.contains("linkinfo") ? l["linkinfo"].value("info_kind", "") : ""));
    CHECK(got.mtu == l["mtu"].get<int>());
    CHECK(got.txqlen == l["txqlen"].get<int>());
    CHECK(got.alias == l.value("ifalias", ""));
    CHECK(got.master == (l.contains("master") ? index_of.at(l["master"].get<std::string>()) : 0));
    int link = l.contains("link_index") ? l["link_index"].get<int>()
               : l.contains("link") && !l["link"].is_null() ? index_of.at(l["link"].get<std::string>())
                                                            : 0;
    CHECK(got.link == link);
    CHECK(got.link_netnsid == (l.contains("link_netnsid") ? std::optional<int>(l["link_netnsid"].get<int>())
                                                          : std::nullopt));
    CHECK(got.mac.ToString() == l.value("address", "00:00:00:00:00:00"));
    auto has_flag = [&](const char* f) {
      return std::find(l["flags"].begin(), l["flags"].end(), f) != l["flags"].end();
    };
    CHECK(got.up() == has_flag("UP"));
    CHECK(got.promisc() == has_flag("PROMISC"));
    // The dump reads it the same way.
    auto same = std::find_if(listed.begin(), listed.end(), [&](const LinkInfo& x) { return x.index == got.index; });
    REQUIRE(same != listed.end());
    CHECK(same->name == got.name);
    CHECK(same->kind == got.kind);
    CHECK(same->mac == got.mac);
    CHECK(same->mtu == got.mtu);
    CHECK(same->up() == got.up());  // IFF_RUNNING may come on meanwhile (a bridge's carrier)
    CHECK(same->promisc() == got.promisc());
    CHECK(same->master == got.master);
    CHECK(same->alias == got.alias);
    CHECK(same->link == got.link);
    CHECK(same->link_netnsid == got.link_netnsid);
    CHECK(same->txqlen == got.txqlen);
  }
  CHECK(Must(LinkByName(sock, "lv0")).master == index_of.at("lbr"));  // the shapes were made
  CHECK(Must(LinkByName(sock, "lout")).link_netnsid.has_value());
  for (const char* name : {"lmv", "lbr", "lv0", "lvx", "ltap", "lout"}) MustExec(fx, "", {"ip", "link", "del", name});
}

// The tap plugin through the CNI protocol. A tap has no carrier until a
// process opens it, so the traffic tests open it themselves (TUNSETIFF, as a
// VM monitor would) and exchange Ethernet frames through the descriptor.
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "cni/base/fs.h"
#include "cni/base/ip.h"
#include "cni/base/json.h"
#include "cni/net/netns.h"
#include "cni/protocol/types.h"
#include "cni/protocol/version.h"
#include "support/cni_call.h"
#include "support/netns_fixture.h"
#include "support/netns_tools.h"
#include "support/run.h"

namespace {

using cni::Json;
using namespace cni::test;  // NOLINT: test brevity

const std::vector<std::string> kOnlyLo = {"lo"};

std::string TapConf(const std::string& version, const Json& ipam, const Json& extra = Json::object()) {
  Json conf = {{"cniVersion", version}, {"name", "tapnet"}, {"type", "tap"}};
  if (!ipam.is_null()) conf["ipam"] = ipam;
  for (const auto& [k, v] : extra.items()) conf[k] = v;
  return conf.dump();
}

RunResult Call(const std::string& command, const std::string& conf, const std::string& netns,
               const std::string& id, const CallOptions& options = {}) {
  return CallPlugin("tap", command, conf, netns, id, options);
}

// Opens the existing tap `name` in `netns` as a VM monitor would (the open
// must happen inside the namespace the tap lives in).
cni::UniqueFd OpenTap(const std::string& netns, const std::string& name, bool multi_queue = false) {
  cni::UniqueFd fd;
  absl::StatusOr<cni::net::Netns> ns = cni::net::Netns::Open(netns);
  REQUIRE(ns.ok());
  absl::Status st = ns->Run([&]() -> absl::Status {
    fd.reset(open("/dev/net/tun", O_RDWR | O_CLOEXEC | O_NONBLOCK));
    if (!fd.valid()) return absl::InternalError("open /dev/net/tun");
    ifreq ifr{};
    std::strncpy(ifr.ifr_name, name.c_str(), IFNAMSIZ - 1);
    unsigned flags = IFF_TAP | IFF_NO_PI | (multi_queue ? IFF_MULTI_QUEUE : 0);
    ifr.ifr_flags = static_cast<short>(flags);
    if (ioctl(fd.get(), TUNSETIFF, &ifr) != 0) return absl::InternalError(strerror(errno));
    return absl::OkStatus();
  });
  INFO(st.ToString());
  REQUIRE(st.ok());
  return fd;
}

uint16_t Checksum(const uint8_t* p, size_t n) {
  uint32_t sum = 0;
  for (size_t i = 0; i + 1 < n; i += 2) sum += static_cast<uint32_t>(p[i] << 8 | p[i + 1]);
  if (n % 2) sum += static_cast<uint32_t>(p[n - 1] << 8);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

void Put16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v & 0xff);
}

// An Ethernet frame carrying an ICMP echo request from src to dst.
std::vector<uint8_t> EchoRequest(const std::array<uint8_t, 6>& dst_mac, const std::array<uint8_t, 6>& src_mac,
                                 std::array<uint8_t, 4> src, std::array<uint8_t, 4> dst, uint16_t id) {
  std::vector<uint8_t> f(14 + 20 + 8 + 16, 0);
  std::copy(dst_mac.begin(), dst_mac.end(), f.begin());
  std::copy(src_mac.begin(), src_mac.end(), f.begin() + 6);
  Put16(&f[12], 0x0800);
  uint8_t* ip = &f[14];
  ip[0] = 0x45;
  Put16(ip + 2, 20 + 8 + 16);
  ip[8] = 64;
  ip[9] = 1;  // ICMP
  std::copy(src.begin(), src.end(), ip + 12);
  std::copy(dst.begin(), dst.end(), ip + 16);
  Put16(ip + 10, Checksum(ip, 20));
  uint8_t* icmp = ip + 20;
  icmp[0] = 8;  // echo request
  Put16(icmp + 4, id);
  Put16(icmp + 6, 1);
  for (int i = 0; i < 16; ++i) icmp[8 + i] = static_cast<uint8_t>('a' + i);
  Put16(icmp + 2, Checksum(icmp, 8 + 16));
  return f;
}

// Writes the echo request into the tap and reads frames until the echo
// reply with `id` from `from` comes back (or 3 s pass).
bool EchoThroughTap(int fd, const std::vector<uint8_t>& request, std::array<uint8_t, 4> from, uint16_t id) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  if (write(fd, request.data(), request.size()) != static_cast<ssize_t>(request.size())) return false;
  int sent = 1;
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 200) <= 0) {
      // The first request may have been dropped while the port was learning
      // (bridge) or the link coming up: ask again, a few times.
      if (sent < 10 && write(fd, request.data(), request.size()) > 0) ++sent;
      continue;
    }
    uint8_t buf[2048];
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 14 + 20 + 8) continue;
    const uint8_t* ip = buf + 14;
    if (buf[12] != 0x08 || buf[13] != 0x00 || ip[9] != 1) continue;
    const uint8_t* icmp = ip + (ip[0] & 0x0f) * 4;
    if (icmp[0] == 0 && std::equal(from.begin(), from.end(), ip + 12) &&
        (icmp[4] << 8 | icmp[5]) == id) {
      return true;
    }
  }
  return false;
}

std::array<uint8_t, 6> MacBytes(const std::string& text) {
  absl::StatusOr<cni::net::MacAddress> mac = cni::net::MacAddress::Parse(text);
  REQUIRE(mac.ok());
  std::array<uint8_t, 6> out{};
  std::string s = mac->ToString();
  for (int i = 0; i < 6; ++i) out[i] = static_cast<uint8_t>(std::stoi(s.substr(i * 3, 2), nullptr, 16));
  return out;
}

const std::array<uint8_t, 6> kPeerMac = {0x02, 0, 0, 0, 0, 0x01};

std::vector<std::string> Flags(const Json& link) {
  return link.value("flags", std::vector<std::string>{});
}

bool Has(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

}  // namespace

TEST_CASE("tap: the tap carries the IPAM address and answers through the tap, every version",
          "[netns][tap]") {
  const std::string version =
      GENERATE(as<std::string>{}, "0.1.0", "0.2.0", "0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0");
  INFO("cniVersion " << version);
  NetnsFixture fx;
  TempDir data;
  std::string c1 = fx.AddNetns("c1");
  std::string conf = TapConf(version, HostLocalIpam(data, {"10.55.0.0/24"}, nullptr),
                             {{"mtu", 1400}, {"mac", "02:aa:bb:cc:dd:01"}});
  RunResult add = Call("ADD", conf, c1, "ctr1");
  cni::Result r = MustResult(add);
  REQUIRE(r.ips.size() == 1);
  CHECK(r.ips[0].address.ToString() == "10.55.0.2/24");
  if (cni::VersionAtLeast(version, "0.3.0")) {
    REQUIRE(r.interfaces.size() == 1);
    CHECK(r.interfaces[0].name == "eth0");
    CHECK(r.interfaces[0].mac == "02:aa:bb:cc:dd:01");
    CHECK(r.interfaces[0].sandbox == c1);
  }
  Json eth0 = LinkJson(fx, c1, "eth0");
  CHECK(eth0["linkinfo"].value("info_kind", "") == "tun");
  CHECK(eth0["linkinfo"]["info_data"].value("type", "") == "tap");
  CHECK(eth0["linkinfo"]["info_data"].value("persist", false));
  CHECK(eth0.value("mtu", 0) == 1400);
  CHECK(Has(Flags(eth0), "UP"));
  CHECK(fx.Links() == kOnlyLo);  // nothing in the host

  {
    cni::UniqueFd fd = OpenTap(c1, "eth0");
    MustExec(fx, c1, {"ip", "neigh", "replace", "10.55.0.1", "lladdr", "02:00:00:00:00:01", "dev", "eth0"});
    CHECK(EchoThroughTap(fd.get(),
                         EchoRequest(MacBytes("02:aa:bb:cc:dd:01"), kPeerMac, {10, 55, 0, 1}, {10, 55, 0, 2}, 77),
                         {10, 55, 0, 2}, 77));
  }
  if (cni::VersionAtLeast(version, "0.4.0")) {
    MustSucceed(Call("CHECK", WithPrevResult(conf, add.out), c1, "ctr1"));
    MustExec(fx, c1, {"ip", "addr", "flush", "dev", "eth0"});
    RunResult bad = Call("CHECK", WithPrevResult(conf, add.out), c1, "ctr1");
    CHECK(absl::StrContains(ErrorMessage(bad), "address 10.55.0.2/24 is missing"));
  }
  MustSucceed(Call("DEL", conf, c1, "ctr1"));
  CHECK(fx.Links(c1) == kOnlyLo);
  CHECK(Reservations(data).empty());
  MustSucceed(Call("DEL", conf, c1, "ctr1"));  // idempotent
  TearDown(fx, {c1});
}

TEST_CASE("tap: owner, group and multiQueue, layer 2 only", "[netns][tap]") {
  NetnsFixture fx;
  std::string c1 = fx.AddNetns("c1");
  std::string conf = TapConf("1.1.0", nullptr, {{"owner", 43210}, {"group", 43211}, {"multiQueue", true}});
  cni::Result r = MustResult(Call("ADD", conf, c1, "ctr1"));
  CHECK(r.ips.empty());
  Json info = LinkJson(fx, c1, "eth0")["linkinfo"]["info_data"];
  INFO(info.dump());
  CHECK(info.value("multi_queue", false));
  CHECK(info["user"].dump().find("43210") != std::string::npos);
  CHECK(info["group"].dump().find("43211") != std::string::npos);
  // Without owner and group the tap has neither: only CAP_NET_ADMIN opens it.
  std::string plain = TapConf("1.1.0", nullptr);
  MustResult(Call("ADD", plain, c1, "ctr2", {.ifname = "tap1"}));
  Json info2 = LinkJson(fx, c1, "tap1")["linkinfo"]["info_data"];
  INFO(info2.dump());
  CHECK_FALSE(info2.value("multi_queue", true));
  CHECK_FALSE(info2.contains("user"));
  CHECK_FALSE(info2.contains("group"));
  // A multi-queue tap opens only with IFF_MULTI_QUEUE, as the kernel wants.
  { cni::UniqueFd fd = OpenTap(c1, "eth0", true); }
  MustSucceed(Call("DEL", conf, c1, "ctr1"));
  MustSucceed(Call("DEL", plain, c1, "ctr2", {.ifname = "tap1"}));
  CHECK(fx.Links(c1) == kOnlyLo);
  TearDown(fx, {c1});
}

TEST_CASE("tap: enslaved to a bridge in the container, frames reach a peer on the bridge",
          "[netns][tap]") {
  NetnsFixture fx;
  std::string c1 = fx.AddNetns("c1");
  std::string c2 = fx.AddNetns("c2");
  MustExec(fx, c1, {"ip", "link", "add", "br0", "type", "bridge"});
  MustExec(fx, c1, {"ip", "link", "set", "br0", "up"});
  MustExec(fx, c1, {"ip", "link", "add", "vb0", "type", "veth", "peer", "name", "vp0", "netns", c2});
  MustExec(fx, c1, {"ip", "link", "set", "vb0", "master", "br0", "up"});
  MustExec(fx, c2, {"ip", "addr", "add", "10.56.0.9/24", "dev", "vp0"});
  MustExec(fx, c2, {"ip", "link", "set", "vp0", "up"});
  MustExec(fx, c2, {"ip", "neigh", "replace", "10.56.0.1", "lladdr", "02:00:00:00:00:01", "dev", "vp0"});
  std::string conf = TapConf("1.0.0", nullptr, {{"bridge", "br0"}});
  RunResult add = Call("ADD", conf, c1, "ctr1");
  MustResult(add);
  Json eth0 = LinkJson(fx, c1, "eth0");
  CHECK(eth0.value("master", "") == "br0");
  MustSucceed(Call("CHECK", WithPrevResult(conf, add.out), c1, "ctr1"));
  {
    cni::UniqueFd fd = OpenTap(c1, "eth0");
    std::string peer_mac = LinkJson(fx, c2, "vp0").value("address", "");
    CHECK(EchoThroughTap(fd.get(), EchoRequest(MacBytes(peer_mac), kPeerMac, {10, 56, 0, 1}, {10, 56, 0, 9}, 78),
                         {10, 56, 0, 9}, 78));
  }
  MustSucceed(Call("DEL", conf, c1, "ctr1"));
  CHECK(fx.Links(c1) == std::vector<std::string>{"br0", "lo", "vb0"});
  TearDown(fx, {c1, c2});
}

TEST_CASE("tap: bad input gets its code, nothing is made", "[netns][tap]") {
  NetnsFixture fx;
  TempDir data;
  std::string c1 = fx.AddNetns("c1");
  Json ipam = HostLocalIpam(data, {"10.55.0.0/24"}, nullptr);
  struct Bad {
    Json extra;
    int code;
    const char* msg;
  };
  const Bad cases[] = {
      {{{"mtu", 40}}, 7, "mtu 40 is out of range"},
      {{{"mtu", "big"}}, 6, "mtu"},
      {{{"owner", -1}}, 7, "\"owner\" must be between"},
      {{{"group", "wheel"}}, 6, "group"},
      {{{"mac", "nonsense"}}, 7, "mac"},
      {{{"multiQueue", "yes"}}, 6, "multiQueue"},
      {{{"bridge", "nobr"}}, 7, "bridge \"nobr\" not found in the container namespace"},
      {{{"bridge", "lo"}}, 7, "\"lo\" is not a bridge"},
  };
  for (const Bad& b : cases) {
    INFO(b.extra.dump());
    RunResult add = Call("ADD", TapConf("1.0.0", ipam, b.extra), c1, "ctr1");
    CHECK(ErrorCode(add) == b.code);
    CHECK(absl::StrContains(ErrorMessage(add), b.msg));
    CHECK(fx.Links(c1) == kOnlyLo);
    CHECK(Reservations(data).empty());
  }
  RunResult taken = Call("ADD", TapConf("1.0.0", ipam), c1, "ctr1", {.ifname = "lo"});
  CHECK(absl::StrContains(ErrorMessage(taken), "container interface \"lo\" already exists"));
  RunResult nons = Call("ADD", TapConf("1.0.0", ipam), "/run/netns/none", "ctr1");
  CHECK(ErrorCode(nons) == 3);
  CHECK(Reservations(data).empty());
  TearDown(fx, {c1});
}

TEST_CASE("tap: a layer-2-only ADD at 0.1.0/0.2.0 is refused before the tap is made",
          "[netns][tap]") {
  // Those versions have no place for a result without an IP; skel prints
  // only after ADD, when the tap could no longer be removed.
  NetnsFixture fx;
  std::string c1 = fx.AddNetns("c1");
  for (const char* version : {"0.1.0", "0.2.0"}) {
    INFO(version);
    RunResult add = Call("ADD", TapConf(version, nullptr), c1, "ctr1");
    CHECK(ErrorCode(add) == 1);
    CHECK(ErrorMessage(add) == "cannot convert: no valid IP addresses");
    CHECK(fx.Links(c1) == kOnlyLo);
  }
  TearDown(fx, {c1});
}

TEST_CASE("tap: a failed IPAM step removes the tap", "[netns][tap]") {
  NetnsFixture fx;
  TempDir data;
  std::string c1 = fx.AddNetns("c1");
  Json ipam = HostLocalIpam(data, {"10.55.0.0/24"}, nullptr);
  ipam["ranges"][0][0]["rangeStart"] = "10.55.0.5";
  ipam["ranges"][0][0]["rangeEnd"] = "10.55.0.5";
  std::string conf = TapConf("1.0.0", ipam);
  MustResult(Call("ADD", conf, c1, "ctr1"));
  // The range is full: the second ADD's tap is made, then IPAM fails.
  RunResult add = Call("ADD", conf, c1, "ctr2", {.ifname = "eth1"});
  CHECK(add.exit_code != 0);
  CHECK(fx.Links(c1) == std::vector<std::string>{"eth0", "lo"});
  // A route IPAM gives that cannot be added: the address is released too.
  Json ipam2 = HostLocalIpam(data, {"10.57.0.0/24"}, Json::array({{{"dst", "10.99.0.0/16"}, {"gw", "10.200.0.1"}}}));
  RunResult add2 = Call("ADD", TapConf("1.0.0", ipam2), c1, "ctr3", {.ifname = "eth2"});
  CHECK(add2.exit_code != 0);
  CHECK(fx.Links(c1) == std::vector<std::string>{"eth0", "lo"});
  CHECK(Reservations(data) == std::vector<std::string>{"10.55.0.5"});
  MustSucceed(Call("DEL", conf, c1, "ctr1"));
  CHECK(Reservations(data).empty());
  TearDown(fx, {c1});
}

TEST_CASE("tap: DEL releases the address when the namespace is gone, GC and STATUS reach IPAM",
          "[netns][tap]") {
  NetnsFixture fx;
  TempDir data;
  std::string c1 = fx.AddNetns("c1");
  std::string conf = TapConf("1.1.0", HostLocalIpam(data, {"10.55.0.0/24"}, nullptr));
  MustResult(Call("ADD", conf, c1, "ctr1"));
  MustSucceed(Call("STATUS", conf, "", ""));
  fx.DelNetns(c1);
  MustSucceed(Call("DEL", conf, c1, "ctr1"));
  CHECK(Reservations(data).empty());
  MustResult(Call("ADD", conf, fx.AddNetns("c2"), "ctr2"));
  Json gc = Json::parse(conf);
  gc["cni.dev/valid-attachments"] = Json::array();
  MustSucceed(Call("GC", gc.dump(), "", "", {.ifname = ""}));
  CHECK(Reservations(data).empty());
  TearDown(fx, {"/run/netns/c2"});
}

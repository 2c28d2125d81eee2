// The host-device plugin through the CNI protocol. The device is one end of
// a veth pair in the test's private host namespace; its peer stays there, so
// traffic between the container and the host crosses the moved device. The
// last case needs a physical device (the kernel destroys a virtual one with
// its namespace): the VM tier's guest has one, a virtio NIC.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "cni/base/ip.h"
#include "cni/base/json.h"
#include "cni/protocol/types.h"
#include "cni/protocol/version.h"
#include "support/cni_call.h"
#include "support/netns_fixture.h"
#include "support/netns_tools.h"
#include "support/run.h"

namespace {

using cni::Json;
using namespace cni::test;  // NOLINT: test brevity

cni::net::IpAddress A(const char* text) { return *cni::net::IpAddress::Parse(text); }

const std::vector<std::string> kOnlyLo = {"lo"};
const std::vector<std::string> kHostPair = {"hd0", "hd0p", "lo"};

std::string HdConf(const std::string& version, const Json& ipam, const Json& keys = {{"device", "hd0"}}) {
  Json conf = {{"cniVersion", version}, {"name", "hdnet"}, {"type", "host-device"}};
  if (!ipam.is_null()) conf["ipam"] = ipam;
  for (const auto& [k, v] : keys.items()) conf[k] = v;
  return conf.dump();
}

RunResult Call(const std::string& command, const std::string& conf, const std::string& netns,
               const std::string& id, const CallOptions& options = {}) {
  return CallPlugin("host-device", command, conf, netns, id, options);
}

// The device "hd0" (MAC 02:00:00:00:0d:00, up) and its peer "hd0p" with
// 10.58.0.1/24, both in the private host namespace.
void MakeDevice(const NetnsFixture& fx) {
  MustExec(fx, "", {"ip", "link", "add", "hd0", "address", "02:00:00:00:0d:00", "type", "veth", "peer", "name",
                    "hd0p"});
  MustExec(fx, "", {"ip", "addr", "add", "10.58.0.1/24", "dev", "hd0p"});
  MustExec(fx, "", {"ip", "link", "set", "hd0p", "up"});
  MustExec(fx, "", {"ip", "link", "set", "hd0", "up"});
}

Json HostLocal(const TempDir& dir) { return HostLocalIpam(dir, {"10.58.0.0/24"}, nullptr); }

}  // namespace

TEST_CASE("host-device: moved in renamed, traffic across, moved back under its name, every version",
          "[netns][host-device]") {
  const std::string version =
      GENERATE(as<std::string>{}, "0.1.0", "0.2.0", "0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0");
  INFO("cniVersion " << version);
  NetnsFixture fx;
  MakeDevice(fx);
  TempDir data;
  std::string c1 = fx.AddNetns("c1");
  std::string conf = HdConf(version, HostLocal(data));
  RunResult add = Call("ADD", conf, c1, "ctr1");
  cni::Result r = MustResult(add);
  REQUIRE(r.ips.size() == 1);
  CHECK(r.ips[0].address.ToString() == "10.58.0.2/24");
  if (cni::VersionAtLeast(version, "0.3.0")) {
    REQUIRE(r.interfaces.size() == 1);
    CHECK(r.interfaces[0].name == "eth0");
    CHECK(r.interfaces[0].mac == "02:00:00:00:0d:00");
    CHECK(r.interfaces[0].sandbox == c1);
  }
  CHECK(fx.Links() == std::vector<std::string>{"hd0p", "lo"});
  Json eth0 = LinkJson(fx, c1, "eth0");
  CHECK(eth0.value("ifalias", "") == "hd0");
  CHECK(eth0.value("address", "") == "02:00:00:00:0d:00");
  CHECK(Ping(c1, A("10.58.0.1")));
  CHECK(Ping("", A("10.58.0.2")));
  if (cni::VersionAtLeast(version, "0.4.0")) {
    MustSucceed(Call("CHECK", WithPrevResult(conf, add.out), c1, "ctr1"));
    MustExec(fx, c1, {"ip", "addr", "flush", "dev", "eth0"});
    RunResult bad = Call("CHECK", WithPrevResult(conf, add.out), c1, "ctr1");
    CHECK(absl::StrContains(ErrorMessage(bad), "address 10.58.0.2/24 is missing"));
  }
  MustSucceed(Call("DEL", conf, c1, "ctr1"));
  CHECK(fx.Links(c1) == kOnlyLo);
  CHECK(fx.Links() == kHostPair);
  Json back = LinkJson(fx, "", "hd0");
  CHECK(back.value("ifalias", "") == "");
  CHECK(back.value("address", "") == "02:00:00:00:0d:00");
  CHECK(Reservations(data).empty());
  MustSucceed(Call("DEL", conf, c1, "ctr1"));  // idempotent
  CHECK(fx.Links() == kHostPair);
  TearDown(fx, {c1}, {"hd0"});
}

TEST_CASE("host-device: the device found by hwaddr, layer 2 only", "[netns][host-device]") {
  NetnsFixture fx;
  MakeDevice(fx);
  std::string c1 = fx.AddNetns("c1");
  std::string conf = HdConf("1.0.0", nullptr, {{"hwaddr", "02:00:00:00:0D:00"}});
  cni::Result r = MustResult(Call("ADD", conf, c1, "ctr1", {.ifname = "net1"}));
  CHECK(r.ips.empty());
  CHECK(r.interfaces[0].name == "net1");
  CHECK(LinkJson(fx, c1, "net1").value("ifalias", "") == "hd0");
  MustSucceed(Call("DEL", conf, c1, "ctr1", {.ifname = "net1"}));
  CHECK(fx.Links() == kHostPair);
  TearDown(fx, {c1}, {"hd0"});
}

TEST_CASE("host-device: a failed ADD puts the device back as it was", "[netns][host-device]") {
  NetnsFixture fx;
  MakeDevice(fx);
  MustExec(fx, "", {"ip", "link", "set", "hd0", "alias", "uplink"});
  TempDir data;
  std::string c1 = fx.AddNetns("c1");
  auto same_as_before = [&] {
    CHECK(fx.Links() == kHostPair);
    CHECK(fx.Links(c1) == kOnlyLo);
    Json hd0 = LinkJson(fx, "", "hd0");
    CHECK(hd0.value("ifalias", "") == "uplink");
    CHECK(hd0.value("address", "") == "02:00:00:00:0d:00");
    std::vector<std::string> flags = hd0.value("flags", std::vector<std::string>{});
    CHECK(std::find(flags.begin(), flags.end(), "UP") != flags.end());
  };
  SECTION("IPAM fails after the move") {
    Json ipam = HostLocal(data);
    ipam["ranges"][0][0]["rangeStart"] = "10.58.0.5";
    ipam["ranges"][0][0]["rangeEnd"] = "10.58.0.5";
    // Another container holds the only address.
    MustResult(CallPlugin("host-local", "ADD", HdConf("1.0.0", ipam), c1, "other"));
    RunResult add = Call("ADD", HdConf("1.0.0", ipam), c1, "ctr1");
    CHECK(add.exit_code != 0);
    same_as_before();
    CHECK(Reservations(data) == std::vector<std::string>{"10.58.0.5"});
  }
  SECTION("a route cannot be added: the address is released too") {
    Json ipam = HostLocalIpam(data, {"10.58.0.0/24"}, Json::array({{{"dst", "10.99.0.0/16"}, {"gw", "10.200.0.1"}}}));
    RunResult add = Call("ADD", HdConf("1.0.0", ipam), c1, "ctr1");
    CHECK(add.exit_code != 0);
    same_as_before();
    CHECK(Reservations(data).empty());
  }
  SECTION("CNI_IFNAME is taken in the container: nothing moves") {
    RunResult add = Call("ADD", HdConf("1.0.0", HostLocal(data)), c1, "ctr1", {.ifname = "lo"});
    CHECK(absl::StrContains(ErrorMessage(add), "container interface \"lo\" already exists"));
    same_as_before();
    CHECK(Reservations(data).empty());
  }
  TearDown(fx, {c1}, {"hd0"});
}

TEST_CASE("host-device: bad input gets its code, nothing is changed", "[netns][host-device]") {
  NetnsFixture fx;
  MakeDevice(fx);
  TempDir data;
  std::string c1 = fx.AddNetns("c1");
  struct Bad {
    Json keys;
    int code;
    const char* msg;
  };
  const Bad cases[] = {
      {Json::object(), 7, "specify either \"device\", \"hwaddr\", \"kernelpath\" or \"pciBusID\""},
      {{{"device", "nodev"}}, 7, "failed to find host device \"nodev\""},
      {{{"device", 5}}, 6, "device"},
      {{{"hwaddr", "zz:00"}}, 7, "failed to parse MAC address \"zz:00\""},
      {{{"hwaddr", "02:00:00:00:00:99"}}, 7, "no link with MAC 02:00:00:00:00:99"},
      {{{"kernelpath", "devices/x"}}, 7, "must be absolute and begin with /sys/devices/"},
      {{{"kernelpath", "/sys/devices/none"}}, 7, "failed to find host device"},
      {{{"pciBusID", "../x"}}, 7, "is not a bus address"},
      {{{"pciBusID", "0000:ff:1f.7"}}, 7, "error with host device"},
      {{{"runtimeConfig", {{"deviceID", "0000:ff:1f.7"}}}}, 7, "runtime config DeviceID 0000:ff:1f.7 not found"},
  };
  for (const Bad& b : cases) {
    INFO(b.keys.dump());
    RunResult add = Call("ADD", HdConf("1.0.0", HostLocal(data), b.keys), c1, "ctr1");
    CHECK(ErrorCode(add) == b.code);
    CHECK(absl::StrContains(ErrorMessage(add), b.msg));
    CHECK(fx.Links() == kHostPair);
    CHECK(fx.Links(c1) == kOnlyLo);
    CHECK(Reservations(data).empty());
  }
  RunResult nons = Call("ADD", HdConf("1.0.0", HostLocal(data)), "/run/netns/none", "ctr1");
  CHECK(ErrorCode(nons) == 3);
  CHECK(fx.Links() == kHostPair);
  TearDown(fx, {c1}, {"hd0"});
}

TEST_CASE("host-device: DEL releases the address when the namespace is gone or half gone",
          "[netns][host-device]") {
  NetnsFixture fx;
  MakeDevice(fx);
  TempDir data;
  std::string conf = HdConf("1.1.0", HostLocal(data));
  SECTION("the namespace is deleted (the veth goes with it)") {
    std::string c1 = fx.AddNetns("c1");
    MustResult(Call("ADD", conf, c1, "ctr1"));
    MustSucceed(Call("STATUS", conf, "", ""));
    fx.DelNetns(c1);
    MustSucceed(Call("DEL", conf, c1, "ctr1"));
    CHECK(Reservations(data).empty());
    MustSucceed(Call("DEL", conf, c1, "ctr1"));
    // The dying namespace takes hd0 and its peer with it, asynchronously.
    TearDown(fx, {}, {"hd0p"});
  }
  SECTION("only the mount point is left, no namespace behind it") {
    std::string c1 = fx.AddNetns("c1");
    MustResult(Call("ADD", conf, c1, "ctr1"));
    fx.DelNetns(c1);
    std::ofstream(c1).put('\0');  // a left-over file where the namespace was
    MustSucceed(Call("DEL", conf, c1, "ctr1"));
    CHECK(Reservations(data).empty());
    std::filesystem::remove(c1);
    TearDown(fx, {}, {"hd0p"});
  }
  SECTION("the namespace is there, the device already gone from it") {
    std::string c1 = fx.AddNetns("c1");
    MustResult(Call("ADD", conf, c1, "ctr1"));
    MustExec(fx, c1, {"ip", "link", "del", "eth0"});
    MustSucceed(Call("DEL", conf, c1, "ctr1"));
    CHECK(Reservations(data).empty());
    TearDown(fx, {c1});
  }
  SECTION("the alias was lost: the configured device name is used") {
    std::string c1 = fx.AddNetns("c1");
    MustResult(Call("ADD", conf, c1, "ctr1"));
    MustExec(fx, c1, {"ip", "link", "set", "eth0", "alias", ""});
    MustSucceed(Call("DEL", conf, c1, "ctr1"));
    CHECK(fx.Links() == kHostPair);
    CHECK(Reservations(data).empty());
    TearDown(fx, {c1}, {"hd0"});
  }
}

TEST_CASE("host-device: GC reaches IPAM", "[netns][host-device]") {
  NetnsFixture fx;
  MakeDevice(fx);
  TempDir data;
  std::string c1 = fx.AddNetns("c1");
  std::string conf = HdConf("1.1.0", HostLocal(data));
  MustResult(Call("ADD", conf, c1, "ctr1"));
  Json gc = Json::parse(conf);
  gc["cni.dev/valid-attachments"] = Json::array();
  MustSucceed(Call("GC", gc.dump(), "", "", {.ifname = ""}));
  CHECK(Reservations(data).empty());
  MustSucceed(Call("DEL", conf, c1, "ctr1"));
  TearDown(fx, {c1}, {"hd0"});
}

TEST_CASE("host-device: same result and kernel state as upstream's host-device",
          "[netns][host-device][differential]") {
  if (!std::filesystem::exists(std::string(kUpstreamDir) + "/host-device")) {
    WARN("no upstream host-device: differential skipped");
    return;
  }
  const std::string version = GENERATE(as<std::string>{}, "0.3.1", "0.4.0", "1.0.0");
  INFO("cniVersion " << version);
  NetnsFixture fx;
  MakeDevice(fx);
  Json routes = Json::array({{{"dst", "10.90.0.0/16"}, {"gw", "10.58.0.1"}}});
  std::string conf = HdConf(version, StaticIpam("10.58.0.7/24", "10.58.0.1", routes));
  struct Snap {
    cni::Result result;
    std::string link, addrs, routes, host_after;
    bool ping = false;
  };
  auto snap = [&](const std::string& dir, const std::string& ns) {
    Snap s;
    s.result = MustResult(Call("ADD", conf, ns, "diff", {.dir = dir}));
    for (cni::Interface& i : s.result.interfaces) i.sandbox = "SANDBOX";
    Json l = LinkJson(fx, ns, "eth0");
    s.link = absl::StrCat(l.value("ifalias", ""), " ", l.value("address", ""), " ", l.value("mtu", 0), " ",
                          l.value("operstate", ""));
    s.addrs = MustExec(fx, ns, {"ip", "-4", "-o", "addr", "show", "dev", "eth0"});
    s.routes = MustExec(fx, ns, {"ip", "route", "show"});
    s.ping = Ping(ns, A("10.58.0.1"));
    MustSucceed(Call("DEL", conf, ns, "diff", {.dir = dir}));
    CHECK(fx.Links(ns) == kOnlyLo);
    CHECK(fx.Links() == kHostPair);
    Json h = LinkJson(fx, "", "hd0");
    // Upstream 1.1.1 leaves the alias on the device after DEL (newer
    // upstream clears it, as we do): compared apart.
    s.host_after = absl::StrCat(h.value("address", ""), " ", h.value("operstate", ""));
    MustExec(fx, "", {"ip", "link", "set", "hd0", "alias", ""});
    MustExec(fx, "", {"ip", "link", "set", "hd0", "up"});
    return s;
  };
  std::string up_ns = fx.AddNetns("up");
  std::string our_ns = fx.AddNetns("ours");
  Snap up = snap(kUpstreamDir, up_ns);
  Snap ours = snap("", our_ns);
  CHECK(ours.result == up.result);
  CHECK(ours.link == up.link);
  CHECK(ours.addrs == up.addrs);
  CHECK(ours.routes == up.routes);
  CHECK(ours.host_after == up.host_after);
  CHECK(ours.ping);
  CHECK(up.ping);
  TearDown(fx, {up_ns, our_ns}, {"hd0"});
}

namespace {

// The guest's physical NIC: tests/vm/vm_tier.py gives QEMU's virtio-net
// device this MAC. The guest's own namespace is its init process's.
constexpr const char* kGuestNicMac = "52:54:00:c0:ff:ee";
constexpr const char* kGuestInitNetns = "/proc/1/ns/net";

// The link with `mac` in `netns` ("" = the private host namespace), or null.
Json LinkWithMac(const NetnsFixture& fx, const std::string& netns, const std::string& mac) {
  RunResult r = fx.Exec(netns, {"ip", "-d", "-j", "link", "show"});
  REQUIRE(r.exit_code == 0);
  for (const Json& link : Json::parse(r.out)) {
    if (link.value("address", "") == mac) return link;
  }
  return nullptr;
}

// Deletes the container namespace without a DEL, as a runtime that crashed
// leaves it, and waits for the kernel to give the NIC back to the guest's
// own namespace (it does so on a work queue); then moves it, under the name
// it came back with, into the private host namespace, where a node's
// runtime would find it. Returns that name.
std::string NamespaceDiesWithNic(NetnsFixture& fx, const std::string& container) {
  fx.DelNetns(container);
  Json back;
  for (int i = 0; i < 200 && back.is_null(); ++i) {
    back = LinkWithMac(fx, kGuestInitNetns, kGuestNicMac);
    if (back.is_null()) usleep(50 * 1000);
  }
  REQUIRE(!back.is_null());
  std::string name = back.value("ifname", "");
  MustExec(fx, kGuestInitNetns, {"ip", "link", "set", "dev", name, "netns", std::to_string(getpid())});
  return name;
}

}  // namespace

// A physical device (the kernel destroys a virtual one with its namespace) in
// a container whose namespace died without a DEL comes back to the initial
// namespace under its container name, its host name only in the alias ADD set.
// Upstream then cannot find it ("failed to find host device") until someone
// renames it; ours finds it by that alias, and a DEL that finds the namespace
// gone renames it back.
TEST_CASE("host-device: a physical device given back by a dying namespace is found by its alias and renamed back",
          "[vm][host-device]") {
  NetnsFixture fx;
  Json nic = LinkWithMac(fx, kGuestInitNetns, kGuestNicMac);
  REQUIRE(!nic.is_null());
  const std::string guest_name = nic.value("ifname", "");
  MustExec(fx, kGuestInitNetns, {"ip", "link", "set", "dev", guest_name, "netns", std::to_string(getpid())});
  MustExec(fx, "", {"ip", "link", "set", "dev", guest_name, "name", "hdphys"});
  TempDir data;
  std::string conf = HdConf("1.1.0", HostLocal(data), {{"device", "hdphys"}});
  const CallOptions net1 = {.ifname = "net1"};

  // DEL after the namespace died: the device gets its name back.
  std::string c1 = fx.AddNetns("c1");
  MustResult(Call("ADD", conf, c1, "ctr1", net1));
  CHECK(LinkJson(fx, c1, "net1").value("ifalias", "") == "hdphys");
  CHECK(NamespaceDiesWithNic(fx, c1) == "net1");
  CHECK(LinkJson(fx, "", "net1").value("ifalias", "") == "hdphys");
  MustSucceed(Call("DEL", conf, c1, "ctr1", net1));
  CHECK(LinkJson(fx, "", "hdphys").value("ifalias", "") == "");
  CHECK(Reservations(data).empty());

  // No DEL at all: the next ADD finds it by its alias, and its DEL returns
  // it under its own name.
  std::string c2 = fx.AddNetns("c2");
  MustResult(Call("ADD", conf, c2, "ctr2", net1));
  CHECK(NamespaceDiesWithNic(fx, c2) == "net1");
  std::string c3 = fx.AddNetns("c3");
  cni::Result r = MustResult(Call("ADD", conf, c3, "ctr3", net1));
  REQUIRE(r.interfaces.size() == 1);
  CHECK(r.interfaces[0].mac == kGuestNicMac);
  CHECK(LinkJson(fx, c3, "net1").value("ifalias", "") == "hdphys");
  MustSucceed(Call("DEL", conf, c3, "ctr3", net1));
  CHECK(fx.Links() == std::vector<std::string>{"hdphys", "lo"});
  CHECK(LinkJson(fx, "", "hdphys").value("ifalias", "") == "");
  MustSucceed(Call("DEL", conf, c2, "ctr2", net1));  // the runtime's late DEL of the dead one

  // Back to the guest under its own name.
  MustExec(fx, "", {"ip", "link", "set", "dev", "hdphys", "name", guest_name});
  MustExec(fx, "", {"ip", "link", "set", "dev", guest_name, "netns", "1"});
  TearDown(fx, {c3});
}

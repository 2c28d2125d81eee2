// The chained-plugin kit of the SDK: ListDirectory (cni/base/fs.h), the
// per-attachment store (cni/plugin/attachment_store.h), prevResult's
// interface (cni/plugin/chained.h), the route list key (plugin_keys.h) and
// the plugin name on every config error (InvalidConfig, NamedBy, ParseKeys).
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "cni/base/error.h"
#include "cni/base/fs.h"
#include "cni/base/json.h"
#include "cni/plugin/attachment_store.h"
#include "cni/plugin/chained.h"
#include "cni/plugin/check.h"
#include "cni/plugin/config_schema.h"
#include "cni/plugin/plugin_keys.h"
#include "support/run.h"

namespace {

using cni::Attachment;
using cni::Json;

cni::CmdArgs Args(const std::string& network, const std::string& id, const std::string& ifname) {
  cni::CmdArgs a;
  a.conf.name = network;
  a.conf.cni_version = "1.1.0";
  a.container_id = id;
  a.ifname = ifname;
  a.netns = "/var/run/netns/" + id;
  return a;
}

void Touch(const std::string& path) { std::ofstream(path) << "x"; }

}  // namespace

TEST_CASE("fs: ListDirectory lists every entry sorted, a missing one is ENOENT", "[unit][fs]") {
  cni::test::TempDir tmp;
  const std::string dir = tmp.str();
  Touch(dir + "/b");
  Touch(dir + "/a~");
  REQUIRE(mkdir((dir + "/sub").c_str(), 0700) == 0);
  CHECK(*cni::ListDirectory(dir) == std::vector<std::string>{"a~", "b", "sub"});
  absl::StatusOr<std::vector<std::string>> missing = cni::ListDirectory(dir + "/none");
  REQUIRE_FALSE(missing.ok());
  CHECK(cni::CodeOf(missing.status()) == 5);
  CHECK(cni::ErrnoOf(missing.status()) == ENOENT);
  CHECK(cni::ListDirectoryIfExists(dir + "/none")->empty());
  absl::StatusOr<std::vector<std::string>> file = cni::ListDirectoryIfExists(dir + "/b");
  CHECK(cni::ErrnoOf(file.status()) == ENOTDIR);
}

TEST_CASE("attachment store: save, load, list, remove, per network", "[unit][store]") {
  cni::test::TempDir tmp;
  const cni::AttachmentStore store(tmp.str() + "/state");
  const cni::CmdArgs a = Args("net1", "ctr-a", "eth0"), b = Args("net1", "ctr-b", "net@1");
  const cni::CmdArgs other = Args("net2", "ctr-a", "eth0");

  CHECK(*store.Load(a) == std::nullopt);
  REQUIRE(store.Save(a, "one").ok());
  REQUIRE(store.Save(b, "two").ok());
  REQUIRE(store.Save(other, "three").ok());
  REQUIRE(store.Save(a, "one again").ok());  // replaced, atomically
  CHECK(**store.Load(a) == "one again");
  CHECK(**store.Load(other) == "three");
  struct stat st{};
  REQUIRE(stat((tmp.str() + "/state/net1/ctr-a@eth0").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  // '@' in an interface name reads back: container IDs have none.
  CHECK(*store.List("net1") == std::vector<Attachment>{{"ctr-a", "eth0"}, {"ctr-b", "net@1"}});
  CHECK(*store.List("net2") == std::vector<Attachment>{{"ctr-a", "eth0"}});
  CHECK(store.List("none")->empty());

  // Remove is idempotent, takes a killed writer's file too, and removes the
  // network's folder with its last record.
  Touch(tmp.str() + "/state/net2/ctr-a@eth0~");
  REQUIRE(store.Remove(other).ok());
  REQUIRE(store.Remove(other).ok());
  CHECK(*cni::ListDirectory(tmp.str() + "/state") == std::vector<std::string>{"net1"});
  REQUIRE(store.Save(other, "back").ok());  // and makes it again

  // A key that cannot be a file name is refused, code 7.
  CHECK(cni::CodeOf(store.Save(Args("../x", "ctr-a", "eth0"), "x")) == 7);
  CHECK(cni::CodeOf(store.Save(Args("net1", "ctr-a", ".."), "x")) == 7);
  CHECK(cni::CodeOf(store.Save(Args("net1", "a/b", "eth0"), "x")) == 7);
}

TEST_CASE("attachment store: GC keeps valid attachments and other networks' records", "[unit][store]") {
  cni::test::TempDir tmp;
  const std::string dir = tmp.str();
  const cni::AttachmentStore store(dir);
  for (const char* id : {"keep", "gone", "half"}) REQUIRE(store.Save(Args("net1", id, "eth0"), id).ok());
  REQUIRE(store.Save(Args("net2", "gone", "eth0"), "other network").ok());
  Touch(dir + "/net1/killed@eth0~");   // a writer killed before its rename
  Touch(dir + "/net1/keep@eth1~");     // a valid attachment's writer may be running
  Touch(dir + "/net1/not-a-record");   // not the store's: left alone

  cni::CmdArgs gc = Args("net1", "x", "eth0");
  gc.conf.valid_attachments = {{"keep", "eth0"}, {"half", "eth0"}, {"keep", "eth1"}};
  REQUIRE(store.Gc(gc).ok());
  CHECK(*cni::ListDirectory(dir + "/net1") ==
        std::vector<std::string>{"half@eth0", "keep@eth0", "keep@eth1~", "not-a-record"});
  CHECK(*store.List("net2") == std::vector<Attachment>{{"gone", "eth0"}});

  gc.conf.valid_attachments.clear();
  REQUIRE(store.Gc(gc).ok());
  CHECK(*cni::ListDirectory(dir + "/net1") == std::vector<std::string>{"not-a-record"});
  REQUIRE(store.Gc(Args("net3", "x", "eth0")).ok());  // nothing stored: nothing to do
}

TEST_CASE("chained: prevResult and CNI_IFNAME in it, code 7 when absent", "[unit][chained]") {
  cni::CmdArgs args = Args("net1", "ctr", "eth0");
  absl::StatusOr<cni::PrevInterface> none = cni::RequirePrevInterface(args, "my-plugin");
  REQUIRE_FALSE(none.ok());
  CHECK(cni::CodeOf(none.status()) == 7);
  CHECK(none.status().message() == "my-plugin: must be chained after an interface plugin: prevResult missing");

  args.conf.prev_result = Json{{"cniVersion", "1.1.0"},
                               {"interfaces", {{{"name", "eth0"}, {"sandbox", "/elsewhere"}},
                                               {{"name", "veth1"}},
                                               {{"name", "eth0"}, {"sandbox", args.netns}}}},
                               {"ips", Json::array()}};
  absl::StatusOr<cni::PrevInterface> found = cni::RequirePrevInterface(args, "my-plugin");
  REQUIRE(found.ok());
  CHECK(found->index == 2);
  CHECK(found->result.interfaces.size() == 3);

  args.netns = "/proc/1234/ns/net";  // the same namespace by another path: the kernel will tell
  CHECK(cni::RequirePrevInterface(args, "my-plugin")->index == 2);
  for (const char* ifname : {"eth1", "veth1"}) {  // absent, or a host interface
    args.ifname = ifname;
    absl::StatusOr<cni::PrevInterface> missing = cni::RequirePrevInterface(args, "my-plugin");
    REQUIRE_FALSE(missing.ok());
    CHECK(cni::CodeOf(missing.status()) == 7);
    CHECK(missing.status().message() ==
          "my-plugin: prevResult has no container interface \"" + std::string(ifname) + "\"");
  }
}

TEST_CASE("FindPrevInterface: an interface prevResult lacks is code 7, not 999", "[unit][chained]") {
  cni::Result prev;
  prev.interfaces.push_back(cni::Interface{.name = "eth0", .sandbox = "/run/netns/a"});
  CHECK(*cni::net::FindPrevInterface(prev, "eth0", "/run/netns/a") == 0);
  absl::StatusOr<size_t> other_ns = cni::net::FindPrevInterface(prev, "eth0", "/run/netns/b");
  REQUIRE_FALSE(other_ns.ok());
  CHECK(cni::CodeOf(other_ns.status()) == 7);
  CHECK(other_ns.status().message() == "prevResult has no interface \"eth0\" with sandbox \"/run/netns/b\"");
}

TEST_CASE("ParseRoutesKey: routes as data, code 6 for types, 7 for values, named once", "[unit][config]") {
  struct Conf {
    std::vector<cni::Route> routes;
  };
  const cni::config::Schema<Conf> keys = {cni::config::Parsed("routes", &Conf::routes, cni::ParseRoutesKey)};
  auto parse = [&](const Json& routes) {
    Conf c;
    absl::Status st = cni::config::ParseKeys(Json{{"routes", routes}}, keys, "rt", c);
    return std::make_pair(st, c);
  };
  auto [ok, conf] = parse(Json::array({{{"dst", "192.0.2.7/24"}, {"gw", "10.1.0.1"}, {"priority", 5}},
                                       {{"dst", "fd00::/64"}, {"gw", ""}}}));
  REQUIRE(ok.ok());
  REQUIRE(conf.routes.size() == 2);
  CHECK(conf.routes[0].dst.ToString() == "192.0.2.0/24");  // network form
  CHECK(conf.routes[0].gw->ToString() == "10.1.0.1");
  CHECK(conf.routes[0].priority == 5);
  CHECK_FALSE(conf.routes[1].gw.has_value());
  CHECK(parse(nullptr).second.routes.empty());

  auto fails = [&](const Json& routes, int code, const std::string& msg) {
    absl::Status st = parse(routes).first;
    INFO(routes.dump());
    CHECK(cni::CodeOf(st) == code);
    CHECK(st.message() == msg);
  };
  fails("x", 6, "rt: cannot decode \"routes\": expected list, got string");
  fails(Json::array({1}), 6, "rt: cannot decode routes[0]: expected an object");
  fails(Json::array({{{"dst", 1}}}), 6, "rt: routes[0]: cannot decode \"dst\": expected string, got number");
  fails(Json::array({{{"gw", "10.1.0.1"}}}), 7, "rt: routes[0] has no \"dst\"");
  fails(Json::array({{{"dst", "192.0.2.0"}}}), 7, "rt: routes[0].dst: invalid CIDR address \"192.0.2.0\"");
  fails(Json::array({{{"dst", "192.0.2.0/24"}, {"gw", "fd00::1"}}}), 7,
        "rt: routes[0]: gateway fd00::1 is not of the family of 192.0.2.0/24");
}

TEST_CASE("InvalidConfig and NamedBy put the plugin's name on a message once", "[unit][error]") {
  absl::Status bad = cni::InvalidConfig("my-plugin", "\"x\" must be positive");
  CHECK(cni::CodeOf(bad) == 7);
  CHECK(bad.message() == "my-plugin: \"x\" must be positive");
  CHECK(cni::NamedBy(bad, "my-plugin").message() == bad.message());
  absl::Status io = cni::WithErrno(cni::Error(cni::ErrorCode::kIoFailure, "reading f: denied"), EACCES);
  absl::Status named = cni::NamedBy(io, "my-plugin");
  CHECK(named.message() == "my-plugin: reading f: denied");
  CHECK(cni::CodeOf(named) == 5);
  CHECK(cni::ErrnoOf(named) == EACCES);
  CHECK(cni::NamedBy(cni::Error(cni::ErrorCode::kIoFailure, "my-plugins: x"), "my-plugin").message() ==
        "my-plugin: my-plugins: x");
  CHECK(cni::NamedBy(absl::OkStatus(), "my-plugin").ok());
  absl::Status moved = cni::WithMessage(named, "other words");
  CHECK(moved.message() == "other words");
  CHECK(cni::ErrnoOf(moved) == EACCES);
}

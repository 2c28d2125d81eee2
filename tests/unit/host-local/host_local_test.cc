// The command handlers, called directly with CmdArgs (no process).
#include "host_local.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cni/base/error.h"
#include "support/run.h"

namespace fs = std::filesystem;

namespace {

cni::CmdArgs Args(const std::string& conf, const std::string& id,
                  const std::string& ifname = "eth0") {
  cni::CmdArgs a;
  a.container_id = id;
  a.ifname = ifname;
  a.stdin_data = conf;
  auto parsed = cni::NetConf::Parse(conf);
  REQUIRE(parsed.ok());
  a.conf = *parsed;
  return a;
}

// The handlers as skel runs them: the configuration parsed first.
const cni::PluginFuncs& Handlers() {
  static const cni::PluginFuncs funcs = cni::hostlocal::Funcs();
  return funcs;
}
absl::StatusOr<cni::Result> Add(const cni::CmdArgs& a) { return Handlers().add(a); }
absl::Status Del(const cni::CmdArgs& a) { return Handlers().del(a); }
absl::Status Check(const cni::CmdArgs& a) { return Handlers().check(a); }
absl::Status Gc(const cni::CmdArgs& a) { return Handlers().gc(a); }
absl::Status Status(const cni::CmdArgs& a) { return Handlers().status(a); }

std::string Conf(const std::string& data_dir, const std::string& ranges) {
  return R"({"cniVersion":"1.1.0","name":"n","type":"host-local","ipam":{"type":"host-local","dataDir":")" +
         data_dir + R"(","ranges":)" + ranges + "}}";
}

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("a failed ADD releases only what it took", "[host-local][handlers]") {
  cni::test::TempDir tmp;
  std::string conf = Conf(tmp.str(), R"([[{"subnet":"10.0.0.0/24"}],[{"subnet":"10.1.0.0/30"}]])");
  REQUIRE(Add(Args(conf, "a")).ok());  // takes 10.0.0.2 and 10.1.0.2
  // b takes 10.0.0.3, then finds the second set exhausted: 10.0.0.3 is released.
  auto b = Add(Args(conf, "b"));
  REQUIRE(!b.ok());
  CHECK_THAT(std::string(b.status().message()),
             Catch::StartsWith("failed to allocate for range 1: no IP addresses available"));
  fs::path dir = tmp.path() / "n";
  CHECK(!fs::exists(dir / "10.0.0.3"));
  CHECK(Slurp(dir / "10.0.0.2") == "a\r\neth0");
  CHECK(Slurp(dir / "10.1.0.2") == "a\r\neth0");
}

TEST_CASE("GC keeps valid attachments and ID-only files of valid containers",
          "[host-local][handlers]") {
  cni::test::TempDir tmp;
  std::string conf = Conf(tmp.str(), R"([[{"subnet":"10.0.0.0/24"}]])");
  for (const char* id : {"keep", "drop"}) REQUIRE(Add(Args(conf, id)).ok());
  REQUIRE(Add(Args(conf, "keep", "eth1")).ok());
  fs::path dir = tmp.path() / "n";
  std::ofstream(dir / "10.0.0.100") << "keep";  // old upstream format
  std::ofstream(dir / "10.0.0.101") << "gone";

  auto gc_conf = cni::Json::parse(conf);
  gc_conf["cni.dev/valid-attachments"] = {{{"containerID", "keep"}, {"ifname", "eth0"}}};
  cni::CmdArgs gc = Args(gc_conf.dump(), "");
  REQUIRE(Gc(gc).ok());
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (name.rfind("10.", 0) == 0) left.push_back(name + "=" + Slurp(e.path()));
  }
  std::sort(left.begin(), left.end());
  CHECK(left == std::vector<std::string>{"10.0.0.100=keep", "10.0.0.2=keep\r\neth0"});
  // The index followed: CHECK and DEL still work after GC.
  CHECK(Check(Args(conf, "keep")).ok());
  CHECK(!Check(Args(conf, "drop")).ok());
  REQUIRE(Del(Args(conf, "keep")).ok());
  CHECK(!fs::exists(dir / "10.0.0.2"));
}

TEST_CASE("STATUS checks the store directory without creating it", "[host-local][handlers]") {
  cni::test::TempDir tmp;
  CHECK(
      Status(Args(Conf(tmp.str() + "/a/b", R"([[{"subnet":"10.0.0.0/24"}]])"), ""))
          .ok());
  CHECK(!fs::exists(tmp.path() / "a"));
  std::ofstream(tmp.path() / "f") << "";
  auto st =
      Status(Args(Conf(tmp.str() + "/f", R"([[{"subnet":"10.0.0.0/24"}]])"), ""));
  REQUIRE(!st.ok());
  CHECK(cni::CodeOf(st) == 50);
}

// Every built plugin against input a runtime should never send but an attacker
// or a broken runtime can: bytes that are not UTF-8 in the names ADD prints
// back, and configurations nested deep enough to exhaust a recursive parser.
// Each must be refused with its CNI code before any side effect (the ADD here
// names a namespace that does not exist, so reaching the handler would be a
// different error), as one JSON error document on stdout.
#include <catch2/catch.hpp>

#include "cni/base/json.h"
#include "support/run.h"

namespace {

using cni::Json;
using cni::test::PluginCall;
using cni::test::RunPlugin;
using cni::test::RunResult;

const std::vector<std::string>& Plugins() {
  static const std::vector<std::string> all = {"bridge", "ptp",    "macvlan", "ipvlan",  "vlan",     "loopback",
                                               "host-local", "static", "tuning",  "portmap", "bandwidth", "sbr", "vrf"};
  return all;
}

PluginCall AddCall(const std::string& config) {
  PluginCall c;
  c.command = "ADD";
  c.container_id = "ctr-hostile";
  c.netns = "/var/run/netns/hostile-does-not-exist";
  c.ifname = "eth0";
  c.config = config;
  return c;
}

std::string Conf(const std::string& type, const std::string& extra = "") {
  return R"({"cniVersion":"1.0.0","name":"hostile","type":")" + type + "\"" + extra + "}";
}

// The one error document the plugin printed; fails the test if there is none.
Json ErrorDoc(const RunResult& r) {
  INFO("exit " << r.exit_code << " out: " << r.out << " err: " << r.err);
  REQUIRE(r.exit_code == 1);  // an error, not a crash (a signal is 128+N)
  Json doc = Json::parse(r.out, nullptr, false);
  REQUIRE(doc.is_object());
  return doc;
}

}  // namespace

TEST_CASE("hostile input: CNI_IFNAME or CNI_NETNS that is not UTF-8 is code 4 in every plugin", "[process]") {
  for (const std::string& plugin : Plugins()) {
    for (const char* key : {"ifname", "netns"}) {
      INFO(plugin << " " << key);
      PluginCall call = AddCall(Conf(plugin));
      (std::string(key) == "ifname" ? call.ifname : call.netns) += "\xff";
      Json doc = ErrorDoc(RunPlugin(plugin, call));
      CHECK(doc["code"] == 4);
      // skel's own refusal, named by the plugin (its file name).
      CHECK(doc["msg"] == plugin + (std::string(key) == "ifname" ? ": CNI_IFNAME is not valid UTF-8"
                                                                  : ": CNI_NETNS is not valid UTF-8"));
    }
  }
}

TEST_CASE("hostile input: a configuration nested 100,000 levels deep is code 6 in every plugin", "[process]") {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  for (const std::string& plugin : Plugins()) {
    INFO(plugin);
    Json doc = ErrorDoc(RunPlugin(plugin, AddCall(Conf(plugin, ",\"x\":" + deep))));
    CHECK(doc["code"] == 6);
    CHECK(doc["msg"].get<std::string>().find("nested deeper than") != std::string::npos);
  }
}

// etcd-ipam's configuration: the keys of docs/PLUGINS.md, defaults, and
// the codes of bad input (6 wrong type, 7 bad value), before any etcd contact.
#include <unistd.h>

#include <string>

#include <catch2/catch.hpp>

#include "cni/base/error.h"
#include "cni/base/json.h"
#include "cni/protocol/skel.h"
#include "config.h"
#include "etcd_client.h"
#include "etcd_ipam.h"

namespace {

using cni::Json;
using cni::etcdipam::Config;

Json Base() {
  return Json::parse(R"({"cniVersion":"1.1.0","name":"net1","type":"etcd-ipam",
    "ipam":{"type":"etcd-ipam","ranges":[[{"subnet":"10.1.0.0/24"}]],
            "etcd":{"endpoints":["http://127.0.0.1:2379"]}}})");
}

absl::StatusOr<Config> Parse(const Json& conf, const std::string& cni_args = "") {
  cni::CmdArgs args;
  args.container_id = "c1";
  args.ifname = "eth0";
  args.args = cni_args;
  args.stdin_data = conf.dump();
  auto parsed = cni::NetConf::Parse(args.stdin_data);
  REQUIRE(parsed.ok());
  args.conf = *parsed;
  return Config::Parse(args);
}

int CodeOfParse(const Json& conf) {
  absl::StatusOr<Config> c = Parse(conf);
  REQUIRE(!c.ok());
  return cni::CodeOf(c.status());
}

}  // namespace

TEST_CASE("etcd-ipam config: defaults and every key", "[etcd-ipam]") {
  absl::StatusOr<Config> c = Parse(Base());
  REQUIRE(c.ok());
  CHECK(c->etcd.prefix == "/cni/ipam");
  CHECK(c->etcd.timeout_seconds == 5);
  CHECK(c->ranges.size() == 1);
  CHECK(c->ranges[0][0].gateway.ToString() == "10.1.0.1");
  CHECK(cni::etcdipam::IpKey(*c, *cni::net::IpAddress::Parse("10.1.0.7")) ==
        "/cni/ipam/net1/ips/10.1.0.7");
  CHECK(cni::etcdipam::AttachmentKey(*c, "c1", "eth0") == "/cni/ipam/net1/attachments/c1/eth0");
  char host[256] = {};
  REQUIRE(gethostname(host, sizeof(host) - 1) == 0);
  CHECK(c->node_name == host);  // GC's identity defaults to the host name

  Json full = Base();
  full["ipam"]["exclude"] = {"10.1.0.0/28"};
  full["ipam"]["dns"] = {{"nameservers", {"10.1.0.53"}}};
  full["ipam"]["routes"] = {{{"dst", "0.0.0.0/0"}}};
  full["ipam"]["etcd"]["prefix"] = "/x/y";
  full["ipam"]["etcd"]["timeout"] = 2;
  full["ipam"]["nodeName"] = "worker-7";
  c = Parse(full, "IP=10.1.0.77");
  REQUIRE(c.ok());
  CHECK(c->node_name == "worker-7");
  CHECK(c->etcd.prefix == "/x/y");
  CHECK(c->etcd.timeout_seconds == 2);
  CHECK(c->dns.nameservers == std::vector<std::string>{"10.1.0.53"});
  CHECK(c->routes.size() == 1);
  CHECK(c->Excluded(*cni::net::IpAddress::Parse("10.1.0.15")));
  CHECK(!c->Excluded(*cni::net::IpAddress::Parse("10.1.0.16")));
  REQUIRE(c->requested_ips.size() == 1);
  CHECK(c->requested_ips[0].ToString() == "10.1.0.77");
}

TEST_CASE("etcd-ipam config: bad input is code 6 or 7", "[etcd-ipam]") {
  Json j = Base();
  j["ipam"].erase("etcd");
  CHECK(CodeOfParse(j) == 7);
  j = Base();
  j["ipam"]["etcd"]["endpoints"] = Json::array();
  CHECK(CodeOfParse(j) == 7);
  j = Base();
  j["ipam"]["etcd"]["endpoints"] = {"127.0.0.1:2379"};  // no scheme
  CHECK(CodeOfParse(j) == 7);
  j = Base();
  j["ipam"]["etcd"]["endpoints"] = "http://127.0.0.1:2379";
  CHECK(CodeOfParse(j) == 6);
  j = Base();
  j["ipam"]["etcd"]["timeout"] = "5";
  CHECK(CodeOfParse(j) == 6);
  j = Base();
  j["ipam"]["etcd"]["timeout"] = 0;
  CHECK(CodeOfParse(j) == 7);
  j = Base();
  j["ipam"]["etcd"]["prefix"] = "cni/";
  CHECK(CodeOfParse(j) == 7);
  j = Base();
  j["ipam"]["etcd"]["certFile"] = "/c.pem";  // without keyFile
  CHECK(CodeOfParse(j) == 7);
  j = Base();
  j["ipam"]["exclude"] = {"10.1.0.1"};
  CHECK(CodeOfParse(j) == 7);
  j = Base();
  j["ipam"]["exclude"] = "10.1.0.0/28";
  CHECK(CodeOfParse(j) == 6);
  j = Base();
  j["ipam"]["ranges"] = {{{{"subnet", "10.1.0.1/24"}}}};  // host bits: host-local's rule
  CHECK(CodeOfParse(j) == 7);
  j = Base();
  j["ipam"]["nodeName"] = 7;
  CHECK(CodeOfParse(j) == 6);
  j = Base();
  j["name"] = "a/b";
  CHECK(CodeOfParse(j) == 7);
  j = Base();
  j["ipam"]["exclude"] = {"10.1.0.0/28"};
  absl::StatusOr<Config> c = Parse(j, "IP=10.1.0.5");  // requested inside exclude
  REQUIRE(!c.ok());
  CHECK(cni::CodeOf(c.status()) == 7);
}

TEST_CASE("etcd-ipam client: request JSON is etcd's gateway format", "[etcd-ipam]") {
  using namespace cni::etcdipam;
  // Keys and values base64, int64 as strings, the enums by name.
  CHECK(op::Put("/a", "v") == Json::parse(R"({"request_put":{"key":"L2E=","value":"dg=="}})"));
  CHECK(op::Absent("/a") ==
        Json::parse(R"({"key":"L2E=","target":"CREATE","result":"EQUAL","create_revision":"0"})"));
  CHECK(op::Range("/a", "/b", 3, true) ==
        Json::parse(R"({"request_range":{"key":"L2E=","range_end":"L2I=","limit":"3","serializable":true}})"));
  CHECK(PrefixEnd("/cni/ipam/n/attachments/") == "/cni/ipam/n/attachments0");
  Json resp = Json::parse(
      R"({"response_range":{"kvs":[{"key":"L2E=","value":"dg==","create_revision":"4","mod_revision":"9"}],"count":"1"}})");
  auto kvs = RangeKvs(resp);
  REQUIRE(kvs.ok());
  REQUIRE(kvs->size() == 1);
  CHECK((*kvs)[0].key == "/a");
  CHECK((*kvs)[0].value == "v");
  CHECK((*kvs)[0].create_revision == 4);
  CHECK((*kvs)[0].mod_revision == 9);
  CHECK(RangeKvs(Json::parse(R"({"response_range":{"count":"0"}})"))->empty());
}

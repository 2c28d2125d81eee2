// JoinErrors (DEL's "report every failure") and CheckPrintableAt (ADD's early
// check that the result can be printed at the configuration's version).
#include <catch2/catch.hpp>

#include "cni/base/error.h"
#include "cni/protocol/types.h"
#include "cni/protocol/version.h"

TEST_CASE("JoinErrors keeps every message and the first failure's code", "[unit][error]") {
  CHECK(cni::JoinErrors({}).ok());
  absl::Status one = cni::Error(cni::ErrorCode::kIoFailure, "disk");
  CHECK(cni::JoinErrors({one}) == one);
  absl::Status both = cni::JoinErrors({one, cni::Error(cni::ErrorCode::kInternal, "netlink")});
  CHECK(both.message() == "disk; netlink");
  CHECK(cni::CodeOf(both) == static_cast<int>(cni::ErrorCode::kIoFailure));
  // Steps that succeeded count for nothing, so callers may push every status.
  CHECK(cni::JoinErrors({absl::OkStatus(), absl::OkStatus()}).ok());
  CHECK(cni::JoinErrors({absl::OkStatus(), one, absl::OkStatus()}) == one);
}

TEST_CASE("CheckPrintableAt: a result without IPs does not fit 0.2.0, nor a config without a version", "[unit][version]") {
  cni::Result result;  // no IPs: 0.1.0/0.2.0 have no shape for that (upstream fails too)
  cni::NetConf conf;
  conf.cni_version = "1.0.0";
  CHECK(cni::CheckPrintableAt(result, conf).ok());
  conf.cni_version = "0.2.0";
  absl::Status st = cni::CheckPrintableAt(result, conf);
  CHECK_FALSE(st.ok());
  CHECK(cni::CodeOf(st) == 1);
  conf.cni_version = "";  // spec: absent means 0.1.0
  CHECK_FALSE(cni::CheckPrintableAt(result, conf).ok());
  cni::IpConfig ip;
  ip.address = *cni::net::IpPrefix::Parse("10.0.0.2/24");
  result.ips.push_back(ip);
  CHECK(cni::CheckPrintableAt(result, conf).ok());
}

// Why bridge and ptp need no printability check of their own: after
// IpamLease::RequireAddresses the result has an address, and that prints at
// every version skel lets through to the handler.
TEST_CASE("CheckPrintableAt: a result with an address prints at every version", "[unit][version]") {
  cni::Result result;
  cni::IpConfig ip;
  ip.address = *cni::net::IpPrefix::Parse("fd00::2/64");
  result.ips.push_back(ip);
  cni::NetConf conf;
  for (const std::string& version : cni::AllVersions()) {
    INFO(version);
    conf.cni_version = version;
    CHECK(cni::CheckPrintableAt(result, conf).ok());
  }
}

// IpamLease against the built host-local: released unless committed.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>

#include "absl/strings/match.h"
#include "cni/base/error.h"
#include "cni/plugin/ipam_lease.h"
#include "cni/protocol/skel.h"
#include "support/run.h"

namespace {

using cni::Json;

// host-local's store for the network "leasenet".
struct Store {
  cni::test::TempDir tmp;
  std::string dir = tmp.str();
  bool Reserved(const std::string& ip) const {
    return std::filesystem::exists(dir + "/leasenet/" + ip);
  }
};

// Acquires a lease, runs `then` on it, and drops it; returns whether the
// address is still reserved afterwards.
template <typename Fn>
bool ReservedAfter(const Store& store, const cni::CmdArgs& args, Fn then) {
  {
    absl::StatusOr<cni::IpamLease> lease = cni::IpamLease::Acquire(args, "host-local");
    REQUIRE(lease.ok());
    CHECK(store.Reserved("10.7.0.2"));
    then(*lease);
  }
  return store.Reserved("10.7.0.2");
}

cni::CmdArgs LeaseArgs(const Store& store, const std::string& version) {
  Json conf = {{"cniVersion", version},
               {"name", "leasenet"},
               {"type", "bridge"},
               {"ipam", {{"type", "host-local"}, {"subnet", "10.7.0.0/24"}, {"dataDir", store.dir}}}};
  cni::CmdArgs a;
  a.container_id = "ctr-lease";
  a.ifname = "eth0";
  a.netns = "/var/run/netns/none";
  a.plugin_dirs = {cni::test::PluginDir()};
  a.stdin_data = conf.dump();
  a.conf = *cni::NetConf::Parse(a.stdin_data);
  a.env = {"CNI_CONTAINERID=ctr-lease", "CNI_IFNAME=eth0", "CNI_NETNS=/var/run/netns/none",
           "CNI_PATH=" + cni::test::PluginDir(), "CNI_COMMAND=ADD", "PATH=/usr/bin:/bin"};
  return a;
}

}  // namespace

TEST_CASE("IpamLease: an ADD that returns before Commit releases the address", "[invoke]") {
  Store store;
  CHECK_FALSE(ReservedAfter(store, LeaseArgs(store, "1.0.0"), [](cni::IpamLease& lease) {
    REQUIRE(lease.RequireAddresses().ok());
    CHECK(lease.result().ips[0].address.ToString() == "10.7.0.2/24");
  }));
}

TEST_CASE("IpamLease: Commit keeps the address when the result prints at the config's version", "[invoke]") {
  Store store;
  CHECK(ReservedAfter(store, LeaseArgs(store, "1.0.0"), [](cni::IpamLease& lease) {
    cni::IpamLease moved = std::move(lease);  // ownership moves; one release at most
    REQUIRE(moved.Commit(moved.result()).ok());
  }));
}

TEST_CASE("IpamLease: a result that cannot print at the config's version is refused and released", "[invoke]") {
  Store store;
  CHECK_FALSE(ReservedAfter(store, LeaseArgs(store, "0.2.0"), [](cni::IpamLease& lease) {
    cni::Result empty;  // no IPs: 0.2.0 has no shape for it
    absl::Status st = lease.Commit(empty);
    CHECK(cni::CodeOf(st) == 1);
    CHECK(absl::StartsWith(st.message(), "IPAM result: "));
  }));
}

TEST_CASE("IpamLease: the IPAM plugin's failure comes back with its code", "[invoke]") {
  Store store;
  cni::CmdArgs args = LeaseArgs(store, "1.0.0");
  args.stdin_data = Json{{"cniVersion", "1.0.0"}, {"name", "leasenet"}, {"type", "bridge"},
                         {"ipam", {{"type", "host-local"}, {"dataDir", store.dir}}}}.dump();
  args.conf = *cni::NetConf::Parse(args.stdin_data);
  absl::StatusOr<cni::IpamLease> lease = cni::IpamLease::Acquire(args, "host-local");
  REQUIRE_FALSE(lease.ok());
  CHECK(cni::CodeOf(lease.status()) != 999);
}

// The reservation store: upstream's exact on-disk format, and the owner index.
#include "store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/run.h"

namespace fs = std::filesystem;
using cni::hostlocal::Store;
using cni::hostlocal::StoreLock;

namespace {

cni::net::IpAddress Ip(const char* s) { return *cni::net::IpAddress::Parse(s); }

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void Spit(const fs::path& p, const std::string& s) {
  std::ofstream out(p, std::ios::binary);
  out << s;
}

int Mode(const fs::path& p) {
  struct stat st;
  REQUIRE(stat(p.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

std::unique_ptr<Store> OpenLocked(const std::string& dir) {
  auto s = Store::Open(dir);
  REQUIRE(s.ok());
  REQUIRE((*s)->Lock().ok());
  return *std::move(s);
}

}  // namespace

TEST_CASE("addresses are printed the way Go prints them", "[host-local][store]") {
  using cni::hostlocal::AddressText;
  CHECK(AddressText(Ip("10.1.2.3")) == "10.1.2.3");
  CHECK(AddressText(Ip("2001:db8::5")) == "2001:db8::5");
  CHECK(AddressText(Ip("2001:db8:0:1:0:0:0:5")) == "2001:db8:0:1::5");
  CHECK(AddressText(Ip("2001:0:0:1:0:0:0:5")) == "2001:0:0:1::5");
  CHECK(AddressText(Ip("2001:db8:1:1:1:1:0:1")) ==
        "2001:db8:1:1:1:1:0:1");  // no "::" for one group
  CHECK(AddressText(Ip("::")) == "::");
  CHECK(AddressText(Ip("::1")) == "::1");
  CHECK(AddressText(Ip("::1.2.3.4")) == "::102:304");  // glibc would print "::1.2.3.4"
  CHECK(AddressText(Ip("fe80::")) == "fe80::");
}

TEST_CASE("reservation files are byte-for-byte upstream's", "[host-local][store]") {
  cni::test::TempDir tmp;
  std::string dir = tmp.str() + "/data/net1";
  auto store = OpenLocked(dir);
  CHECK(Mode(dir) == 0755);
  CHECK(fs::exists(dir + "/lock"));

  auto ok = store->Reserve("  c1 ", "eth0", Ip("10.1.0.2"), 0);
  REQUIRE(ok.ok());
  CHECK(*ok);
  CHECK(Slurp(dir + "/10.1.0.2") == "c1\r\neth0");  // ID trimmed, no trailing newline
  CHECK(Mode(dir + "/10.1.0.2") == 0600);
  CHECK(Slurp(dir + "/last_reserved_ip.0") == "10.1.0.2");

  auto again = store->Reserve("c2", "eth0", Ip("10.1.0.2"), 0);
  REQUIRE(again.ok());
  CHECK(!*again);
  CHECK(Slurp(dir + "/10.1.0.2") == "c1\r\neth0");

  REQUIRE(store->Reserve("c1", "eth0", Ip("2001:db8::2"), 1).ok());
  CHECK(Slurp(dir + "/2001:db8::2") == "c1\r\neth0");
  CHECK(Slurp(dir + "/last_reserved_ip.1") == "2001:db8::2");
  REQUIRE(store->LastReservedIp(1).has_value());
  CHECK(store->LastReservedIp(1)->ToString() == "2001:db8::2");
  CHECK(!store->LastReservedIp(7).has_value());

  auto mine = store->GetByAttachment("c1", "eth0");
  REQUIRE(mine.ok());
  CHECK(mine->size() == 2);
  REQUIRE(store->ReleaseByAttachment("c1", "eth0").ok());
  CHECK(!fs::exists(dir + "/10.1.0.2"));
  CHECK(!fs::exists(dir + "/2001:db8::2"));
  REQUIRE(store->Unlock().ok());
}

TEST_CASE("our index files can never match upstream's owner comparison", "[host-local][store]") {
  cni::test::TempDir tmp;
  std::string dir = tmp.str() + "/net1";
  auto store = OpenLocked(dir);
  REQUIRE(store->Reserve("c1", "eth0", Ip("10.1.0.2"), 0).ok());
  REQUIRE(store->Unlock().ok());
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir + "/.cni-cpp-index")) {
    if (!e.is_regular_file()) continue;
    ++files;
    std::string content = Slurp(e.path());
    // Upstream deletes files whose trimmed content equals "<id>\r\n<ifname>" or "<id>";
    // neither can contain a space.
    CHECK(content.find(' ') != std::string::npos);
    CHECK(!cni::net::IpAddress::Parse(e.path().filename().string()).ok());
  }
  CHECK(files == 2);  // the stamp and one bucket
}

TEST_CASE("release by attachment handles old ID-only files", "[host-local][store]") {
  cni::test::TempDir tmp;
  std::string dir = tmp.str() + "/net1";
  fs::create_directories(dir);
  Spit(dir + "/10.1.0.5", "old-id\n");        // written by an ancient upstream
  Spit(dir + "/10.1.0.6", "old-id\r\neth1");  // a current one, other interface
  auto store = OpenLocked(dir);
  CHECK(store->index_rebuilds() == 1);
  // eth1 owns a current-format file, so the ID-only file is kept (upstream's rule).
  REQUIRE(store->ReleaseByAttachment("old-id", "eth1").ok());
  CHECK(!fs::exists(dir + "/10.1.0.6"));
  CHECK(fs::exists(dir + "/10.1.0.5"));
  auto found = store->FindByAttachment("old-id", "eth0");
  REQUIRE(found.ok());
  CHECK(*found);  // the ID-only file counts for any interface
  REQUIRE(store->ReleaseByAttachment("old-id", "eth0").ok());
  CHECK(!fs::exists(dir + "/10.1.0.5"));
  REQUIRE(store->Unlock().ok());
}

TEST_CASE("a foreign change to the directory makes the next lock rebuild the index",
          "[host-local][store]") {
  cni::test::TempDir tmp;
  std::string dir = tmp.str() + "/net1";
  {
    auto store = OpenLocked(dir);
    REQUIRE(store->Reserve("c1", "eth0", Ip("10.1.0.2"), 0).ok());
    REQUIRE(store->Unlock().ok());
    REQUIRE(store->Lock().ok());
    CHECK(store->index_rebuilds() == 1);  // only the very first lock (new directory)
    REQUIRE(store->Unlock().ok());
  }
  // "Upstream" reserves for c2 and releases c1 behind our back.
  Spit(dir + "/10.1.0.3", "c2\r\neth0");
  fs::remove(dir + "/10.1.0.2");
  auto store = OpenLocked(dir);
  CHECK(store->index_rebuilds() == 1);
  auto c2 = store->GetByAttachment("c2", "eth0");
  REQUIRE(c2.ok());
  REQUIRE(c2->size() == 1);
  CHECK((*c2)[0].ToString() == "10.1.0.3");
  auto c1 = store->GetByAttachment("c1", "eth0");
  REQUIRE(c1.ok());
  CHECK(c1->empty());
  REQUIRE(store->Unlock().ok());
  REQUIRE(store->Lock().ok());
  CHECK(store->index_rebuilds() == 1);  // trusted again: no second rebuild
  REQUIRE(store->Unlock().ok());
}

TEST_CASE("a stale index entry never deletes somebody else's file", "[host-local][store]") {
  cni::test::TempDir tmp;
  std::string dir = tmp.str() + "/net1";
  auto store = OpenLocked(dir);
  REQUIRE(store->Reserve("c1", "eth0", Ip("10.1.0.2"), 0).ok());
  // Swap the owner without touching the directory (same file, rewritten in
  // place): the index still says c1.
  Spit(dir + "/10.1.0.2", "c9\r\neth0");
  REQUIRE(store->ReleaseByAttachment("c1", "eth0").ok());
  CHECK(Slurp(dir + "/10.1.0.2") == "c9\r\neth0");
  REQUIRE(store->ReleaseIp("c1", "eth0", Ip("10.1.0.2")).ok());
  CHECK(fs::exists(dir + "/10.1.0.2"));
  REQUIRE(store->Unlock().ok());
}

TEST_CASE("scan, reserved addresses and releasing a list", "[host-local][store]") {
  cni::test::TempDir tmp;
  std::string dir = tmp.str() + "/net1";
  auto store = OpenLocked(dir);
  REQUIRE(store->Reserve("a", "eth0", Ip("10.1.0.2"), 0).ok());
  REQUIRE(store->Reserve("b", "eth0", Ip("10.1.0.3"), 0).ok());
  REQUIRE(store->Reserve("b", "eth1", Ip("2001:db8::3"), 1).ok());
  auto all = store->Scan();
  REQUIRE(all.ok());
  CHECK(all->size() == 3);  // lock, last_reserved_ip.* and the index are not reservations
  auto taken = store->ReservedAddresses();
  REQUIRE(taken.ok());
  CHECK(taken->size() == 3);
  CHECK(taken->contains(Ip("2001:db8::3")));
  std::vector<cni::hostlocal::Reservation> victims;
  for (const auto& r : *all) {
    if (r.owner != "a\r\neth0") victims.push_back(r);
  }
  REQUIRE(store->ReleaseReservations(victims).ok());
  CHECK(fs::exists(dir + "/10.1.0.2"));
  CHECK(!fs::exists(dir + "/10.1.0.3"));
  CHECK(!fs::exists(dir + "/2001:db8::3"));
  REQUIRE(store->Unlock().ok());
}

TEST_CASE("the lock is exclusive between store handles", "[host-local][store]") {
  cni::test::TempDir tmp;
  std::string dir = tmp.str() + "/net1";
  auto a = Store::Open(dir);
  auto b = Store::Open(dir);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  REQUIRE((*a)->Lock().ok());
  // A second open file description cannot take the flock while the first holds it.
  int fd = open((dir + "/lock").c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  CHECK(flock(fd, LOCK_EX | LOCK_NB) != 0);
  REQUIRE((*a)->Unlock().ok());
  CHECK(flock(fd, LOCK_EX | LOCK_NB) == 0);
  close(fd);
}

TEST_CASE("a symlink planted over an index bucket is rebuilt, not followed",
          "[host-local][store]") {
  cni::test::TempDir tmp;
  std::string dir = tmp.str() + "/data/net1";
  {
    auto store = OpenLocked(dir);
    REQUIRE(*store->Reserve("c1", "eth0", Ip("10.1.0.2"), 0));
    REQUIRE(store->Unlock().ok());
  }
  // The bucket holding c1's entry becomes a symlink to a file outside the
  // store, while the stamp still says the index is current.
  fs::path bucket = fs::path(dir) / ".cni-cpp-index" /
                    cni::hostlocal::AttachmentIndex::BucketName(cni::hostlocal::OwnerKey("c1", "eth0"));
  REQUIRE(fs::exists(bucket));
  Spit(tmp.path() / "victim", "precious");
  fs::remove(bucket);
  fs::create_symlink(tmp.path() / "victim", bucket);

  auto store = OpenLocked(dir);
  CHECK(store->index_rebuilds() == 0);
  auto found = store->FindByAttachment("c1", "eth0");
  REQUIRE(found.ok());
  CHECK(*found);
  CHECK(store->index_rebuilds() == 1);
  REQUIRE(store->ReleaseByAttachment("c1", "eth0").ok());
  CHECK(!fs::exists(dir + "/10.1.0.2"));
  CHECK(Slurp(tmp.path() / "victim") == "precious");
  CHECK(!fs::is_symlink(bucket));
}

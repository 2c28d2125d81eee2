// cni/base/fs.h: bounded reads of configured files, the atomic writer, mkdir -p.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "cni/base/error.h"
#include "cni/base/fs.h"
#include "support/run.h"

namespace {

// A scratch directory (support/run.h) with "dir / name" for paths in it.
struct TempDir {
  cni::test::TempDir tmp;
  std::string path = tmp.str();
  std::string operator/(const std::string& name) const { return path + "/" + name; }
};

void WriteText(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

}  // namespace

TEST_CASE("fs: ReadRegularFile refuses devices, FIFOs, directories and oversized files", "[unit][fs]") {
  TempDir dir;
  WriteText(dir / "resolv.conf", "nameserver 10.0.0.1\n");
  CHECK(*cni::ReadRegularFile(dir / "resolv.conf") == "nameserver 10.0.0.1\n");
  // Through a symlink: /etc/resolv.conf often is one.
  REQUIRE(symlink((dir / "resolv.conf").c_str(), (dir / "link").c_str()) == 0);
  CHECK(cni::ReadRegularFile(dir / "link").ok());

  absl::StatusOr<std::string> zero = cni::ReadRegularFile("/dev/zero");  // never ends if read
  REQUIRE_FALSE(zero.ok());
  CHECK(cni::CodeOf(zero.status()) == 5);
  CHECK(zero.status().message() == "reading /dev/zero: not a regular file");
  CHECK_FALSE(cni::ReadRegularFile(dir.path).ok());
  REQUIRE(mkfifo((dir / "fifo").c_str(), 0600) == 0);
  CHECK_FALSE(cni::ReadRegularFile(dir / "fifo").ok());  // and does not block

  WriteText(dir / "big", std::string(2000, 'x'));
  absl::StatusOr<std::string> big = cni::ReadRegularFile(dir / "big", 1000);
  REQUIRE_FALSE(big.ok());
  CHECK(big.status().message() == "reading " + (dir / "big") + ": larger than 1000 bytes");

  absl::StatusOr<std::string> missing = cni::ReadRegularFile(dir / "nope");
  REQUIRE_FALSE(missing.ok());
  CHECK(cni::ErrnoOf(missing.status()) == ENOENT);
  CHECK(cni::CodeOf(missing.status()) == 5);
  CHECK(*cni::ReadRegularFileIfExists(dir / "nope") == std::nullopt);
}

TEST_CASE("fs: WriteFileAtomic replaces the file, sets its mode and leaves no temporary", "[unit][fs]") {
  TempDir dir;
  const std::string path = dir / "a/b/record";
  CHECK_FALSE(cni::WriteFileAtomic(path, "x").ok());  // no parents without make_parents
  CHECK(cni::WriteFileAtomic(path, "one", {.mode = 0644, .make_parents = true}).ok());
  CHECK(*cni::ReadRegularFile(path) == "one");
  CHECK(cni::WriteFileAtomic(path, "two").ok());
  CHECK(*cni::ReadRegularFile(path) == "two");
  struct stat st;
  REQUIRE(stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  CHECK(access(cni::TempPathFor(path).c_str(), F_OK) != 0);
}

TEST_CASE("fs: a symlink planted at the temporary or the target name is never written through", "[unit][fs]") {
  TempDir dir;
  WriteText(dir / "victim", "keep");
  const std::string path = dir / "state";
  REQUIRE(symlink((dir / "victim").c_str(), cni::TempPathFor(path).c_str()) == 0);
  CHECK(cni::WriteFileAtomic(path, "mine").ok());
  CHECK(*cni::ReadRegularFile(dir / "victim") == "keep");
  CHECK(*cni::ReadRegularFile(path) == "mine");
  // A link at the target itself is replaced, not followed.
  const std::string linked = dir / "linked";
  REQUIRE(symlink((dir / "victim").c_str(), linked.c_str()) == 0);
  CHECK(cni::WriteFileAtomic(linked, "new").ok());
  CHECK(*cni::ReadRegularFile(dir / "victim") == "keep");
  struct stat st;
  REQUIRE(lstat(linked.c_str(), &st) == 0);
  CHECK(S_ISREG(st.st_mode));
}

TEST_CASE("fs: RemoveFileAndTemp removes what a killed writer left, and is idempotent", "[unit][fs]") {
  TempDir dir;
  const std::string path = dir / "state";
  WriteText(path, "x");
  WriteText(cni::TempPathFor(path), "half");  // a writer killed before its rename
  CHECK(cni::RemoveFileAndTemp(path).ok());
  CHECK(access(path.c_str(), F_OK) != 0);
  CHECK(access(cni::TempPathFor(path).c_str(), F_OK) != 0);
  CHECK(cni::RemoveFileAndTemp(path).ok());
}

TEST_CASE("fs: MkdirAll makes every component and refuses a file in the way", "[unit][fs]") {
  TempDir dir;
  CHECK(cni::MkdirAll(dir / "x/y/z", 0755).ok());
  CHECK(std::filesystem::is_directory(dir / "x/y/z"));
  CHECK(cni::MkdirAll(dir / "x/y/z", 0755).ok());
  WriteText(dir / "file", "");
  absl::Status st = cni::MkdirAll(dir / "file/sub", 0755);
  CHECK_FALSE(st.ok());
  CHECK(cni::ErrnoOf(st) == ENOTDIR);
}

TEST_CASE("fs: UniqueFd closes on scope exit and on reset", "[unit][fs]") {
  int raw;
  {
    absl::StatusOr<cni::UniqueFd> fd = cni::OpenFile("/dev/null", O_RDONLY);
    REQUIRE(fd.ok());
    raw = fd->get();
    CHECK(fcntl(raw, F_GETFD) >= 0);
    CHECK((fcntl(raw, F_GETFD) & FD_CLOEXEC) != 0);
  }
  CHECK(fcntl(raw, F_GETFD) == -1);
  cni::UniqueFd a(open("/dev/null", O_RDONLY));
  int first = a.get();
  a.reset(open("/dev/null", O_RDONLY));
  CHECK((fcntl(first, F_GETFD) == -1 || first == a.get()));
  CHECK(a.Close().ok());
  CHECK_FALSE(a.valid());
}

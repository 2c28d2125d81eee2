// cni::testing (the plugin author's test kit): running a program with a given
// environment and stdin and capturing what it printed; scratch directories.
// No test framework is needed for this header (cni/testing/catch.h adds the
// Catch2 parts).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace cni::testing {

// What a program (or an in-process plugin run) did.
struct RunResult {
  int exit_code = -1;    // exit status, or 128+signal when killed by a signal
  std::string out;       // stdout
  std::string err;       // stderr
};

// The PATH every program a test starts gets ("K=V", for RunProcess's `env`).
inline constexpr const char* kTestPath = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";

// Runs argv[0] (a path) with exactly `env` ("K=V") and `stdin_data`. Kills it and
// fails the result (exit_code -1, err says so) after `timeout_ms`.
RunResult RunProcess(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                     absl::string_view stdin_data, int timeout_ms = 60000);

// argv[0] looked up in /usr/sbin, /usr/bin, /sbin and /bin when it has no '/'
// (unchanged when not found there).
std::string FindProgram(const std::string& name);

// A fresh directory under /tmp, removed recursively on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }  // absolute
  std::string str() const { return path_.string(); }             // path() as text

 private:
  std::filesystem::path path_;
};

}  // namespace cni::testing

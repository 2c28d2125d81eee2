// Test helpers: run a program with a given environment and stdin, capture its
// output; run a built plugin through the CNI protocol; scratch directories.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/string_view.h"

namespace cni::test {

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

// The directory the build puts every plugin binary in.
std::string PluginDir();

// One CNI invocation of a built plugin. Empty fields are not set in the
// environment (so tests can leave variables out on purpose).
struct PluginCall {
  std::string command;
  std::string container_id;
  std::string netns;
  std::string ifname;
  std::string args;
  std::string path;  // CNI_PATH; defaults to PluginDir() when `set_path` is true
  bool set_path = true;
  std::string config;
  std::vector<std::string> extra_env;
};

// Runs plugin `name` from PluginDir() (or from `dir` when given).
RunResult RunPlugin(absl::string_view name, const PluginCall& call, absl::string_view dir = {});

// A fresh directory under /tmp, removed recursively on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string str() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace cni::test

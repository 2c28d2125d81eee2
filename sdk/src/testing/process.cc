#include "cni/testing/process.h"

#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>

#include "cni/base/exec.h"

namespace cni::testing {

RunResult RunProcess(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                     absl::string_view stdin_data, int timeout_ms) {
  RunResult result;
  CommandOptions options;
  options.timeout = std::chrono::milliseconds(timeout_ms);
  absl::StatusOr<CommandResult> run = RunCommand(argv, env, stdin_data, options);
  if (!run.ok()) {
    result.err = std::string(run.status().message());
    return result;
  }
  result.exit_code = run->timed_out ? -1 : run->exit_code;
  result.out = std::move(run->out);
  result.err = std::move(run->err);
  if (run->timed_out) result.err += "\n[test harness: process timed out]";
  return result;
}

std::string FindProgram(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  for (const char* dir : {"/usr/sbin", "/usr/bin", "/sbin", "/bin"}) {
    std::string p = std::string(dir) + "/" + name;
    if (access(p.c_str(), X_OK) == 0) return p;
  }
  return name;
}

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "cni-test-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace cni::testing

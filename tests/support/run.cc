#include "absl/strings/string_view.h"
#include "support/run.h"

#include <stdlib.h>

#include <chrono>
#include <stdexcept>

#include "cni/base/exec.h"

namespace cni::test {

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

std::string PluginDir() {
  if (const char* dir = getenv("CNI_TEST_PLUGIN_DIR")) return dir;
  return CNI_TEST_PLUGIN_DIR;
}

RunResult RunPlugin(absl::string_view name, const PluginCall& call, absl::string_view dir) {
  std::string base = dir.empty() ? PluginDir() : std::string(dir);
  std::vector<std::string> env = {kTestPath};
  auto add = [&](const char* key, const std::string& value) {
    if (!value.empty()) env.push_back(std::string(key) + "=" + value);
  };
  add("CNI_COMMAND", call.command);
  add("CNI_CONTAINERID", call.container_id);
  add("CNI_NETNS", call.netns);
  add("CNI_IFNAME", call.ifname);
  add("CNI_ARGS", call.args);
  if (call.set_path) add("CNI_PATH", call.path.empty() ? base : call.path);
  for (const auto& e : call.extra_env) env.push_back(e);
  return RunProcess({base + "/" + std::string(name)}, env, call.config);
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

}  // namespace cni::test

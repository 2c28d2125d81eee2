// Running an external program: argv array, explicit environment, input on
// stdin, output captured. Never a shell (DESIGN rule 9).
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cni {

// How RunCommand runs the program.
struct CommandOptions {
  bool capture_stderr = true;                  // false: the child inherits our stderr
  std::chrono::milliseconds timeout{0};        // 0: no limit
};

// What the program did: exit status and captured output.
struct CommandResult {
  int exit_code = -1;   // exit status, or 128+signal when killed by a signal
  std::string out;      // everything it wrote to stdout
  std::string err;      // empty unless capture_stderr
  // True when it was killed for exceeding CommandOptions::timeout.
  bool timed_out = false;
};

// Runs argv[0] (a path, not searched in PATH) with exactly `env` ("K=V").
// A failure to start the program is a failed status whose message carries
// strerror (e.g. "Text file busy") and whose canonical code maps the errno;
// any exit status, zero or not, is a successful call.
absl::StatusOr<CommandResult> RunCommand(const std::vector<std::string>& argv,
                                         const std::vector<std::string>& env,
                                         absl::string_view stdin_data,
                                         const CommandOptions& options = {});

// This process's environment (environ), as "K=V" strings in their order.
std::vector<std::string> ProcessEnvironment();

// An environment ("K=V" strings) by name. An entry without '=' is skipped; of
// two entries with one name the first wins, as getenv(3) finds it.
std::map<std::string, std::string> EnvironmentMap(const std::vector<std::string>& env);

// The path of system program `name` in /usr/sbin, /sbin, /usr/bin or /bin
// (in that order; the runtime's PATH is not trusted), "" when absent.
std::string FindSystemProgram(absl::string_view name);

}  // namespace cni

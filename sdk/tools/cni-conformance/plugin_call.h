// Running the plugin under test as a runtime does: CNI_* variables, the
// configuration on stdin, and what it answered (exit status, stdout, stderr).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "cni/base/json.h"
#include "cni/protocol/invoke.h"

namespace conformance {

// One execution: the CNI_* variables (an empty one is left unset, to test
// that a plugin notices what is missing) and the configuration on stdin.
struct Invocation : cni::CniVariables {
  std::string stdin_data;  // the configuration
};

// What the plugin did.
struct Answer {
  int exit_code = -1;           // 128+signal when it was killed
  bool timed_out = false;
  bool failed_to_start = false; // could not be executed at all
  std::string out;              // stdout
  std::string err;              // stderr
  std::optional<cni::Json> doc; // stdout parsed, when it is a JSON object

  // Exit 0 in time.
  bool ok() const { return exit_code == 0 && !timed_out && !failed_to_start; }
  // The error document's "code", -1 without one.
  int code() const;
  // The error document's "msg" and "details", joined by "; ".
  std::string message() const;
  // "exit 1: {"code":7,...} (stderr: ...)", cut to a readable length.
  std::string Describe() const;
  // Empty when this is a well-formed CNI error (non-zero exit, not killed,
  // stdout a JSON object with an integer "code" and a string "msg"); else
  // what is wrong with it.
  std::vector<std::string> ErrorDocumentProblems() const;
};

// Runs the binary at `plugin`: the tool's own environment minus every CNI_*
// variable, plus those `call` sets.
Answer Call(const std::string& plugin, const Invocation& call, std::chrono::milliseconds timeout);

}  // namespace conformance

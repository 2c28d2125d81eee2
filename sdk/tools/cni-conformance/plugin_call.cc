#include "plugin_call.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "cni/base/exec.h"

namespace conformance {
namespace {

std::string Cut(absl::string_view s, size_t n) {
  s = absl::StripAsciiWhitespace(s);
  return s.size() <= n ? std::string(s) : absl::StrCat(s.substr(0, n), "...");
}

}  // namespace

int Answer::code() const {
  if (!doc) return -1;
  auto it = doc->find("code");
  return it != doc->end() && it->is_number_integer() ? it->get<int>() : -1;
}

std::string Answer::message() const {
  if (!doc) return "";
  std::string out;
  for (const char* key : {"msg", "details"}) {
    auto it = doc->find(key);
    if (it != doc->end() && it->is_string() && !it->get<std::string>().empty()) {
      absl::StrAppend(&out, out.empty() ? "" : "; ", it->get<std::string>());
    }
  }
  return out;
}

std::string Answer::Describe() const {
  if (failed_to_start) return absl::StrCat("could not run: ", err);
  std::string out = timed_out ? "timed out" : absl::StrCat("exit ", exit_code);
  if (!absl::StripAsciiWhitespace(this->out).empty()) absl::StrAppend(&out, ": ", Cut(this->out, 300));
  if (!absl::StripAsciiWhitespace(err).empty()) absl::StrAppend(&out, " (stderr: ", Cut(err, 200), ")");
  return out;
}

std::vector<std::string> Answer::ErrorDocumentProblems() const {
  std::vector<std::string> problems;
  if (failed_to_start) return {Describe()};
  if (timed_out) return {"timed out"};
  if (exit_code == 0) return {absl::StrCat("succeeded (exit 0): ", Cut(out, 200))};
  if (exit_code > 128) problems.push_back(absl::StrCat("killed by signal ", exit_code - 128));
  if (!doc) {
    problems.push_back(absl::StrCat("stdout is not a JSON error object: \"", Cut(out, 200), "\""));
    return problems;
  }
  if (code() < 0) problems.push_back("no integer \"code\" in the error");
  auto msg = doc->find("msg");
  if (msg == doc->end() || !msg->is_string()) problems.push_back("no string \"msg\" in the error");
  return problems;
}

Answer Call(const std::string& plugin, const Invocation& call, std::chrono::milliseconds timeout) {
  std::vector<std::string> env = cni::PluginCallEnvironment(cni::ProcessEnvironment(), call);
  Answer a;
  cni::CommandOptions options;
  options.timeout = timeout;
  absl::StatusOr<cni::CommandResult> run = cni::RunCommand({plugin}, env, call.stdin_data, options);
  if (!run.ok()) {
    a.failed_to_start = true;
    a.err = std::string(run.status().message());
    return a;
  }
  a.exit_code = run->exit_code;
  a.timed_out = run->timed_out;
  a.out = std::move(run->out);
  a.err = std::move(run->err);
  absl::StatusOr<cni::Json> j = cni::ParseJson(a.out);
  if (j.ok() && j->is_object()) a.doc = *std::move(j);
  return a;
}

}  // namespace conformance

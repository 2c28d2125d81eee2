#include "absl/strings/string_view.h"
#include "cni/protocol/invoke.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <iostream>
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "cni/base/error.h"
#include "cni/base/exec.h"
#include "cni/base/status_macros.h"
#include "cni/protocol/version.h"

namespace cni {
namespace {

bool IsExecutableFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

// Turns a failed plugin run into a status: the plugin's own error document if it
// printed one, else code 999 with whatever it said.
absl::Status PluginFailure(const std::string& path, const CommandResult& run) {
  absl::StatusOr<Json> doc = ParseJson(run.out);
  if (!run.timed_out && doc.ok() && doc->is_object()) {
    const Json* code = FindKey(*doc, "code");
    const Json* msg = FindKey(*doc, "msg");
    if (code != nullptr && code->is_number_integer()) {
      std::string details;
      if (const Json* d = FindKey(*doc, "details"); d != nullptr && d->is_string()) {
        details = d->get<std::string>();
      }
      absl::Status s(absl::StatusCode::kUnknown,
                     msg != nullptr && msg->is_string() ? msg->get<std::string>() : "");
      s = WithCode(std::move(s), static_cast<ErrorCode>(code->get<int>()));
      if (!details.empty()) s = WithDetails(std::move(s), details);
      return WithErrorDocument(std::move(s), run.out);
    }
  }
  std::string what = run.timed_out ? "timed out" : absl::StrCat("exited with status ", run.exit_code);
  std::string output(absl::StripAsciiWhitespace(run.out));
  return Error(ErrorCode::kInternal,
               absl::StrCat("plugin \"", path, "\" ", what, output.empty() ? "" : ": ", output));
}

std::string ConfBytes(const CmdArgs& args, absl::string_view conf_bytes) {
  return std::string(conf_bytes.empty() ? absl::string_view(args.stdin_data) : conf_bytes);
}

absl::StatusOr<ExecOutput> Delegate(absl::string_view verb, absl::string_view type,
                                    const CmdArgs& args, absl::string_view conf_bytes) {
  ASSIGN_OR_RETURN(std::string path, FindPlugin(type, args.plugin_dirs));
  std::vector<std::string> env = args.env;
  SetEnv(env, "CNI_COMMAND", verb);
  absl::StatusOr<ExecOutput> out = ExecPlugin(path, env, ConfBytes(args, conf_bytes));
  if (!out.ok()) {
    // The delegate's error goes back unchanged (code, msg, details, and the
    // document it printed), as upstream's invoke does: runtimes and users
    // match on the IPAM plugin's own text. Which delegate failed is logged.
    std::cerr << "delegating " << verb << " to \"" << type << "\" failed: " << out.status().message()
              << "\n";
  }
  return out;
}

}  // namespace

bool IsValidPluginName(absl::string_view type) {
  return !type.empty() && type != "." && type != ".." && type.find('/') == absl::string_view::npos;
}

absl::StatusOr<std::string> FindPlugin(absl::string_view type, const std::vector<std::string>& dirs) {
  if (!IsValidPluginName(type)) {
    return Error(ErrorCode::kInvalidNetworkConfig, absl::StrCat("invalid plugin name \"", type, "\""));
  }
  for (const std::string& dir : dirs) {
    std::string candidate = absl::StrCat(dir, "/", type);
    if (IsExecutableFile(candidate)) return candidate;
  }
  return Error(ErrorCode::kInvalidNetworkConfig,
               absl::StrCat("failed to find plugin \"", type, "\" in path [",
                            absl::StrJoin(dirs, " "), "]"));
}

void SetEnv(std::vector<std::string>& env, absl::string_view name, absl::string_view value) {
  std::string prefix = absl::StrCat(name, "=");
  for (std::string& e : env) {
    if (absl::StartsWith(e, prefix)) {
      e = absl::StrCat(prefix, value);
      return;
    }
  }
  env.push_back(absl::StrCat(prefix, value));
}

std::vector<std::string> PluginCallEnvironment(const std::vector<std::string>& inherited,
                                               const CniVariables& vars) {
  std::vector<std::string> env;
  for (const std::string& kv : inherited) {
    if (!absl::StartsWith(kv, "CNI_")) env.push_back(kv);
  }
  const std::pair<const char*, const std::string*> cni[] = {
      {"CNI_COMMAND", &vars.command}, {"CNI_CONTAINERID", &vars.container_id},
      {"CNI_NETNS", &vars.netns},     {"CNI_IFNAME", &vars.ifname},
      {"CNI_ARGS", &vars.args},       {"CNI_PATH", &vars.path}};
  for (const auto& [name, value] : cni) {
    if (!value->empty()) env.push_back(absl::StrCat(name, "=", *value));
  }
  return env;
}

absl::StatusOr<ExecOutput> ExecPlugin(const std::string& path, const std::vector<std::string>& env,
                                      absl::string_view stdin_data, std::chrono::milliseconds timeout) {
  CommandOptions options;
  options.capture_stderr = false;  // the plugin's logs go where ours go
  options.timeout = timeout;
  // A plugin binary being replaced (an upgrade in progress) fails exec with
  // ETXTBSY for a moment; upstream retries, so do we, briefly.
  constexpr int kAttempts = 6;
  for (int attempt = 1;; ++attempt) {
    absl::StatusOr<CommandResult> run = RunCommand({path}, env, stdin_data, options);
    if (run.ok()) {
      if (run->exit_code != 0 || run->timed_out) return PluginFailure(path, *run);
      return ExecOutput{std::move(run->out)};
    }
    bool busy = ErrnoOf(run.status()) == ETXTBSY;
    if (!busy || attempt == kAttempts) {
      return Error(ErrorCode::kInternal, run.status().message());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50 * attempt));
  }
}

absl::StatusOr<Result> DelegateAdd(absl::string_view type, const CmdArgs& args,
                                   absl::string_view conf_bytes) {
  ASSIGN_OR_RETURN(ExecOutput out, Delegate("ADD", type, args, conf_bytes));
  // A result without cniVersion is taken to be of the configuration's version.
  std::string version = args.conf.cni_version.empty() ? "0.1.0" : args.conf.cni_version;
  ASSIGN_OR_RETURN(Result result, ParseResult(absl::string_view(out.stdout_data), version),
                   "parsing result of \"", type, "\"");
  return result;
}

absl::Status DelegateCheck(absl::string_view type, const CmdArgs& args, absl::string_view conf_bytes) {
  return Delegate("CHECK", type, args, conf_bytes).status();
}

absl::Status DelegateDel(absl::string_view type, const CmdArgs& args, absl::string_view conf_bytes) {
  if (!IsValidPluginName(type)) return absl::OkStatus();  // nothing of its making can exist
  return Delegate("DEL", type, args, conf_bytes).status();
}

bool IpamDelMayFinishOnRetry(const absl::Status& failed_del) {
  if (failed_del.ok()) return false;
  const int code = CodeOf(failed_del);
  if (code == static_cast<int>(ErrorCode::kTryAgainLater)) return true;
  return code == static_cast<int>(ErrorCode::kInternal) && ErrorDocumentOf(failed_del).empty();
}

absl::Status DelegateGc(absl::string_view type, const CmdArgs& args, absl::string_view conf_bytes) {
  return Delegate("GC", type, args, conf_bytes).status();
}

absl::Status DelegateStatus(absl::string_view type, const CmdArgs& args, absl::string_view conf_bytes) {
  return Delegate("STATUS", type, args, conf_bytes).status();
}

}  // namespace cni

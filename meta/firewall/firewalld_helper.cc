#include "firewalld_helper.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "cni/base/error.h"
#include "cni/base/exec.h"
#include "cni/base/json.h"
#include "cni/base/status_macros.h"

namespace cni::firewall::firewalld {
namespace {

// Each D-Bus call of the helper gives up after 10 s (firewalld.cc); an
// operation makes a few. A helper still running after this is hung: code 11.
constexpr std::chrono::seconds kHelperTimeout{60};

bool IsExecutable(const std::string& path) { return access(path.c_str(), X_OK) == 0; }

// The directory of the running executable ("" when it cannot be read).
std::string OwnDirectory() {
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "" : self.parent_path().string();
}

}  // namespace

absl::StatusOr<Helper> Helper::Find(const CmdArgs& args) {
  std::vector<std::string> dirs;
  if (std::string own = OwnDirectory(); !own.empty()) dirs.push_back(own);
  for (const std::string& d : args.plugin_dirs) {
    if (!d.empty()) dirs.push_back(d);
  }
  std::vector<std::string> env;
  for (const std::string& kv : args.env) {
    if (absl::StartsWith(kv, "DBUS_SYSTEM_BUS_ADDRESS=")) env.push_back(kv);
  }
  for (const std::string& d : dirs) {
    std::string path = absl::StrCat(d, "/", kHelperName);
    if (IsExecutable(path)) return Helper(std::move(path), std::move(env));
  }
  return Error(ErrorCode::kPluginNotAvailable,
               absl::StrCat("firewall: firewalld needs the helper \"", kHelperName,
                            "\" installed next to the plugin; not found in ", absl::StrJoin(dirs, ", ")));
}

absl::StatusOr<std::string> Helper::Run(const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {path_};
  argv.insert(argv.end(), args.begin(), args.end());
  ASSIGN_OR_RETURN(CommandResult r, RunCommand(argv, env_, "", {.timeout = kHelperTimeout}),
                   absl::StrCat("firewall: running ", path_));
  if (r.timed_out) {
    return Error(ErrorCode::kTryAgainLater, absl::StrCat("firewall: ", path_, " did not finish in ",
                                                         kHelperTimeout.count(), " s"));
  }
  if (r.exit_code == 0) return r.out;
  // Its CNI error, as it wrote it.
  absl::StatusOr<Json> doc = ParseJson(r.out);
  if (r.exit_code == 1 && doc.ok() && doc->is_object() && (*doc)["code"].is_number_integer() &&
      (*doc)["msg"].is_string()) {
    return Error(static_cast<ErrorCode>((*doc)["code"].get<int>()), (*doc)["msg"].get<std::string>());
  }
  return Error(ErrorCode::kInternal, absl::StrCat("firewall: ", path_, " failed (exit ", r.exit_code, "): ",
                                                  absl::StripAsciiWhitespace(r.err)));
}

absl::StatusOr<bool> Helper::FirewalldRunning() const {
  ASSIGN_OR_RETURN(std::string out, Run({"running"}));
  return absl::StripAsciiWhitespace(out) == "yes";
}

absl::Status Helper::AddSources(const std::string& zone, const std::vector<std::string>& sources) const {
  if (sources.empty()) return absl::OkStatus();
  std::vector<std::string> args = {"add", zone};
  args.insert(args.end(), sources.begin(), sources.end());
  return Run(args).status();
}

absl::Status Helper::RemoveSources(const std::string& zone, const std::vector<std::string>& sources) const {
  if (sources.empty()) return absl::OkStatus();
  std::vector<std::string> args = {"remove", zone};
  args.insert(args.end(), sources.begin(), sources.end());
  return Run(args).status();
}

absl::Status Helper::CheckSources(const std::string& zone, const std::vector<std::string>& sources) const {
  if (sources.empty()) return absl::OkStatus();
  std::vector<std::string> args = {"check", zone};
  args.insert(args.end(), sources.begin(), sources.end());
  return Run(args).status();
}

}  // namespace cni::firewall::firewalld

#include "absl/strings/string_view.h"
#include "cni/protocol/skel.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <iostream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cni/base/error.h"
#include "cni/base/exec.h"
#include "cni/base/status_macros.h"
#include "cni/protocol/version.h"

namespace cni {
namespace {

// Which CNI_* variables each command needs (the reference skel's table; the
// 1.1 spec adds GC and STATUS, which need CNI_PATH only for GC).
struct Required {
  bool container_id, netns, ifname, path;
};

Required RequiredFor(absl::string_view cmd) {
  if (cmd == "ADD" || cmd == "CHECK") return {true, true, true, true};
  if (cmd == "DEL") return {true, false, true, true};
  if (cmd == "GC") return {false, false, false, true};
  return {false, false, false, false};  // STATUS, VERSION
}

std::string Get(const std::map<std::string, std::string>& env, const std::string& key) {
  auto it = env.find(key);
  return it == env.end() ? std::string() : it->second;
}

absl::Status CheckRequiredEnv(const std::map<std::string, std::string>& env,
                              absl::string_view cmd) {
  Required r = RequiredFor(cmd);
  std::vector<std::string> missing;
  auto need = [&](bool required, const char* key) {
    if (required && Get(env, key).empty()) missing.emplace_back(key);
  };
  need(r.container_id, "CNI_CONTAINERID");
  need(r.netns, "CNI_NETNS");
  need(r.ifname, "CNI_IFNAME");
  need(r.path, "CNI_PATH");
  if (missing.empty()) return absl::OkStatus();
  return Error(ErrorCode::kInvalidEnvironment,
               absl::StrCat("required env variables [", absl::StrJoin(missing, ","), "] missing"));
}

bool IsValidName(absl::string_view s) {
  if (s.empty() || !absl::ascii_isalnum(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
  });
}

// CNI_NETNS naming the plugin's own namespace would make the plugin configure
// the host as if it were a container (spec error 8). Compared by device+inode.
absl::Status CheckNotOwnNetns(absl::string_view netns, const std::string& own_path) {
  if (netns.empty()) return absl::OkStatus();
  struct stat target, own;
  if (stat(std::string(netns).c_str(), &target) != 0 || stat(own_path.c_str(), &own) != 0) {
    return absl::OkStatus();  // a missing netns is the handler's business (DEL tolerates it)
  }
  if (target.st_dev == own.st_dev && target.st_ino == own.st_ino) {
    return Error(ErrorCode::kInvalidNetns,
                 absl::StrCat("CNI_NETNS \"", netns, "\" is the plugin's own network namespace"));
  }
  return absl::OkStatus();
}

// CNI_NETNS_OVERRIDE: the reference skel (libcni >= 1.2) skips its "CNI_NETNS
// is the plugin's own namespace" refusal when this is "1" or "true" (any
// case). Test harnesses that run a plugin inside the namespace they configure
// set it (upstream's own test utilities set "1"). Other values leave the
// check on, as upstream.
bool NetnsOverride(absl::string_view value) {
  return value == "1" || absl::EqualsIgnoreCase(value, "true");
}

// Strict UTF-8 (no overlongs, surrogates or code points past U+10FFFF).
bool IsValidUtf8(absl::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len;
    uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2, cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3, cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4, cp = c & 0x07;
    } else {
      return false;
    }
    if (i + len > s.size()) return false;
    for (size_t k = 1; k < len; ++k) {
      const unsigned char cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    static constexpr uint32_t kMinForLength[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMinForLength[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += len;
  }
  return true;
}

// ADD prints CNI_IFNAME and CNI_NETNS back in the result ("name",
// "sandbox"), and a JSON document can only hold UTF-8: a name that cannot be
// printed is refused here, before any side effect, rather than after the
// interface exists (upstream prints U+FFFD instead, naming an interface that
// does not exist). DEL and CHECK print nothing and take any name.
absl::Status CheckPrintableEnv(const std::map<std::string, std::string>& env) {
  for (const char* key : {"CNI_IFNAME", "CNI_NETNS", "CNI_CONTAINERID"}) {
    if (!IsValidUtf8(Get(env, key))) {
      return Error(ErrorCode::kInvalidEnvironment, absl::StrCat(key, " is not valid UTF-8"));
    }
  }
  return absl::OkStatus();
}

// Validates the environment and the configuration for `cmd` and builds CmdArgs.
absl::StatusOr<CmdArgs> BuildCmdArgs(const ProcessIo& io, const PluginInfo& info,
                                     const std::string& cmd) {
  RETURN_IF_ERROR(CheckRequiredEnv(io.env, cmd));
  if (cmd == "ADD") RETURN_IF_ERROR(CheckPrintableEnv(io.env));
  CmdArgs a;
  a.command = cmd;
  a.container_id = Get(io.env, "CNI_CONTAINERID");
  a.netns = Get(io.env, "CNI_NETNS");
  a.ifname = Get(io.env, "CNI_IFNAME");
  a.args = Get(io.env, "CNI_ARGS");
  a.path = Get(io.env, "CNI_PATH");
  for (absl::string_view dir : absl::StrSplit(a.path, ':', absl::SkipEmpty())) {
    a.plugin_dirs.emplace_back(dir);
  }
  a.stdin_data = io.stdin_data;
  for (const auto& [k, v] : io.env) a.env.push_back(absl::StrCat(k, "=", v));

  absl::StatusOr<NetConf> conf = NetConf::Parse(io.stdin_data);
  if (!conf.ok()) {
    // NetConf::Parse names the step ("decoding network configuration: ...").
    return WithCode(conf.status(), ErrorCode::kDecodingFailure);
  }
  a.conf = *std::move(conf);
  if (a.conf.name.empty()) return Error(ErrorCode::kInvalidNetworkConfig, "missing network name");
  if (!IsValidName(a.conf.name)) {
    return Error(ErrorCode::kInvalidNetworkConfig,
                 absl::StrCat("invalid network name \"", a.conf.name, "\""));
  }
  if (a.conf.type.empty()) return Error(ErrorCode::kInvalidNetworkConfig, "missing plugin type");

  bool per_container = cmd == "ADD" || cmd == "CHECK" || cmd == "DEL";
  if (per_container) {
    if (!IsValidContainerId(a.container_id)) {
      return Error(ErrorCode::kInvalidEnvironment,
                   absl::StrCat("invalid characters in containerID \"", a.container_id, "\""));
    }
    RETURN_IF_ERROR(ValidateInterfaceName(a.ifname));
  }

  // Version negotiation: the config's version must be one we speak.
  std::string version = a.conf.cni_version.empty() ? "0.1.0" : a.conf.cni_version;
  const auto& supported = info.supported_versions.empty() ? AllVersions() : info.supported_versions;
  if (std::find(supported.begin(), supported.end(), version) == supported.end()) {
    return Error(ErrorCode::kIncompatibleVersion, "incompatible CNI versions",
                 absl::StrCat("config is \"", version, "\", plugin supports [\"",
                              absl::StrJoin(supported, "\" \""), "\"]"));
  }
  // Version gates: CHECK arrived in 0.4.0, GC and STATUS in 1.1.0.
  auto gate = [&](absl::string_view min) -> absl::Status {
    if (VersionAtLeast(version, min)) return absl::OkStatus();
    return Error(ErrorCode::kIncompatibleVersion,
                 absl::StrCat("config version does not allow ", cmd));
  };
  if (cmd == "CHECK") RETURN_IF_ERROR(gate("0.4.0"));
  if (cmd == "GC" || cmd == "STATUS") RETURN_IF_ERROR(gate("1.1.0"));
  if (per_container && !NetnsOverride(Get(io.env, "CNI_NETNS_OVERRIDE"))) {
    RETURN_IF_ERROR(CheckNotOwnNetns(a.netns, io.own_netns_path));
  }
  return a;
}

// Calls the handler for `cmd`; on ADD prints the result at the config's version.
absl::Status Dispatch(const PluginFuncs& funcs, const CmdArgs& a, std::ostream& out) {
  const std::string& cmd = a.command;
  if (cmd == "ADD") {
    ASSIGN_OR_RETURN(Result result, funcs.add(a));
    std::string version = a.conf.cni_version.empty() ? "0.1.0" : a.conf.cni_version;
    ASSIGN_OR_RETURN(Json json, ResultToJson(result, version));
    // Indented, as upstream prints results. `replace`: printing must not be
    // able to fail (or throw) after the handler has kept its side effects.
    out << json.dump(4, ' ', false, Json::error_handler_t::replace) << "\n";
    return absl::OkStatus();
  }
  const Handler* h = cmd == "DEL" ? &funcs.del
                     : cmd == "CHECK" ? &funcs.check
                     : cmd == "GC" ? &funcs.gc
                                   : &funcs.status;
  if (!*h) return absl::OkStatus();  // nothing to clean up / check / report
  return (*h)(a);
}

bool IsKnownCommand(absl::string_view cmd) {
  return cmd == "ADD" || cmd == "DEL" || cmd == "CHECK" || cmd == "GC" || cmd == "STATUS" ||
         cmd == "VERSION";
}

// The name skel's own messages begin with (PluginInfo::name).
std::string PluginName(const PluginInfo& info) {
  return info.name.empty() ? std::string(program_invocation_short_name) : info.name;
}

// skel's own refusal of the environment (code 4) or the configuration (6,
// 7), named by the plugin as the plugin's own messages are. Other codes, and
// a handler's errors (a delegate's document is printed as it was), are left
// as they are.
absl::Status SkelRefusal(const absl::Status& status, const PluginInfo& info) {
  int code = CodeOf(status);
  bool own = code == static_cast<int>(ErrorCode::kInvalidEnvironment) ||
             code == static_cast<int>(ErrorCode::kDecodingFailure) ||
             code == static_cast<int>(ErrorCode::kInvalidNetworkConfig);
  return own ? NamedBy(status, PluginName(info)) : status;
}

// The version to stamp on an error document: the config's, when readable.
std::string ErrorVersion(absl::string_view stdin_data) {
  absl::StatusOr<Json> j = ParseJson(stdin_data);
  if (j.ok()) {
    if (const Json* v = FindKey(*j, "cniVersion"); v != nullptr && v->is_string()) {
      return v->get<std::string>();
    }
  }
  return std::string(kCurrentVersion);
}

// The version a VERSION answer carries: the one on input (spec section 5,
// "Version"), when it is a version at all; else "" (our current one).
std::string VersionAnswerVersion(absl::string_view stdin_data) {
  absl::StatusOr<Json> j = ParseJson(stdin_data);
  if (!j.ok()) return "";
  const Json* v = FindKey(*j, "cniVersion");
  if (v == nullptr || !v->is_string() || !ParseVersion(v->get<std::string>()).ok()) return "";
  return v->get<std::string>();
}

// Parses, validates and dispatches, turning any exception a handler or a
// library lets escape into an error document: catching it here unwinds the
// handler's stack, so its scope guards roll back what it had done.
absl::Status GuardedDispatch(const PluginFuncs& funcs, const PluginInfo& info, const ProcessIo& io,
                             const std::string& cmd, std::ostream& out) {
  try {
    absl::StatusOr<CmdArgs> args = BuildCmdArgs(io, info, cmd);
    if (!args.ok()) return SkelRefusal(args.status(), info);
    if (cmd == "ADD" && !funcs.add) {
      return SkelRefusal(Error(ErrorCode::kInvalidEnvironment, "ADD is not implemented"), info);
    }
    return Dispatch(funcs, *args, out);
  } catch (const std::exception& e) {
    return Error(ErrorCode::kInternal, absl::StrCat(cmd, " failed with an internal error: ", e.what()));
  } catch (...) {
    return Error(ErrorCode::kInternal, absl::StrCat(cmd, " failed with an unknown internal error"));
  }
}

// Whether `document` (another plugin's error document) still says what
// `status` says: the same code, msg and details.
bool DocumentSays(absl::string_view document, const absl::Status& status) {
  absl::StatusOr<Json> doc = ParseJson(document);
  if (!doc.ok() || !doc->is_object()) return false;
  const Json* code = FindKey(*doc, "code");
  const Json* msg = FindKey(*doc, "msg");
  const Json* details = FindKey(*doc, "details");
  std::string doc_msg = msg != nullptr && msg->is_string() ? msg->get<std::string>() : "";
  std::string doc_details =
      details != nullptr && details->is_string() ? details->get<std::string>() : "";
  return code != nullptr && code->is_number_integer() && code->get<int>() == CodeOf(status) &&
         doc_msg == status.message() && doc_details == DetailsOf(status);
}

// What a failed command prints: a delegate's error passed through unchanged
// is printed byte for byte as the delegate printed it (so the runtime sees
// the IPAM plugin's document, as with upstream); anything else as our own
// document at the config's version.
std::string PrintedError(const absl::Status& status, absl::string_view stdin_data) {
  std::string document = ErrorDocumentOf(status);
  if (!document.empty() && DocumentSays(document, status)) return document;
  return ErrorJson(status, ErrorVersion(stdin_data)) + "\n";
}

}  // namespace

bool IsValidContainerId(absl::string_view id) { return IsValidName(id); }

absl::Status ValidateInterfaceName(absl::string_view name) {
  // Upstream's words (libcni's ValidateInterfaceName), which runtimes see.
  auto bad = [](absl::string_view msg, absl::string_view details = {}) {
    return Error(ErrorCode::kInvalidEnvironment, msg, details);
  };
  if (name.empty()) return bad("interface name is empty");
  if (name.size() > 15) {
    return bad("interface name is too long", "interface name should be less than 16 characters");
  }
  if (name == "." || name == "..") return bad("interface name is . or ..");
  for (char c : name) {
    if (c == '/' || c == ':' || absl::ascii_isspace(static_cast<unsigned char>(c))) {
      return bad("interface name contains / or : or whitespace characters");
    }
  }
  return absl::OkStatus();
}

std::string ErrorJson(const absl::Status& status, absl::string_view cni_version) {
  Json j = {{"cniVersion", cni_version},
            {"code", CodeOf(status)},
            {"msg", std::string(status.message())}};
  std::string details = DetailsOf(status);
  if (!details.empty()) j["details"] = details;
  return Dump(j);
}

absl::Status RequireResultPrintable(const CmdArgs& args, std::string_view ipam_type) {
  if (!ipam_type.empty()) return absl::OkStatus();
  // A prevResult the handler cannot read is the handler's to report.
  absl::StatusOr<std::optional<Result>> prev = ParsePrevResult(args.conf);
  if (!prev.ok() || (*prev && !(*prev)->ips.empty())) return absl::OkStatus();
  return CheckPrintableAt(Result{}, args.conf);  // no address: prints from 0.3.0 on
}

absl::StatusOr<std::optional<Result>> ParsePrevResult(const NetConf& conf) {
  if (conf.prev_result.is_null()) return std::optional<Result>();
  std::string version = conf.cni_version.empty() ? "0.1.0" : conf.cni_version;
  ASSIGN_OR_RETURN(Result r, ParseResult(conf.prev_result, version), "parsing prevResult");
  return std::optional<Result>(std::move(r));
}

std::string AboutLine(absl::string_view plugin_name) {
  return absl::StrCat("CNI ", plugin_name, " plugin ", CNI_PROJECT_VERSION, " (cni-cpp)");
}

int Run(const PluginFuncs& funcs, const PluginInfo& info, const ProcessIo& io) {
  std::ostream& out = *io.out;
  std::ostream& err = *io.err;
  std::string cmd = Get(io.env, "CNI_COMMAND");
  const auto& supported = info.supported_versions.empty() ? AllVersions() : info.supported_versions;
  if (cmd.empty()) {
    // No command: a human ran us. Say what we are, as the reference skel does.
    err << info.about << "\n"
        << "CNI protocol versions supported: " << absl::StrJoin(supported, ", ") << "\n";
    return 0;
  }
  absl::Status status;
  if (!IsKnownCommand(cmd)) {
    status = SkelRefusal(Error(ErrorCode::kInvalidEnvironment, absl::StrCat("unknown CNI_COMMAND: ", cmd)), info);
  } else if (cmd == "VERSION") {
    // Upstream's skel answers with its own version whatever was asked; the
    // spec says the version on input, and libcni reads either.
    out << Dump(VersionInfoJson(VersionAnswerVersion(io.stdin_data), supported)) << "\n";
    return 0;
  } else {
    status = GuardedDispatch(funcs, info, io, cmd, out);
  }
  if (status.ok()) return 0;
  out << PrintedError(status, io.stdin_data);
  err << "CNI " << cmd << " failed: " << status.message() << "\n";
  return 1;
}

int PluginMain(const PluginFuncs& funcs, const PluginInfo& info) {
  ProcessIo io;
  io.env = EnvironmentMap(ProcessEnvironment());
  char buf[16384];
  for (;;) {
    ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));
    if (n > 0) io.stdin_data.append(buf, static_cast<size_t>(n));
    else if (n == 0 || errno != EINTR) break;
  }
  io.out = &std::cout;
  io.err = &std::cerr;
  int rc = Run(funcs, info, io);
  std::cout.flush();
  return rc;
}

}  // namespace cni

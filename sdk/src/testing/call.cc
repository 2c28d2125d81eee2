#include "cni/testing/call.h"

#include <stdlib.h>

#include <sstream>
#include <stdexcept>

#include "absl/strings/str_cat.h"
#include "cni/protocol/invoke.h"

namespace cni::testing {

std::vector<std::string> CniEnvironment(const Invocation& call) {
  std::vector<std::string> env = PluginCallEnvironment(
      {kTestPath}, {call.command, call.container_id, call.netns, call.ifname, call.args, call.path});
  env.insert(env.end(), call.env.begin(), call.env.end());
  return env;
}

Plugin Plugin::Binary(std::string path) {
  Plugin p;
  p.path_ = std::move(path);
  return p;
}

Plugin Plugin::FromEnv(absl::string_view name, const char* dir_variable) {
  const char* dir = getenv(dir_variable);
  if (dir == nullptr || *dir == '\0') {
    throw std::runtime_error(absl::StrCat("cni::testing::Plugin::FromEnv: set ", dir_variable,
                                          " to the directory holding ", name));
  }
  return Binary(absl::StrCat(dir, "/", name));
}

Plugin Plugin::InProcess(PluginFuncs funcs, PluginInfo info) {
  Plugin p;
  p.in_process_ = [funcs = std::move(funcs), info = std::move(info)](const Invocation& call) {
    ProcessIo io;
    for (const std::string& kv : CniEnvironment(call)) {
      size_t eq = kv.find('=');
      io.env[kv.substr(0, eq)] = eq == std::string::npos ? "" : kv.substr(eq + 1);
    }
    io.stdin_data = call.config;
    std::ostringstream out, err;
    io.out = &out;
    io.err = &err;
    RunResult r;
    r.exit_code = cni::Run(funcs, info, io);
    r.out = out.str();
    r.err = err.str();
    return r;
  };
  return p;
}

RunResult Plugin::Run(const Invocation& call) const {
  if (in_process_) return in_process_(call);
  return RunProcess({path_}, CniEnvironment(call), call.config);
}

RunResult Plugin::Command(const std::string& command, const Json& conf) const {
  Invocation call = defaults;
  call.command = command;
  call.config = conf.dump();
  return Run(call);
}

RunResult Plugin::Gc(const Json& conf) const {
  Invocation call = defaults;
  call.command = "GC";
  call.container_id.clear();
  call.netns.clear();
  call.ifname.clear();
  call.args.clear();
  call.config = conf.dump();
  return Run(call);
}

RunResult Plugin::About() const {
  Invocation call = defaults;
  call.command.clear();
  call.config = "{}";
  return Run(call);
}

Json WithPrevResult(Json conf, const RunResult& add) {
  Json prev = Json::parse(add.out, nullptr, /*allow_exceptions=*/false);
  if (!prev.is_object()) {
    throw std::runtime_error("cni::testing::WithPrevResult: not a result: " + Describe(add));
  }
  conf["prevResult"] = std::move(prev);
  return conf;
}

std::string WithPrevResult(const std::string& conf, const std::string& add_out) {
  Json j = Json::parse(conf);
  j["prevResult"] = Json::parse(add_out);
  return j.dump();
}

Json WithRuntimeConfig(Json conf, const Json& runtime_config) {
  conf["runtimeConfig"] = runtime_config;
  return conf;
}

Json WithValidAttachments(Json conf, const std::vector<cni::Attachment>& valid) {
  Json list = Json::array();
  for (const cni::Attachment& a : valid) list.push_back({{"containerID", a.container_id}, {"ifname", a.ifname}});
  conf["cni.dev/valid-attachments"] = list;
  return conf;
}

int ErrorCode(const RunResult& r) {
  Json j = Json::parse(r.out, nullptr, false);
  if (!j.is_object() || !j.contains("code") || !j["code"].is_number_integer()) return -1;
  return j["code"].get<int>();
}

std::string ErrorMessage(const RunResult& r) {
  Json j = Json::parse(r.out, nullptr, false);
  if (!j.is_object() || !j.contains("msg") || !j["msg"].is_string()) return r.out + r.err;
  return j["msg"].get<std::string>();
}

std::string Describe(const RunResult& r) {
  return absl::StrCat("exit ", r.exit_code, " out: ", r.out, " err: ", r.err);
}

}  // namespace cni::testing

// Fake plugins for the runtime library's unit tests: shell scripts in a temp
// dir that record what they were given (stdin, environment, call order) and
// print a canned answer. Lets the tests see exactly what the runtime sends.
#pragma once

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cni/base/json.h"
#include "cni/runtime/runtime.h"
#include "support/run.h"

namespace cni::test {

class FakePlugins {
 public:
  FakePlugins() {
    std::filesystem::create_directories(bin());
    std::filesystem::create_directories(rec());
  }

  std::string bin() const { return (dir_.path() / "bin").string(); }
  std::string rec() const { return (dir_.path() / "rec").string(); }
  std::string cache() const { return (dir_.path() / "cache").string(); }
  std::string root() const { return dir_.str(); }

  // A plugin `name` that records its call and answers with
  // <rec>/<name>.<VERB>.out (if present) and exit status <rec>/<name>.<VERB>.rc.
  void Add(const std::string& name) {
    std::string path = bin() + "/" + name;
    std::ofstream(path) << "#!/bin/sh\n"
                           "n=$(basename \"$0\")\n"
                           "echo \"$CNI_COMMAND $n $CNI_CONTAINERID\" >> \"$REC/calls\"\n"
                           "cat > \"$REC/$n.$CNI_COMMAND.stdin\"\n"
                           "env > \"$REC/$n.$CNI_COMMAND.env\"\n"
                                                      "[ -f \"$REC/$n.$CNI_COMMAND.out\" ] && cat \"$REC/$n.$CNI_COMMAND.out\"\n"
                           "[ -f \"$REC/$n.$CNI_COMMAND.rc\" ] && exit $(cat \"$REC/$n.$CNI_COMMAND.rc\")\n"
                           "exit 0\n";
    ::chmod(path.c_str(), 0755);
  }

  // What `name` prints (and its exit status) for `verb`.
  void Answer(const std::string& name, const std::string& verb, const std::string& out, int rc = 0) {
    std::ofstream(rec() + "/" + name + "." + verb + ".out") << out;
    if (rc != 0) std::ofstream(rec() + "/" + name + "." + verb + ".rc") << rc;
  }

  // The stdin `name` got for `verb`, parsed (null if it was not called).
  Json Stdin(const std::string& name, const std::string& verb) const {
    std::string s = Read(rec() + "/" + name + "." + verb + ".stdin");
    return s.empty() ? Json() : Json::parse(s);
  }
  // The value of `var` in the environment `name` got for `verb` ("<unset>" if none).
  std::string Env(const std::string& name, const std::string& verb, const std::string& var) const {
    std::istringstream in(Read(rec() + "/" + name + "." + verb + ".env"));
    for (std::string line; std::getline(in, line);) {
      if (line.rfind(var + "=", 0) == 0) return line.substr(var.size() + 1);
    }
    return "<unset>";
  }
  // Every call so far, "VERB plugin containerID", in order.
  std::vector<std::string> Calls() const {
    std::vector<std::string> calls;
    std::istringstream in(Read(rec() + "/calls"));
    for (std::string line; std::getline(in, line);) calls.push_back(line);
    return calls;
  }
  void ClearCalls() { std::filesystem::remove(rec() + "/calls"); }

  // Runtime options that find these plugins and keep the cache in the temp dir.
  runtime::Options Options(const std::vector<std::string>& extra_env = {}) const {
    runtime::Options o;
    o.plugin_dirs = {"/nonexistent-cni-dir", bin()};
    o.cache_dir = cache();
    std::vector<std::string> env = {"PATH=/usr/bin:/bin", "REC=" + rec(), "CNI_COMMAND=STALE"};
    env.insert(env.end(), extra_env.begin(), extra_env.end());
    o.base_env = env;
    return o;
  }

  static std::string Read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

 private:
  TempDir dir_;
};

}  // namespace cni::test

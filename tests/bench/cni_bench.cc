// cni_bench: times one CNI invocation of two plugin binaries (ours and the
// upstream reference) alternately, so both see the same machine state, and
// prints the medians and the ratio ours/upstream. Used by scripts/bench; it is
// not a test.
//
//   cni_bench --name NAME --ours PATH --upstream PATH --config FILE
//             [--command CMD] [--iterations N] [--env K=V]...
//             [--ours-env K=V]... [--upstream-env K=V]...   (one side only, e.g. its own
//                                                           CNI_CONTAINERID so the sides'
//                                                           state never mixes)
//             [--after-command CMD]   (run after each timed call, untimed, e.g. DEL after ADD)
//             [--after-plugin PATH]   (the binary the after-command runs; default the one
//                                     just timed. A copy under another name keeps the two
//                                     commands' processes apart in a profile, as
//                                     scripts/bench.d/floor's CNI_BENCH_SPLIT needs)
//             [--between SHELL]       (a shell command run after that, untimed, e.g. to
//                                     reset state a plugin's DEL leaves behind)
//             [--noop PATH --noop-execs N]  (also time N execs of a no-op right before
//                                     each call, with its environment and stdin: the
//                                     exec part of the call's floor, measured in the
//                                     same rounds as the call, so that the machine's
//                                     drift between runs minutes apart (exec cost moved
//                                     470-940 us within one bench run, 2026-11-25)
//                                     does not enter the ratio. Printed as "noop".)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "cni/base/exec.h"

namespace {

struct Options {
  std::string name, ours, upstream, config_path, command = "ADD", after_command, after_plugin, between, noop;
  int iterations = 200;
  int noop_execs = 1;
  std::vector<std::string> env, ours_env, upstream_env;
};

bool ParseArgs(int argc, char** argv, Options& o) {
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--name") o.name = v;
    else if (k == "--ours") o.ours = v;
    else if (k == "--upstream") o.upstream = v;
    else if (k == "--config") o.config_path = v;
    else if (k == "--command") o.command = v;
    else if (k == "--after-command") o.after_command = v;
    else if (k == "--after-plugin") o.after_plugin = v;
    else if (k == "--between") o.between = v;
    else if (k == "--iterations") o.iterations = std::stoi(v);
    else if (k == "--noop") o.noop = v;
    else if (k == "--noop-execs") o.noop_execs = std::stoi(v);
    else if (k == "--env") o.env.push_back(v);
    else if (k == "--ours-env") o.ours_env.push_back(v);
    else if (k == "--upstream-env") o.upstream_env.push_back(v);
    else return false;
  }
  return !o.ours.empty() && !o.upstream.empty() && !o.config_path.empty();
}

std::vector<std::string> EnvFor(const Options& o, bool ours, const std::string& command, int i) {
  std::vector<std::string> env = o.env;
  const std::vector<std::string>& side = ours ? o.ours_env : o.upstream_env;
  env.insert(env.end(), side.begin(), side.end());
  env.push_back("CNI_COMMAND=" + command);
  // A fresh container ID per iteration, so stateful plugins see distinct attachments.
  bool has_id = false;
  for (const auto& e : env) has_id |= e.rfind("CNI_CONTAINERID=", 0) == 0;
  if (!has_id) env.push_back("CNI_CONTAINERID=bench-" + std::to_string(i));
  return env;
}

// Runs one call; returns microseconds, or -1 on failure (reported once).
double TimedCall(const std::string& plugin, const std::vector<std::string>& env,
                 const std::string& config, bool& reported) {
  auto start = std::chrono::steady_clock::now();
  auto r = cni::RunCommand({plugin}, env, config);
  double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  if (!r.ok() || r->exit_code != 0) {
    if (!reported) {
      std::cerr << plugin << " failed: " << (r.ok() ? r->out + r->err : std::string(r.status().message()))
                << "\n";
      reported = true;
    }
    return -1;
  }
  return us;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!ParseArgs(argc, argv, o)) {
    std::cerr << "usage: cni_bench --name N --ours P --upstream P --config F [--command C] "
                 "[--after-command C] [--iterations N] [--env K=V]...\n";
    return 2;
  }
  std::ifstream f(o.config_path);
  std::stringstream ss;
  ss << f.rdbuf();
  std::string config = ss.str();
  std::vector<double> ours, upstream, noop;
  bool ours_failed = false, upstream_failed = false, noop_failed = false;
  for (int i = 0; i < o.iterations; ++i) {
    // Alternate which one goes first so neither always runs on a warmer cache.
    for (int k = 0; k < 2; ++k) {
      bool run_ours = (i + k) % 2 == 0;
      const std::string& plugin = run_ours ? o.ours : o.upstream;
      auto env = EnvFor(o, run_ours, o.command, i);
      if (!o.noop.empty()) {
        double round = 0;
        for (int j = 0; j < o.noop_execs && round >= 0; ++j) {
          double us = TimedCall(o.noop, env, config, noop_failed);
          round = us < 0 ? -1 : round + us;
        }
        if (round >= 0) noop.push_back(round);
      }
      double us = TimedCall(plugin, env, config, run_ours ? ours_failed : upstream_failed);
      if (us >= 0) (run_ours ? ours : upstream).push_back(us);
      if (!o.after_command.empty()) {
        bool ignored = true;
        TimedCall(o.after_plugin.empty() ? plugin : o.after_plugin, EnvFor(o, run_ours, o.after_command, i),
                  config, ignored);
      }
      if (!o.between.empty()) {
        (void)cni::RunCommand({"/bin/sh", "-c", o.between}, {"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}, "");
      }
    }
  }
  double mo = Median(ours), mu = Median(upstream);
  std::printf("%-40s ours %9.0f us   upstream %9.0f us   ratio %.3f   (n=%zu/%zu)",
              o.name.c_str(), mo, mu, mu > 0 ? mo / mu : 0.0, ours.size(), upstream.size());
  if (!o.noop.empty()) std::printf("   noop %.0f us", Median(noop));
  std::printf("\n");
  return (ours_failed || upstream_failed || noop_failed) ? 1 : 0;
}

// Killing a plugin at a chosen step (strace's fault injection: SIGKILL at the
// N-th call of one system call, in the plugin and in every process it runs),
// and counting the steps an ADD that nothing stops offers. For the
// kill-at-every-step tests: after each kill a test does what a runtime does
// after a failed ADD (DEL without prevResult) and checks nothing is left.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "support/run.h"

namespace cni::test {

// One plugin call as the kill tests make it: ADD of `plugin` from PluginDir()
// for `container` on eth0 in `netns`, with `conf` on stdin.
struct KilledCall {
  std::string plugin;
  std::string conf;
  std::string netns;
  std::string container;
};

// The system calls a kill is injected at: every kind the plugins make on the
// way to a result (netlink, files, locks, threads entering namespaces, the
// programs and delegates they exec).
const std::vector<std::string>& KillSyscalls();

// The call, killed at the `nth` call of `syscall` (exit 137 when that call
// came; a plugin whose child was killed may fail with a CNI error instead).
RunResult CallKilledAt(const KilledCall& call, const std::string& syscall, int nth);

// The kill points one uninjected ADD offers per kind of KillSyscalls(): the
// most calls of that kind any one process or thread makes (strace counts
// "when=N" per tracee). The traced command's own first execve is not counted.
// REQUIREs the ADD to succeed.
std::map<std::string, int> KillPointsOfAdd(const KilledCall& call);

}  // namespace cni::test

// Killing a plugin at one step of its ADD, as a crash, an OOM kill or a node
// shutting down would: strace's fault injection delivers SIGKILL at the N-th
// call of one kind of system call (in the plugin and in every process it
// runs, its delegates included), so no cleanup of the plugin's own runs.
//
//   AddCall call{.plugin = "tap", .conf = conf, .netns = ns, .container_id = "ctr"};
//   for (const auto& [syscall, points] : KillPointsOfAdd(call))
//     for (int n = 1; n <= points; ++n) AddKilledAt(call, syscall, n); ...
#pragma once

#include <map>
#include <string>
#include <vector>

#include "support/run.h"

namespace cni::test {

// One ADD of a built plugin (CNI_PATH: the build's plugin directory).
struct AddCall {
  std::string plugin;
  std::string conf;
  std::string netns;
  std::string container_id;
  std::string ifname = "eth0";
};

// The kinds of system call a kill is injected at: every kind the plugins make
// on the way to a result (netlink, files, locks, threads entering namespaces,
// a delegate's exec).
const std::vector<std::string>& KillSyscalls();

// The ADD, SIGKILLed at the `nth` call of `syscall` by any one process or
// thread of it (128 + 9 when the plugin itself was killed).
RunResult AddKilledAt(const AddCall& call, const std::string& syscall, int nth);

// The kill points one uninjected ADD offers, per kind in KillSyscalls().
// strace counts "when=N" per process and per thread, so injecting at
// N = 1, 2, ... kills the run exactly while some process or thread makes N
// calls of that kind: the points are the most calls any one of them makes.
// (A thread or delegate whose k-th call comes while another one also makes
// k or more is thus not always the one killed there.) strace cannot stop the
// traced command's own first execve, which is not counted. REQUIREs the ADD
// to succeed (it is left in place: the caller DELs it).
std::map<std::string, int> KillPointsOfAdd(const AddCall& call);

}  // namespace cni::test

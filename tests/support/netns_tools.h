// Small tools for the namespace tests, on top of NetnsFixture: commands that
// must work, a link as `ip -j` shows it, the end-of-test clean-up check, and
// socat servers and clients in namespaces.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "cni/base/json.h"
#include "cni/protocol/types.h"
#include "support/netns_fixture.h"

namespace cni::test {

// Runs argv in `netns` ("" = the private host namespace), REQUIREs it to
// succeed (naming the command and its stderr if not) and returns its stdout.
std::string MustExec(const NetnsFixture& fx, const std::string& netns, const std::vector<std::string>& argv);

// MustExec of each line of `lines` (one command per line, words split on
// spaces, no quoting), in order.
void MustExecLines(const NetnsFixture& fx, const std::string& netns, const std::string& lines);

// Whether iptables is iptables-nft here (what the plugins' netlink paths for
// iptables need); says so (a Catch warning) when it is not.
bool IptablesNft(const NetnsFixture& fx);

// Lines of `text` that contain `needle`, with nft's handles and counters
// removed (they differ between two writers of the same rule).
std::vector<std::string> LinesWith(const std::string& text, absl::string_view needle);

// `ip -d -j link show dev <name>` in `netns`: the one link object.
Json LinkJson(const NetnsFixture& fx, const std::string& netns, const std::string& name);

// The end of a test: deletes the namespaces `netns`, then the host links
// `host_links` (that DEL keeps, e.g. a bridge; missing ones are fine), then
// CHECKs that nothing is left over (after giving the kernel up to 5 s to
// destroy the namespaces, which it does on a work queue).
void TearDown(NetnsFixture& fx, const std::vector<std::string>& netns,
              const std::vector<std::string>& host_links = {});

// A program (e.g. a socat server) running in `netns` while this object lives;
// killed on destruction, and bounded by `timeout 120` even if the test dies.
class BackgroundProcess {
 public:
  BackgroundProcess(const std::string& netns, const std::vector<std::string>& argv);
  ~BackgroundProcess();
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;

 private:
  pid_t pid_ = -1;
};

// A socat client in `netns` ("" = the private host namespace): connects to
// socat address `addr`, sends `data` and returns what came back (2 s idle
// timeout, 8 s at most).
std::string SocatExchange(const std::string& netns, const std::string& addr, const std::string& data = "");

// The differential test of a plugin that makes one link, eth0: runs ADD of
// `conf` with upstream's `plugin` (kUpstreamDir) in one fresh namespace and
// with ours in another, and CHECKs that both give the same normalised result
// (NormalizeForDiff) and the same kernel state between ADD and DEL: eth0's
// MTU, linkinfo (kind and kind data) and flags in `ip -d -j link` (not
// operstate: the kernel settles it asynchronously), `ip -4 -o addr` (IPv6
// link-local follows a random MAC) and `ip route`. Both DELs must succeed and
// leave only lo; the namespaces are deleted. When upstream's plugin is not
// installed it WARNs and returns false.
bool CheckSameAsUpstream(NetnsFixture& fx, const std::string& plugin, const std::string& conf);

}  // namespace cni::test

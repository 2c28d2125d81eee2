// firewall-firewalld: the firewall plugin's D-Bus side. The plugin is a
// static PIE, which cannot load libsystemd (Debian ships it as a shared
// object only); this small dynamically linked program does, and the plugin
// runs it only when it talks to firewalld, so no other call pays for the
// dynamic loader or sd-bus. It lives next to the plugin (see README.md).
//
//   firewall-firewalld running               "yes" or "no": whether firewalld owns its bus name
//   firewall-firewalld add ZONE SOURCE...    each SOURCE joins ZONE, all or none
//   firewall-firewalld remove ZONE SOURCE... each SOURCE leaves ZONE (absent is fine), keeps
//                                            going past a failure and reports them all
//   firewall-firewalld check ZONE SOURCE...  each SOURCE must be a source of ZONE
//
// Exit 0 on success. On failure exit 1 with the CNI error on stdout,
// {"code":N,"msg":"..."}, which the plugin reports as its own.
#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/json.h"
#include "cni/base/quoted.h"
#include "firewalld.h"

namespace {

namespace fwd = cni::firewall::firewalld;
using cni::ErrorCode;

absl::Status Add(fwd::Client& bus, const std::string& zone, const std::vector<std::string>& sources) {
  for (size_t i = 0; i < sources.size(); ++i) {
    if (absl::Status st = bus.AddSource(zone, sources[i]); !st.ok()) {
      for (size_t j = 0; j < i; ++j) (void)bus.RemoveSource(zone, sources[j]);
      return st;
    }
  }
  return absl::OkStatus();
}

absl::Status Remove(fwd::Client& bus, const std::string& zone, const std::vector<std::string>& sources) {
  std::vector<absl::Status> failures;
  for (const std::string& s : sources) {
    if (absl::Status st = bus.RemoveSource(zone, s); !st.ok()) failures.push_back(st);
  }
  return cni::JoinErrors(failures);
}

// Upstream only asks; the answer must also be yes.
absl::Status Check(fwd::Client& bus, const std::string& zone, const std::vector<std::string>& sources) {
  for (const std::string& s : sources) {
    absl::StatusOr<bool> in_zone = bus.QuerySource(zone, s);
    if (!in_zone.ok()) return in_zone.status();
    if (!*in_zone) {
      return cni::Error(ErrorCode::kInternal,
                        absl::StrCat("firewalld: ", s, " is not a source of zone ", cni::Quoted(zone)));
    }
  }
  return absl::OkStatus();
}

absl::Status Run(const std::vector<std::string>& args) {
  if (args.empty() || (args[0] != "running" && args.size() < 2)) {
    return cni::Error(ErrorCode::kInternal, "firewall-firewalld: usage: running | add|remove|check ZONE SOURCE...");
  }
  absl::StatusOr<fwd::Client> bus = fwd::Client::Connect();
  if (!bus.ok()) return bus.status();
  const std::string& op = args[0];
  if (op == "running") {
    std::fputs(bus->FirewalldRunning() ? "yes\n" : "no\n", stdout);
    return absl::OkStatus();
  }
  const std::vector<std::string> sources(args.begin() + 2, args.end());
  if (op == "add") return Add(*bus, args[1], sources);
  if (op == "remove") return Remove(*bus, args[1], sources);
  if (op == "check") return Check(*bus, args[1], sources);
  return cni::Error(ErrorCode::kInternal, absl::StrCat("firewall-firewalld: unknown operation ", cni::Quoted(op)));
}

}  // namespace

int main(int argc, char** argv) {
  absl::Status st = Run(std::vector<std::string>(argv + 1, argv + argc));
  if (st.ok()) return 0;
  std::fputs(cni::Json{{"code", cni::CodeOf(st)}, {"msg", std::string(st.message())}}.dump().c_str(), stdout);
  std::fputs("\n", stdout);
  return 1;
}

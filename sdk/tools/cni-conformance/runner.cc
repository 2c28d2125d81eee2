#include "runner.h"

#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cni/net/link.h"
#include "cni/net/netlink.h"
#include "cni/protocol/version.h"

namespace conformance {
namespace {

cni::runtime::Options RuntimeOptions(const Options& o) {
  cni::runtime::Options r;
  r.plugin_dirs = o.cni_path;
  r.cache_dir = absl::StrCat(kToolDir, "/cache");  // not a watched directory
  r.timeout = o.timeout;
  return r;
}

}  // namespace

Runner::Runner(Options options, Subject subject)
    : options_(std::move(options)), subject_(std::move(subject)), runtime_(RuntimeOptions(options_)) {
  cni_path_ = absl::StrJoin(options_.cni_path, ":");
  watched_ = kDefaultDataDirs;
  watched_.insert(watched_.end(), options_.data_dirs.begin(), options_.data_dirs.end());
  report_.ExpectFailures(options_.xfail);
}

Report Runner::Run() {
  // Bad input must change nothing: the protocol checks run first, against
  // the untouched private host.
  const State untouched = HostState();
  CheckVersion();
  CheckAbout();
  CheckUnsupportedVersion();
  CheckMissingEnvironment();
  CheckMalformedConfig();
  report_.Expect("rejected calls changed nothing on the host", HostDifferences(untouched));

  // The versions to run ADD at: every supported one the spec defines
  // (results before 0.3.0 have the older shape, checked as such), newest
  // first, so the first cycle (which may leave shared objects behind) is the
  // one a runtime uses today.
  std::vector<std::string> versions;
  for (const std::string& v : cni::AllVersions()) {
    if (std::find(supported_.begin(), supported_.end(), v) != supported_.end()) versions.insert(versions.begin(), v);
  }
  if (versions.empty()) {
    report_.Add("ADD/CHECK/DEL", Outcome::kSkip, "no version the plugin supports is known (VERSION failed?)");
    return std::move(report_);
  }
  for (size_t i = 0; i < versions.size(); ++i) CheckLifecycle(versions[i], i == 0);
  CheckDelWithoutAdd(versions.front());
  CheckDelNetnsGone(versions.front());
  if (subject_.before.empty()) {
    report_.Add("chained: prevResult carried through", Outcome::kSkip,
                "the configuration has no plugin before this one (give a conflist to test chaining)");
  }
  CheckGc();
  CheckStatus();
  return std::move(report_);
}

std::string Runner::NextId() { return absl::StrCat("cni-conformance-", ++ids_); }

absl::StatusOr<Runner::Attachment> Runner::Attach(const std::string& version) {
  Attachment a;
  a.version = version;
  a.id = NextId();
  absl::StatusOr<std::string> ns = sandboxes_.Create();
  if (!ns.ok()) return ns.status();
  a.netns = *ns;
  if (!subject_.before.empty()) {
    cni::runtime::RuntimeConf rt{.container_id = a.id, .netns = a.netns, .ifname = options_.ifname};
    rt.capability_args = options_.capability_args;
    absl::StatusOr<cni::Json> prev = runtime_.AddNetworkList(PredecessorList(subject_, version), rt);
    if (!prev.ok()) {
      (void)sandboxes_.Remove(a.netns);
      return absl::Status(prev.status().code(),
                          absl::StrCat("the plugins before it (ADD): ", prev.status().message()));
    }
    a.prev = *std::move(prev);
  }
  // What the plugin's DEL must bring the container back to.
  absl::StatusOr<State> fresh = NetState(a.netns, "ctr");
  if (!fresh.ok()) return fresh.status();
  a.fresh_ctr = *std::move(fresh);
  return a;
}

std::vector<std::string> Runner::Detach(Attachment& a, bool netns_already_gone) {
  std::vector<std::string> failures;
  if (!subject_.before.empty()) {
    cni::runtime::RuntimeConf rt{.container_id = a.id, .netns = a.netns, .ifname = options_.ifname};
    rt.capability_args = options_.capability_args;
    absl::Status s = runtime_.DelNetworkList(PredecessorList(subject_, a.version), rt);
    if (!s.ok()) failures.push_back(absl::StrCat("the plugins before it (DEL): ", s.message()));
  }
  if (!netns_already_gone) {
    if (absl::Status s = sandboxes_.Remove(a.netns); !s.ok()) failures.push_back(std::string(s.message()));
  }
  return failures;
}

cni::Json Runner::ExecConfig(const std::string& version, const cni::Json& prev, const cni::Json& extra) const {
  cni::runtime::RuntimeConf rt;
  rt.capability_args = options_.capability_args;
  cni::Json conf = cni::runtime::BuildExecConfig(subject_.network, version, subject_.plugin,
                                                 prev.is_null() ? nullptr : &prev, &rt);
  for (const auto& [k, v] : extra.items()) conf[k] = v;
  return conf;
}

Invocation Runner::For(const std::string& command, const Attachment& a, const cni::Json& conf) const {
  Invocation call;
  call.command = command;
  call.container_id = a.id;
  call.netns = a.netns;
  call.ifname = options_.ifname;
  call.path = cni_path_;
  call.stdin_data = cni::Dump(conf);
  return call;
}

Answer Runner::Run(const std::string& command, const Attachment& a, const cni::Json& conf) const {
  return Call(options_.plugin, For(command, a, conf), options_.timeout);
}

State Runner::HostState() const {
  State state;
  if (absl::StatusOr<State> net = NetState("", "host"); net.ok()) {
    state.merge(*net);
  } else {
    state.insert(absl::StrCat("(reading the host's links failed: ", net.status().message(), ")"));
  }
  if (absl::StatusOr<State> nf = NetfilterState(); nf.ok()) {
    state.merge(*nf);
  } else {
    state.insert(absl::StrCat("(reading nftables failed: ", nf.status().message(), ")"));
  }
  state.merge(FileState(watched_));
  return state;
}

std::vector<std::string> Runner::HostDifferences(const State& want, const std::vector<std::string>& except) const {
  auto filtered = [&](std::vector<std::string> diff) {
    std::erase_if(diff, [&](const std::string& line) {
      for (const std::string& link : except) {
        for (const char* kind : {" link ", " addr ", " dev "}) {
          if (line.find(absl::StrCat(kind, link, " ")) != std::string::npos) return true;
        }
      }
      return false;
    });
    return diff;
  };
  // Only kernel objects can still be going away on their own (the veth ends
  // of a namespace the kernel is tearing down); files and rules cannot.
  auto settling = [](const std::vector<std::string>& diff) {
    for (const std::string& line : diff) {
      for (const char* kind : {"left: host link ", "left: host addr ", "left: host route ", "left: host rule "}) {
        if (line.rfind(kind, 0) == 0) return true;
      }
    }
    return false;
  };
  std::vector<std::string> diff = filtered(Differences(want, HostState(), 1000));
  for (int i = 0; i < 20 && settling(diff); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    diff = filtered(Differences(want, HostState(), 1000));
  }
  if (diff.size() > 12) {
    size_t more = diff.size() - 12;
    diff.resize(12);
    diff.push_back(absl::StrCat("... and ", more, " more"));
  }
  return diff;
}

std::vector<std::string> Runner::RestoreHostVeths(const State& as_in) {
  std::vector<std::string> names;
  absl::StatusOr<cni::net::NetlinkSocket> sock = cni::net::NetlinkSocket::Open();
  for (const std::string& name : options_.host_veths) {
    std::string peer = HostVethPeer(name);
    names.push_back(name);
    names.push_back(peer);
    if (!sock.ok() || cni::net::LinkExists(*sock, name).value_or(true)) continue;
    (void)cni::net::DeleteLinkByNameIfExists(*sock, peer);
    (void)CreateHostVeth(name);  // both ends up
    for (const std::string& n : {name, peer}) {
      absl::StatusOr<cni::net::LinkInfo> link = cni::net::LinkByName(*sock, n);
      if (link.ok() && as_in.count(absl::StrCat("host link ", n, " veth down")) != 0) {
        (void)cni::net::SetLinkDown(*sock, *link);
      }
    }
  }
  return names;
}

}  // namespace conformance

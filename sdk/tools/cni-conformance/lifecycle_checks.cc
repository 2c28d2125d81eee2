// The attachment's life (spec sections 2, 3 and 5, and the 1.1.0 verbs):
// ADD and its result, CHECK, DEL twice, DEL without ADD, DEL after the
// namespace is gone, chaining, GC, STATUS, and nothing left behind.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cni/protocol/version.h"
#include "runner.h"
#include "schema.h"

namespace conformance {
namespace {

bool AtLeast(const std::string& version, const char* min) { return cni::CompareVersions(version, min) >= 0; }

std::vector<std::string> Ok(const Answer& a) {
  if (a.ok()) return {};
  return {a.Describe()};
}

std::string Summary(const cni::Json& result) {
  std::vector<std::string> parts;
  for (const char* key : {"interfaces", "ips", "routes"}) {
    auto it = result.find(key);
    if (it != result.end() && it->is_array()) parts.push_back(absl::StrCat(it->size(), " ", key));
  }
  for (const char* key : {"ip4", "ip6"}) {
    if (result.contains(key)) parts.push_back(key);
  }
  return absl::StrJoin(parts, ", ");
}

}  // namespace

void Runner::CheckLifecycle(const std::string& version, bool first) {
  const std::string at = absl::StrCat(" ", version);
  const State before = HostState();
  absl::StatusOr<Attachment> att = Attach(version);
  if (!att.ok()) {
    report_.Add("ADD" + at, Outcome::kFail, absl::StrCat("setting up: ", att.status().message()));
    return;
  }
  Attachment& a = *att;
  const cni::Json conf = ExecConfig(version, a.prev);
  Answer add = Run("ADD", a, conf);
  report_.Expect("ADD" + at, Ok(add), add.doc ? Summary(*add.doc) : "");
  if (add.ok()) {
    if (!add.doc) {
      report_.Add("ADD" + at + ": result valid", Outcome::kFail, "stdout is not a JSON object: " + add.Describe());
    } else {
      a.result = *add.doc;
      report_.Expect("ADD" + at + ": result valid", ValidateResult(a.result, {.version = version}),
                     AtLeast(version, "0.3.0") ? "schema and spec rules" : "the 0.1.0/0.2.0 shape");
      if (!a.prev.is_null()) {
        report_.Expect("ADD" + at + ": prevResult carried through", CarriedThrough(a.prev, a.result));
      }
    }
    // CHECK exists from 0.4.0; its prevResult is the attachment's ADD result.
    if (!AtLeast(version, "0.4.0")) {
      report_.Add("CHECK" + at, Outcome::kSkip, "CHECK exists from 0.4.0");
    } else if (!a.result.is_null()) {
      Answer check = Run("CHECK", a, ExecConfig(version, a.result));
      report_.Expect("CHECK" + at + " after ADD", Ok(check));
    } else {
      report_.Add("CHECK" + at + " after ADD", Outcome::kSkip, "ADD printed no result to check against");
    }
  } else {
    report_.Add("ADD" + at + ": result valid", Outcome::kSkip, "ADD failed");
  }
  // DEL gets the ADD result as prevResult (0.4.0+), as libcni sends it.
  const cni::Json del_conf = ExecConfig(version, AtLeast(version, "0.4.0") && !a.result.is_null() ? a.result : a.prev);
  Answer del = Run("DEL", a, del_conf);
  report_.Expect("DEL" + at, Ok(del));
  Answer again = Run("DEL", a, del_conf);
  report_.Expect("DEL" + at + " again", Ok(again));
  std::vector<std::string> ctr;
  if (absl::StatusOr<State> now = NetState(a.netns, "ctr"); now.ok()) {
    ctr = Differences(a.fresh_ctr, *now);
  } else {
    ctr.push_back(std::string(now.status().message()));
  }
  std::vector<std::string> detach = Detach(a);
  ctr.insert(ctr.end(), detach.begin(), detach.end());
  report_.Expect("DEL" + at + ": container namespace as before ADD", ctr,
                 subject_.before.empty() ? "" : "as the plugins before it left it");
  if (first) {
    // Shared objects a plugin makes once and keeps (a bridge, host-local's
    // lock file, a shared chain) are not leftovers; what each later step
    // leaves beyond the state it started from is.
    std::vector<std::string> kept = Differences(before, HostState(), 6);
    report_.Add("DEL" + at + ": host state recorded", Outcome::kPass,
                absl::StrCat("later steps must leave the host as they find it",
                             kept.empty() ? "" : "; kept: ", absl::StrJoin(kept, "; ")));
  } else {
    report_.Expect("DEL" + at + ": no leftovers on the host", HostDifferences(before));
  }
}

void Runner::CheckDelWithoutAdd(const std::string& version) {
  const State before = HostState();
  absl::StatusOr<Attachment> att = Attach(version);
  if (!att.ok()) {
    report_.Add("DEL without ADD", Outcome::kFail, absl::StrCat("setting up: ", att.status().message()));
    return;
  }
  // No prevResult: a runtime has no cached result for an attachment whose
  // ADD never ran (or never got this far).
  Answer del = Run("DEL", *att, ExecConfig(version, nullptr));
  report_.Expect("DEL without ADD", Ok(del));
  std::vector<std::string> failures = Detach(*att);
  std::vector<std::string> left = HostDifferences(before);
  failures.insert(failures.end(), left.begin(), left.end());
  report_.Expect("DEL without ADD: no leftovers on the host", failures);
}

void Runner::CheckDelNetnsGone(const std::string& version) {
  const State before = HostState();
  absl::StatusOr<Attachment> att = Attach(version);
  if (!att.ok()) {
    report_.Add("DEL with the netns gone", Outcome::kFail, absl::StrCat("setting up: ", att.status().message()));
    return;
  }
  Attachment& a = *att;
  Answer add = Run("ADD", a, ExecConfig(version, a.prev));
  if (!add.ok() || !add.doc) {
    report_.Add("DEL with the netns gone", Outcome::kSkip, "ADD failed: " + add.Describe());
    (void)Run("DEL", a, ExecConfig(version, a.prev));
    Detach(a);
    return;
  }
  a.result = *add.doc;
  // The container died without DEL: its namespace is gone, the path too.
  if (absl::Status s = sandboxes_.Remove(a.netns); !s.ok()) {
    report_.Add("DEL with the netns gone", Outcome::kFail, absl::StrCat("removing the namespace: ", s.message()));
    return;
  }
  Answer del = Run("DEL", a, ExecConfig(version, AtLeast(version, "0.4.0") ? a.result : a.prev));
  report_.Expect("DEL with the netns gone", Ok(del));
  std::vector<std::string> failures = Detach(a, /*netns_already_gone=*/true);
  // A --master veth moved into the namespace died with it: the kernel's
  // doing, not the plugin's. It is made again for the checks after this.
  std::vector<std::string> left = HostDifferences(before, RestoreHostVeths(before));
  failures.insert(failures.end(), left.begin(), left.end());
  report_.Expect("DEL with the netns gone: no leftovers on the host", failures);
}

void Runner::CheckGc() {
  const std::string version = "1.1.0";
  if (std::find(supported_.begin(), supported_.end(), version) == supported_.end()) {
    report_.Add("GC", Outcome::kSkip, "the plugin does not support 1.1.0");
    return;
  }
  const State before = HostState();
  absl::StatusOr<Attachment> att = Attach(version);
  if (!att.ok()) {
    report_.Add("GC", Outcome::kFail, absl::StrCat("setting up: ", att.status().message()));
    return;
  }
  Attachment& a = *att;
  // What the plugin itself adds: files and firewall rules beyond the state
  // after its predecessors' ADD.
  auto owned = [](const State& s) {
    State out;
    for (const std::string& line : s) {
      if (line.rfind("file ", 0) == 0 || line.rfind("host nft ", 0) == 0) out.insert(line);
    }
    return out;
  };
  const State before_add = owned(HostState());
  Answer add = Run("ADD", a, ExecConfig(version, a.prev));
  if (!add.ok() || !add.doc) {
    report_.Add("GC", Outcome::kSkip, "ADD 1.1.0 failed: " + add.Describe());
    (void)Run("DEL", a, ExecConfig(version, a.prev));
    Detach(a);
    return;
  }
  a.result = *add.doc;
  const State after_add = owned(HostState());
  // GC gets no container ID, netns or interface name; CNI_PATH is required.
  auto gc = [&](const cni::Json& valid) {
    Invocation call{{.command = "GC", .path = cni_path_}};
    call.stdin_data = cni::Dump(ExecConfig(version, nullptr, {{"cni.dev/valid-attachments", valid}}));
    return Call(options_.plugin, call, options_.timeout);
  };
  Answer keep = gc(cni::Json::array({{{"containerID", a.id}, {"ifname", options_.ifname}}}));
  report_.Expect("GC with the attachment valid", Ok(keep));
  std::vector<std::string> touched = Differences(after_add, owned(HostState()));
  Answer check = Run("CHECK", a, ExecConfig(version, a.result));
  if (!check.ok()) touched.push_back("CHECK after it: " + check.Describe());
  report_.Expect("GC with the attachment valid: its state kept, CHECK passes", touched);
  Answer none = gc(cni::Json::array());
  report_.Expect("GC with an empty valid list", Ok(none));
  std::vector<std::string> released = Differences(before_add, owned(HostState()));
  report_.Expect("GC with an empty valid list: files and rules of ADD released", released,
                 absl::StrCat(Differences(before_add, after_add, 1000).size(), " files/rules released"));
  Answer del = Run("DEL", a, ExecConfig(version, a.result));
  std::vector<std::string> failures = Ok(del);
  std::vector<std::string> detach = Detach(a);
  failures.insert(failures.end(), detach.begin(), detach.end());
  std::vector<std::string> left = HostDifferences(before);
  failures.insert(failures.end(), left.begin(), left.end());
  report_.Expect("DEL after GC: no leftovers on the host", failures);
}

void Runner::CheckStatus() {
  const std::string version = "1.1.0";
  if (std::find(supported_.begin(), supported_.end(), version) == supported_.end()) {
    report_.Add("STATUS", Outcome::kSkip, "the plugin does not support 1.1.0");
    return;
  }
  Invocation call{{.command = "STATUS", .path = cni_path_}};
  call.stdin_data = cni::Dump(ExecConfig(version, nullptr));
  Answer a = Call(options_.plugin, call, options_.timeout);
  if (a.ok()) {
    report_.Add("STATUS", Outcome::kPass, "ready");
  } else if (a.ErrorDocumentProblems().empty() && (a.code() == 50 || a.code() == 51)) {
    report_.Add("STATUS", Outcome::kFail, absl::StrCat("not ready here (code ", a.code(), "): ", a.message()));
  } else {
    report_.Add("STATUS", Outcome::kFail, a.Describe());
  }
}

}  // namespace conformance

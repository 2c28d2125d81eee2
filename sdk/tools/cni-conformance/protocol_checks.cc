// The spec's required answers to bad or bare input (sections 2 and 5): VERSION
// at every version, the about line, an unsupported version, missing
// variables, a malformed configuration.
#include <regex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cni/protocol/version.h"
#include "runner.h"

namespace conformance {
namespace {

// The error must be well formed and carry `code`.
std::vector<std::string> ExpectError(const Answer& a, int code) {
  std::vector<std::string> problems = a.ErrorDocumentProblems();
  if (problems.empty() && a.code() != code) {
    problems.push_back(absl::StrCat("code ", a.code(), ", want ", code, " (", a.message(), ")"));
  }
  return problems;
}

}  // namespace

void Runner::CheckVersion() {
  static const std::regex kSemver("^[0-9]+\\.[0-9]+\\.[0-9]+$");
  std::optional<std::vector<std::string>> first;
  for (const std::string& v : cni::AllVersions()) {
    Invocation call{{.command = "VERSION"}, cni::Dump({{"cniVersion", v}})};
    Answer a = Call(options_.plugin, call, options_.timeout);
    std::string name = absl::StrCat("VERSION ", v);
    if (!a.ok() || !a.doc) {
      report_.Add(name, Outcome::kFail, a.Describe());
      continue;
    }
    std::vector<std::string> problems;
    // Section 5, "Version": cniVersion is the value given on input.
    auto cv = a.doc->find("cniVersion");
    if (cv == a.doc->end() || !cv->is_string() || cv->get<std::string>() != v) {
      problems.push_back(absl::StrCat("cniVersion ", cv == a.doc->end() ? "missing" : cv->dump(), ", want \"", v, "\""));
    }
    std::vector<std::string> listed;
    auto sv = a.doc->find("supportedVersions");
    if (sv == a.doc->end() || !sv->is_array() || sv->empty()) {
      problems.push_back("no supportedVersions list");
    } else {
      for (const cni::Json& e : *sv) {
        if (!e.is_string() || !std::regex_match(e.get<std::string>(), kSemver)) {
          problems.push_back(absl::StrCat("supportedVersions entry ", e.dump(), " is not a version"));
        } else {
          listed.push_back(e.get<std::string>());
        }
      }
    }
    if (first && *first != listed) {
      problems.push_back(absl::StrCat("supportedVersions differ from the first answer: [", absl::StrJoin(listed, " "), "]"));
    }
    if (!first) first = listed;
    report_.Expect(name, problems, absl::StrCat("supports ", absl::StrJoin(listed, " ")));
  }
  if (first) supported_ = *first;
}

void Runner::CheckAbout() {
  // No CNI_COMMAND: the reference skel prints an about line (on stderr);
  // a plugin without one must still answer with an error, not crash.
  Answer a = Call(options_.plugin, Invocation{}, options_.timeout);
  std::string text = a.err.empty() ? a.out : a.err;
  std::string line = text.substr(0, text.find('\n'));
  if (a.ok() && !line.empty()) {
    report_.Add("about (no CNI_COMMAND)", Outcome::kPass, line);
  } else if (!a.ok() && a.ErrorDocumentProblems().empty()) {
    report_.Add("about (no CNI_COMMAND)", Outcome::kPass, absl::StrCat("no about line; error ", a.code(), ": ", a.message()));
  } else {
    report_.Add("about (no CNI_COMMAND)", Outcome::kFail, a.Describe());
  }
}

void Runner::CheckUnsupportedVersion() {
  // A well-formed version no plugin supports: code 1, naming what it supports.
  const std::string version = "99.0.0";
  std::optional<Attachment> made = ProtocolAttachment(version);
  if (!made) return;
  const Attachment& a = *made;
  Answer ans = Run("ADD", a, ExecConfig(version, nullptr));
  std::vector<std::string> problems = ExpectError(ans, 1);
  if (problems.empty()) {
    std::string text = ans.message();
    std::vector<std::string> absent;
    for (const std::string& v : supported_) {
      if (text.find(v) == std::string::npos) absent.push_back(v);
    }
    if (!absent.empty()) {
      problems.push_back(absl::StrCat("the error does not list the supported versions (", absl::StrJoin(absent, " "),
                                      " missing): ", text));
    }
  }
  report_.Expect("ADD with an unsupported cniVersion: code 1 with the supported list", problems, ans.message());
  (void)sandboxes_.Remove(a.netns);
}

std::optional<Runner::Attachment> Runner::ProtocolAttachment(const std::string& version) {
  absl::StatusOr<std::string> ns = sandboxes_.Create();
  if (!ns.ok()) {
    report_.Add("container namespace for the protocol checks", Outcome::kFail, std::string(ns.status().message()));
    return std::nullopt;
  }
  return Attachment{.version = version, .id = NextId(), .netns = *ns};
}

void Runner::CheckMissingEnvironment() {
  const std::string version = supported_.empty() ? std::string(cni::kCurrentVersion) : supported_.back();
  std::optional<Attachment> made = ProtocolAttachment(version);
  if (!made) return;
  const Attachment& a = *made;
  const cni::Json conf = ExecConfig(version, nullptr);
  struct Case {
    const char* command;
    const char* variable;
    std::string cni::CniVariables::*field;
  };
  // Section 2: ADD needs CNI_CONTAINERID, CNI_NETNS, CNI_IFNAME; DEL needs
  // CNI_CONTAINERID and CNI_IFNAME (CNI_NETNS is optional there).
  const Case cases[] = {{"ADD", "CNI_CONTAINERID", &Invocation::container_id},
                        {"ADD", "CNI_NETNS", &Invocation::netns},
                        {"ADD", "CNI_IFNAME", &Invocation::ifname},
                        {"DEL", "CNI_CONTAINERID", &Invocation::container_id},
                        {"DEL", "CNI_IFNAME", &Invocation::ifname}};
  for (const Case& c : cases) {
    Invocation call = For(c.command, a, conf);
    call.*c.field = "";
    Answer ans = Call(options_.plugin, call, options_.timeout);
    std::vector<std::string> problems = ExpectError(ans, 4);
    // Code 4: "The error message must contain the names of invalid variables."
    if (problems.empty() && ans.message().find(c.variable) == std::string::npos) {
      problems.push_back(absl::StrCat("the error does not name ", c.variable, ": ", ans.message()));
    }
    report_.Expect(absl::StrCat(c.command, " without ", c.variable, ": code 4 naming it"), problems, ans.message());
  }
  Invocation call = For("CONFORMANCE", a, conf);
  Answer ans = Call(options_.plugin, call, options_.timeout);
  report_.Expect("unknown CNI_COMMAND: code 4", ExpectError(ans, 4), ans.message());
  (void)sandboxes_.Remove(a.netns);
}

void Runner::CheckMalformedConfig() {
  const std::string version = supported_.empty() ? std::string(cni::kCurrentVersion) : supported_.back();
  std::optional<Attachment> made = ProtocolAttachment(version);
  if (!made) return;
  const Attachment& a = *made;
  std::string whole = cni::Dump(ExecConfig(version, nullptr));
  struct Case {
    const char* what;
    std::string bytes;
  };
  const Case cases[] = {{"truncated JSON", whole.substr(0, whole.size() / 2)},
                        {"not JSON", "cniVersion=" + version},
                        {"empty", ""}};
  for (const char* command : {"ADD", "DEL"}) {
    for (const Case& c : cases) {
      Invocation call = For(command, a, nullptr);
      call.stdin_data = c.bytes;
      Answer ans = Call(options_.plugin, call, options_.timeout);
      report_.Expect(absl::StrCat(command, " with a malformed config (", c.what, "): code 6"), ExpectError(ans, 6),
                     ans.message());
    }
  }
  (void)sandboxes_.Remove(a.netns);
}

}  // namespace conformance

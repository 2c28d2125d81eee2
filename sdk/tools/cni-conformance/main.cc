// cni-conformance: holds a CNI plugin binary to the spec. See README.md.
#include <unistd.h>

#include <iostream>
#include <map>

#include "cni/base/exec.h"
#include "cni/base/fs.h"
#include "options.h"
#include "runner.h"
#include "sandbox.h"
#include "subject.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::map<std::string, std::string> env = cni::EnvironmentMap(cni::ProcessEnvironment());
  absl::StatusOr<conformance::Options> options = conformance::ParseOptions(args, env);
  if (absl::IsCancelled(options.status())) {
    std::cout << conformance::kUsage;
    return 0;
  }
  if (!options.ok()) {
    std::cerr << "cni-conformance: " << options.status().message() << "\n" << conformance::kUsage;
    return 2;
  }
  // Read before the private mounts hide whatever is under /run.
  absl::StatusOr<std::string> bytes = cni::ReadRegularFile(options->config_path);
  if (!bytes.ok()) {
    std::cerr << "cni-conformance: " << bytes.status().message() << "\n";
    return 2;
  }
  absl::StatusOr<conformance::Subject> subject = conformance::LoadSubject(*bytes);
  if (!subject.ok()) {
    std::cerr << "cni-conformance: " << options->config_path << ": " << subject.status().message() << "\n";
    return 2;
  }
  // On the main thread, before any other thread exists: every later thread
  // and every plugin inherits the private namespaces.
  if (absl::Status s = conformance::EnterPrivateHost(options->data_dirs); !s.ok()) {
    std::cerr << "cni-conformance: isolating the run: " << s.message() << "\n";
    return 2;
  }
  if (access(options->plugin.c_str(), X_OK) != 0) {
    std::cerr << "cni-conformance: " << options->plugin << " is not an executable (outside /run and /var/lib/cni?)\n";
    return 2;
  }
  for (const std::string& name : options->host_veths) {
    if (absl::Status s = conformance::CreateHostVeth(name); !s.ok()) {
      std::cerr << "cni-conformance: --master " << name << ": " << s.message() << "\n";
      return 2;
    }
  }
  const std::string plugin = options->plugin, config = options->config_path;
  const bool json = options->json;
  conformance::Report report = conformance::Runner(*std::move(options), *std::move(subject)).Run();
  if (json) {
    std::cout << report.ToJson(plugin, config).dump(2) << "\n";
  } else {
    std::cout << "cni-conformance: " << plugin << " with " << config << "\n" << report.Table();
  }
  return report.Passed() ? 0 : 1;
}

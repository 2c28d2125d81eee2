// The firewalld helper (helper_main.cc, installed as "firewall-firewalld")
// as the plugin runs it: one exec per operation, the plugin's CNI error
// coming back on its stdout. Only firewalld calls pay for it (the dynamic
// loader, libsystemd, a bus connection); the plugin itself stays a static
// PIE.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cni/protocol/skel.h"

namespace cni::firewall::firewalld {

inline constexpr const char* kHelperName = "firewall-firewalld";

class Helper {
 public:
  // The helper next to the running plugin (the directory of /proc/self/exe),
  // else in a directory of CNI_PATH. None: code 50 (the plugin cannot serve
  // firewalld), naming the file and where it was looked for.
  static absl::StatusOr<Helper> Find(const CmdArgs& args);

  // Whether firewalld owns its name on the system bus. Failure (no bus, the
  // helper failed): its CNI error.
  absl::StatusOr<bool> FirewalldRunning() const;
  // The sources join `zone`, all or none.
  absl::Status AddSources(const std::string& zone, const std::vector<std::string>& sources) const;
  // The sources leave `zone` (absent is fine); every failure reported.
  absl::Status RemoveSources(const std::string& zone, const std::vector<std::string>& sources) const;
  // Each source is a source of `zone` (else code 999 naming it).
  absl::Status CheckSources(const std::string& zone, const std::vector<std::string>& sources) const;

  const std::string& path() const { return path_; }

 private:
  Helper(std::string path, std::vector<std::string> env) : path_(std::move(path)), env_(std::move(env)) {}
  // Runs the helper with `args`; its stdout on success.
  absl::StatusOr<std::string> Run(const std::vector<std::string>& args) const;

  std::string path_;
  std::vector<std::string> env_;  // what the helper gets: the bus address, if one was given
};

}  // namespace cni::firewall::firewalld

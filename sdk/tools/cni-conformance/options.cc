#include "options.h"

#include <filesystem>
#include <regex>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cni/base/json.h"

namespace conformance {

const char kUsage[] =
    "Usage: cni-conformance [options] PLUGIN CONFIG\n"
    "Runs PLUGIN (a CNI plugin binary) through the checks of the CNI spec in a private\n"
    "network and mount namespace (root needed; nothing on the machine is touched).\n"
    "CONFIG is a network configuration, one plugin entry of a conflist, or a conflist\n"
    "whose last plugin is the one under test (the ones before it run first, from CNI_PATH).\n"
    "\n"
    "  --json              print the report as JSON\n"
    "  --cni-path DIRS     CNI_PATH for delegated plugins (default: $CNI_PATH, else PLUGIN's directory)\n"
    "  --data-dir DIR      a directory the plugin keeps state in: private for the run, and\n"
    "                      checked for leftover files (repeatable; /var/lib/cni and /run/cni always are)\n"
    "  --master NAME       create a veth pair NAME / NAME-p in the private host first, e.g. the\n"
    "                      master of a macvlan or the device of host-device (repeatable)\n"
    "  --ifname NAME       CNI_IFNAME (default eth0)\n"
    "  --cap-args JSON     capability arguments, e.g. '{\"portMappings\":[...]}'\n"
    "  --timeout SECONDS   limit per plugin run (default 20)\n"
    "  --xfail REGEX       checks whose name matches are known to fail: reported as xfail, and\n"
    "                      as a failure if they pass (repeatable)\n"
    "Exit status: 0 all checks passed or were skipped, 1 a check failed, 2 usage or setup error.\n";

absl::StatusOr<Options> ParseOptions(const std::vector<std::string>& args,
                                     const std::map<std::string, std::string>& env) {
  Options o;
  std::vector<std::string> positional;
  std::string cni_path;
  bool cni_path_given = false;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i], value;
    bool has_value = false;
    if (size_t eq = flag.find('='); flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
      has_value = true;
    }
    auto take = [&]() -> absl::StatusOr<std::string> {
      if (has_value) return value;
      if (i + 1 == args.size()) return absl::InvalidArgumentError(absl::StrCat(flag, " needs a value"));
      return args[++i];
    };
    if (flag == "-h" || flag == "--help") return absl::CancelledError("help");
    if (flag == "--json") {
      o.json = true;
      continue;
    }
    if (flag.rfind("-", 0) != 0) {
      positional.push_back(flag);
      continue;
    }
    absl::StatusOr<std::string> v = take();
    if (!v.ok()) return v.status();
    if (flag == "--cni-path") {
      cni_path = *v;
      cni_path_given = true;
    } else if (flag == "--data-dir") {
      if (v->empty() || (*v)[0] != '/') return absl::InvalidArgumentError("--data-dir needs an absolute path");
      o.data_dirs.push_back(std::filesystem::path(*v).lexically_normal().string());
    } else if (flag == "--master") {
      if (v->empty() || v->size() > 15) return absl::InvalidArgumentError("--master needs a link name of 1-15 bytes");
      o.host_veths.push_back(*v);
    } else if (flag == "--xfail") {
      try {
        std::regex check(*v);
      } catch (const std::regex_error&) {
        return absl::InvalidArgumentError(absl::StrCat("--xfail ", *v, ": not a regular expression"));
      }
      o.xfail.push_back(*v);
    } else if (flag == "--ifname") {
      o.ifname = *v;
    } else if (flag == "--cap-args") {
      absl::StatusOr<cni::Json> j = cni::ParseJson(*v);
      if (!j.ok() || !j->is_object()) return absl::InvalidArgumentError("--cap-args is not a JSON object");
      o.capability_args = *std::move(j);
    } else if (flag == "--timeout") {
      double seconds = 0;
      if (!absl::SimpleAtod(*v, &seconds) || seconds <= 0) return absl::InvalidArgumentError("--timeout needs seconds > 0");
      o.timeout = std::chrono::milliseconds(static_cast<long>(seconds * 1000));
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unknown option ", flag));
    }
  }
  if (positional.size() != 2) return absl::InvalidArgumentError("expected PLUGIN and CONFIG");
  std::error_code ec;
  o.plugin = std::filesystem::absolute(positional[0], ec).lexically_normal().string();
  o.config_path = positional[1];
  if (!cni_path_given) {
    auto it = env.find("CNI_PATH");
    cni_path = it != env.end() && !it->second.empty() ? it->second
                                                      : std::filesystem::path(o.plugin).parent_path().string();
  }
  for (absl::string_view dir : absl::StrSplit(cni_path, ':', absl::SkipEmpty())) {
    o.cni_path.push_back(std::filesystem::absolute(std::string(dir), ec).lexically_normal().string());
  }
  return o;
}

}  // namespace conformance

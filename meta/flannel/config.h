// Configuration of the flannel meta plugin: where flanneld's subnet file and
// the saved delegate configurations are, and the base of the delegate's
// configuration (`delegate`, `ipam`), parsed before any side effect.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/base/json.h"
#include "cni/protocol/skel.h"

namespace cni::flannel {

inline constexpr absl::string_view kDefaultDataDir = "/var/lib/cni/flannel";

struct Config {
  std::string name;          // the network's name (the delegate's "name")
  std::string cni_version;   // "cniVersion" as given ("" when absent: the delegate gets none)
  std::string subnet_file;   // "subnetFile", default /run/flannel/subnet.env
  std::string data_dir;      // "dataDir", default /var/lib/cni/flannel
  Json delegate = Json::object();     // "delegate" as given ({} when absent)
  std::optional<Json> ipam;           // "ipam" as given (the delegate's IPAM base)
  std::optional<Json> runtime_config; // "runtimeConfig", handed to the delegate as it is
  // Wrong JSON types of subnetFile, delegate, ipam or runtimeConfig (code 6), or
  // upstream's rules for "delegate" broken (a string "type", no "name", no
  // "ipam": code 7). ADD, CHECK, GC and STATUS fail with it; DEL only when
  // it has to rebuild the delegate configuration, so that a configuration
  // broken after ADD still lets DEL undo it with the saved one.
  absl::Status setup_error;

  // A "dataDir" that is not a string: code 6 (every command needs it).
  static absl::StatusOr<Config> Parse(const CmdArgs& args);
  // The configuration keys Parse reads (its key table's names and the keys
  // read beside it, with their path: "runtimeConfig.mac"). The README's
  // "## Keys" table lists exactly these (tests/unit/readme_keys).
  static std::vector<std::string> KeyNames();

  // <dataDir>/<containerID>: the delegate configuration saved at ADD.
  std::string SavedPath(absl::string_view container_id) const;
};

}  // namespace cni::flannel

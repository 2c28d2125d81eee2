#include "config.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/json.h"
#include "cni/base/status_macros.h"
#include "cni/plugin/config_schema.h"
#include "cni/plugin/plugin_keys.h"

namespace cni::host_device {
namespace {

absl::Status Invalid(absl::string_view msg) { return InvalidConfig("host-device", msg); }

absl::StatusOr<std::optional<net::MacAddress>> ParseHwaddrKey(const config::Field& key) {
  ASSIGN_OR_RETURN(std::optional<std::string> text, key.AsString());
  if (!text || text->empty()) return std::nullopt;
  absl::StatusOr<net::MacAddress> mac = net::MacAddress::Parse(*text);
  if (!mac.ok()) return Invalid(absl::StrCat("failed to parse MAC address \"", *text, "\""));
  return *mac;
}

absl::StatusOr<std::string> ParseKernelPathKey(const config::Field& key) {
  ASSIGN_OR_RETURN(std::optional<std::string> path, key.AsString());
  if (!path || path->empty()) return std::string();
  if (!absl::StartsWith(*path, "/sys/devices/") || absl::StrContains(*path, "/../")) {
    return Invalid(absl::StrCat("kernel device path \"", *path,
                                "\" must be absolute and begin with /sys/devices/"));
  }
  return *path;
}

// A PCI or auxiliary bus address names one directory under /sys/bus: no '/'.
absl::StatusOr<std::string> BusId(const config::Field& key) {
  ASSIGN_OR_RETURN(std::optional<std::string> id, key.AsString());
  if (!id || id->empty()) return std::string();
  if (absl::StrContains(*id, "/") || *id == "." || *id == "..") {
    return Invalid(absl::StrCat("\"", key.name(), "\" \"", *id, "\" is not a bus address"));
  }
  return *id;
}

}  // namespace

const PluginKeys<Config> Config::kKeys = {
    .plugin = "host-device",
    .table = {
        config::String("device", &Config::device),
        config::Parsed("hwaddr", &Config::hwaddr, ParseHwaddrKey),
        config::Parsed("kernelpath", &Config::kernel_path, ParseKernelPathKey),
        config::Parsed("pciBusID", &Config::pci_bus_id, BusId),
        DnsKey<Config>(),
    },
    .teardown = {"device"},
    .beside = {"runtimeConfig.deviceID"},
};

absl::StatusOr<Config> Config::Parse(const CmdArgs& args) {
  ASSIGN_OR_RETURN(Config c, kKeys.Parse(args));
  ASSIGN_OR_RETURN(c.device_id, BusId(config::Field(args.conf.runtime_config, "deviceID")));
  if (c.device.empty() && !c.hwaddr && c.kernel_path.empty() && c.pci_bus_id.empty() &&
      c.device_id.empty()) {
    return Invalid("specify either \"device\", \"hwaddr\", \"kernelpath\" or \"pciBusID\"");
  }
  return c;
}

}  // namespace cni::host_device

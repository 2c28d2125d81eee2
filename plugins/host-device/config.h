// Configuration of the host-device plugin, parsed and validated before any
// side effect (DESIGN rule 3). Which device the keys name is resolved by ADD
// (it needs sysfs and the kernel), still before anything is changed.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cni/base/ip.h"
#include "cni/plugin/config_schema.h"
#include "cni/plugin/plugin_keys.h"
#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"

namespace cni::host_device {

struct Config {
  // The device, by the first of these that is set (upstream's precedence):
  // runtimeConfig.deviceID (a PCI or auxiliary device), device, hwaddr,
  // kernelpath, pciBusID.
  std::string device;                     // "device": a link name in the host namespace
  std::optional<net::MacAddress> hwaddr;  // "hwaddr": the link with this MAC
  std::string kernel_path;                // "kernelpath": /sys/devices/...
  std::string pci_bus_id;                 // "pciBusID": 0000:00:1f.6
  std::string device_id;                  // runtimeConfig.deviceID
  std::string ipam_type;                  // "": no addresses
  std::optional<Dns> dns;                 // the config's dns, when it sets a field

  // Wrong types: code 6. None of the device keys, a bad MAC, a kernelpath
  // outside /sys/devices/: code 7.
  static absl::StatusOr<Config> Parse(const CmdArgs& args);
  // Its keys (config.cc): the table Parse reads and the rows TeardownConfig
  // reads of it (PluginKeys, cni/plugin/plugin_keys.h).
  static const PluginKeys<Config> kKeys;
};

// The configuration DEL and GC read: "device" (the name to give a device
// back under, when it has no alias) and the IPAM type. The other selectors
// find a device in the host, which only ADD does, so a bad "hwaddr" or
// "kernelpath" (or none of the keys) refuses ADD and leaves a DEL that
// succeeds, and a configuration broken since ADD still gives the device
// back. A wrong JSON type of "device" is code 6.
using TeardownConfig = TeardownOf<Config>;

}  // namespace cni::host_device

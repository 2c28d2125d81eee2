// firewalld's D-Bus API, as the firewall plugin uses it: the container's
// addresses become sources of a zone (org.fedoraproject.FirewallD1.zone
// addSource / removeSource / querySource) in firewalld's runtime
// configuration. Through sd-bus (libsystemd), on the system bus.
#pragma once

#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

struct sd_bus;

namespace cni::firewall::firewalld {

// Whether a system bus socket exists at all (DBUS_SYSTEM_BUS_ADDRESS's
// unix:path=, else /run/dbus/system_bus_socket): a stat, no connection. The
// auto backend asks this first so that hosts without D-Bus pay nothing.
bool SystemBusPresent();

// One connection to the system bus.
class Client {
 public:
  // Connects (sd_bus_open_system); failure: code 11 (try again later).
  static absl::StatusOr<Client> Connect();
  // Whether firewalld owns its name on the bus.
  bool FirewalldRunning();
  // Adds `source` ("10.88.0.2/32") to `zone`; already there is fine.
  absl::Status AddSource(absl::string_view zone, absl::string_view source);
  // Removes `source` from `zone`; not there is fine.
  absl::Status RemoveSource(absl::string_view zone, absl::string_view source);
  // Whether `source` is in `zone`.
  absl::StatusOr<bool> QuerySource(absl::string_view zone, absl::string_view source);

 private:
  struct Unref {
    void operator()(sd_bus* bus) const;
  };
  explicit Client(sd_bus* bus) : bus_(bus) {}
  std::unique_ptr<sd_bus, Unref> bus_;
};

}  // namespace cni::firewall::firewalld

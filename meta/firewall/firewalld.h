// The firewall plugin's firewalld backend: a D-Bus client of firewalld
// (org.fedoraproject.FirewallD1 on the system bus) through sd-bus, as
// upstream's plugins/meta/firewall/firewalld.go. A container IP is put in a
// zone as a source ("10.88.0.2/32", "fd00::2/128"), so firewalld's zone
// decides what traffic from that address may do; firewalld writes the rules.
//
// Every call has an explicit reply timeout (kCallTimeout in firewalld.cc), so
// a hung bus or firewalld turns into an error (code 11), never a hung plugin.
#pragma once

#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "system_bus.h"  // SystemBusPresent

struct sd_bus;

namespace cni::firewall::firewalld {

// One sd-bus connection to the system bus (RAII; movable, not copyable).
class Client {
 public:
  // sd_bus_open_system (it honours DBUS_SYSTEM_BUS_ADDRESS). Failure: code 11
  // (try again later) with the reason.
  static absl::StatusOr<Client> Connect();

  // Whether someone owns org.fedoraproject.FirewallD1 (the bus's
  // GetNameOwner succeeds), as upstream decides that firewalld runs.
  bool FirewalldRunning();

  // zone.addSource. ZONE_ALREADY_SET (already a source of this zone) is success.
  absl::Status AddSource(absl::string_view zone, absl::string_view source);
  // zone.removeSource. A source that is not in the zone (UNKNOWN_SOURCE: in no
  // zone; ZONE_CONFLICT: in another zone; INVALID_ZONE: the zone does not
  // exist) is success: there is nothing to remove, and DEL must be idempotent.
  absl::Status RemoveSource(absl::string_view zone, absl::string_view source);
  // zone.querySource: whether `source` is a source of `zone`.
  absl::StatusOr<bool> QuerySource(absl::string_view zone, absl::string_view source);

  Client(Client&&) noexcept = default;
  Client& operator=(Client&&) noexcept = default;
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;
  ~Client() = default;

 private:
  struct BusUnref {
    void operator()(sd_bus* bus) const;
  };
  explicit Client(sd_bus* bus) : bus_(bus) {}

  std::unique_ptr<sd_bus, BusUnref> bus_;
};

}  // namespace cni::firewall::firewalld

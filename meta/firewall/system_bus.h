// Whether a system D-Bus is there at all, asked without D-Bus: the plugin
// (a static PIE that never loads sd-bus) and the firewalld helper share it.
#pragma once

namespace cni::firewall::firewalld {

// Whether a system bus socket exists at all (DBUS_SYSTEM_BUS_ADDRESS's
// unix:path=, else /run/dbus/system_bus_socket): a stat, no connection. The
// auto backend asks this first so that hosts without D-Bus pay nothing.
// An address that cannot be checked by a stat (abstract socket, tcp) counts
// as present: connecting will tell.
bool SystemBusPresent();

}  // namespace cni::firewall::firewalld

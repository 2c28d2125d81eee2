// libsystemd's sd-bus, loaded when first needed (dlopen) instead of at exec.
// Linking libsystemd made every call of the plugin load and relocate it and
// the seven libraries it pulls in (libgcrypt, liblzma, libzstd, ...): about
// 2 ms per exec, measured, on every container start, while only hosts that
// run firewalld ever talk D-Bus. Now only the firewalld path pays it.
#pragma once

#include <systemd/sd-bus.h>

#include "absl/status/statusor.h"

namespace cni::firewall::firewalld {

// The sd-bus functions the client calls, by their names without "sd_bus_".
struct SdBus {
  decltype(&::sd_bus_open_system) open_system;
  decltype(&::sd_bus_flush_close_unref) flush_close_unref;
  decltype(&::sd_bus_call) call;
  decltype(&::sd_bus_message_new_method_call) message_new_method_call;
  decltype(&::sd_bus_message_append_basic) message_append_basic;
  decltype(&::sd_bus_message_read_basic) message_read_basic;
  decltype(&::sd_bus_message_unref) message_unref;
  decltype(&::sd_bus_error_free) error_free;
  decltype(&::sd_bus_error_is_set) error_is_set;
  decltype(&::sd_bus_error_has_name) error_has_name;
  decltype(&::sd_bus_error_has_names_sentinel) error_has_names_sentinel;
  decltype(&::sd_bus_error_set_errno) error_set_errno;
};

// libsystemd.so.0's functions, loaded on the first call (thread-safe); code
// 11 naming the library when it is not installed.
absl::StatusOr<const SdBus*> LoadSdBus();
// The loaded functions: only for code that runs after LoadSdBus succeeded
// (everything behind a connected Client).
const SdBus& Api();

}  // namespace cni::firewall::firewalld

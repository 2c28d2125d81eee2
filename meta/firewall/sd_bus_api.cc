#include "sd_bus_api.h"

#include <dlfcn.h>

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"

namespace cni::firewall::firewalld {
namespace {

template <typename F>
bool Resolve(void* lib, const char* name, F& slot) {
  slot = reinterpret_cast<F>(dlsym(lib, name));
  return slot != nullptr;
}

absl::StatusOr<SdBus> Load() {
  // Never unloaded: the process is short-lived and the functions stay in use.
  void* lib = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    return Error(ErrorCode::kTryAgainLater, absl::StrCat("firewalld: loading sd-bus: ", dlerror()));
  }
  SdBus a{};
  bool ok = Resolve(lib, "sd_bus_open_system", a.open_system) &&
            Resolve(lib, "sd_bus_flush_close_unref", a.flush_close_unref) && Resolve(lib, "sd_bus_call", a.call) &&
            Resolve(lib, "sd_bus_message_new_method_call", a.message_new_method_call) &&
            Resolve(lib, "sd_bus_message_append_basic", a.message_append_basic) &&
            Resolve(lib, "sd_bus_message_read_basic", a.message_read_basic) &&
            Resolve(lib, "sd_bus_message_unref", a.message_unref) && Resolve(lib, "sd_bus_error_free", a.error_free) &&
            Resolve(lib, "sd_bus_error_is_set", a.error_is_set) &&
            Resolve(lib, "sd_bus_error_has_name", a.error_has_name) &&
            Resolve(lib, "sd_bus_error_has_names_sentinel", a.error_has_names_sentinel) &&
            Resolve(lib, "sd_bus_error_set_errno", a.error_set_errno);
  if (!ok) return Error(ErrorCode::kTryAgainLater, absl::StrCat("firewalld: libsystemd.so.0 lacks ", dlerror()));
  return a;
}

}  // namespace

absl::StatusOr<const SdBus*> LoadSdBus() {
  static const absl::StatusOr<SdBus> loaded = Load();
  if (!loaded.ok()) return loaded.status();
  return &*loaded;
}

const SdBus& Api() { return **LoadSdBus(); }

}  // namespace cni::firewall::firewalld

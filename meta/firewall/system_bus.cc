#include "system_bus.h"

#include <sys/stat.h>

#include <cstdlib>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace cni::firewall::firewalld {
namespace {

constexpr const char* kDefaultSystemBusSocket = "/run/dbus/system_bus_socket";

// A D-Bus address value with its %XX escapes decoded.
std::string Unescape(absl::string_view v) {
  auto nibble = [](char c) {
    return absl::ascii_isdigit(static_cast<unsigned char>(c)) ? c - '0' : absl::ascii_tolower(c) - 'a' + 10;
  };
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] == '%' && i + 2 < v.size() && absl::ascii_isxdigit(static_cast<unsigned char>(v[i + 1])) &&
        absl::ascii_isxdigit(static_cast<unsigned char>(v[i + 2]))) {
      out.push_back(static_cast<char>(nibble(v[i + 1]) * 16 + nibble(v[i + 2])));
      i += 2;
    } else {
      out.push_back(v[i]);
    }
  }
  return out;
}

bool IsSocket(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

}  // namespace

bool SystemBusPresent() {
  // sd-bus reads the variable with secure_getenv too.
  const char* env = secure_getenv("DBUS_SYSTEM_BUS_ADDRESS");
  if (env == nullptr || *env == '\0') return IsSocket(kDefaultSystemBusSocket);
  // "transport:key=value,key=value;transport:..." — tried in order.
  for (absl::string_view address : absl::StrSplit(env, ';', absl::SkipEmpty())) {
    // tcp:, unixexec:, ...: no file to stat; connecting will tell.
    if (!absl::ConsumePrefix(&address, "unix:")) return true;
    bool has_path = false;
    for (absl::string_view kv : absl::StrSplit(address, ',')) {
      if (absl::ConsumePrefix(&kv, "path=")) {
        has_path = true;
        if (IsSocket(Unescape(kv))) return true;
      }
    }
    if (!has_path) return true;  // unix:abstract=...: not in the file system
  }
  return false;
}

}  // namespace cni::firewall::firewalld

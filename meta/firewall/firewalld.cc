#include "firewalld.h"

#include <sys/stat.h>
#include <systemd/sd-bus.h>

#include <cerrno>
#include <cstdlib>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "cni/error.h"

namespace cni::firewall::firewalld {
namespace {

constexpr const char* kName = "org.fedoraproject.FirewallD1";
constexpr const char* kPath = "/org/fedoraproject/FirewallD1";
constexpr const char* kZone = "org.fedoraproject.FirewallD1.zone";
// A plugin call must never hang on a stuck bus: 10 s is far beyond
// firewalld's usual answer (milliseconds) and well inside a runtime's
// timeout for the whole ADD.
constexpr uint64_t kCallTimeoutUsec = 10'000'000;

// An sd_bus_error, freed on scope exit.
struct BusError {
  sd_bus_error e = SD_BUS_ERROR_NULL;
  ~BusError() { sd_bus_error_free(&e); }
  std::string Text(int r) const {
    if (sd_bus_error_is_set(&e)) return absl::StrCat(e.name, ": ", e.message ? e.message : "");
    return absl::StrCat("errno ", -r);
  }
  bool Is(absl::string_view firewalld_code) const {
    return sd_bus_error_is_set(&e) && e.message != nullptr && absl::StrContains(e.message, firewalld_code);
  }
};

// A reply message, unreferenced on scope exit.
struct Reply {
  sd_bus_message* m = nullptr;
  ~Reply() { sd_bus_message_unref(m); }
};

// Calls zone.<method>(zone, source) with the call timeout.
int CallZone(sd_bus* bus, const char* method, absl::string_view zone, absl::string_view source, BusError& err,
             Reply& reply) {
  sd_bus_message* call = nullptr;
  int r = sd_bus_message_new_method_call(bus, &call, kName, kPath, kZone, method);
  if (r < 0) return r;
  std::string z(zone), s(source);
  r = sd_bus_message_append(call, "ss", z.c_str(), s.c_str());
  if (r >= 0) r = sd_bus_call(bus, call, kCallTimeoutUsec, &err.e, &reply.m);
  sd_bus_message_unref(call);
  return r;
}

absl::Status Failed(absl::string_view what, absl::string_view source, absl::string_view zone, const BusError& err,
                    int r) {
  // firewalld refuses an unknown zone: the configuration names it.
  ErrorCode code = err.Is("INVALID_ZONE") ? ErrorCode::kInvalidNetworkConfig : ErrorCode::kInternal;
  return Error(code, absl::StrCat("firewalld: ", what, " ", source, " ", what == "adding" ? "to" : "in", " zone \"",
                                  zone, "\": ", err.Text(r)));
}

}  // namespace

bool SystemBusPresent() {
  const char* env = std::getenv("DBUS_SYSTEM_BUS_ADDRESS");
  absl::string_view address = env != nullptr ? env : "unix:path=/run/dbus/system_bus_socket";
  // Only a plain unix:path= can be checked without connecting; any other
  // address is assumed to be there.
  if (!absl::ConsumePrefix(&address, "unix:path=")) return true;
  address = address.substr(0, address.find(','));
  struct stat st {};
  return stat(std::string(address).c_str(), &st) == 0;
}

void Client::Unref::operator()(sd_bus* bus) const { sd_bus_flush_close_unref(bus); }

absl::StatusOr<Client> Client::Connect() {
  sd_bus* bus = nullptr;
  if (int r = sd_bus_open_system(&bus); r < 0) {
    return Error(ErrorCode::kTryAgainLater, absl::StrCat("firewalld: connecting to the system bus: errno ", -r));
  }
  return Client(bus);
}

bool Client::FirewalldRunning() {
  BusError err;
  Reply reply;
  int r = sd_bus_call_method(bus_.get(), "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                             "GetNameOwner", &err.e, &reply.m, "s", kName);
  return r >= 0;
}

absl::Status Client::AddSource(absl::string_view zone, absl::string_view source) {
  BusError err;
  Reply reply;
  int r = CallZone(bus_.get(), "addSource", zone, source, err, reply);
  if (r >= 0 || err.Is("ZONE_ALREADY_SET")) return absl::OkStatus();
  return Failed("adding", source, zone, err, r);
}

absl::Status Client::RemoveSource(absl::string_view zone, absl::string_view source) {
  BusError err;
  Reply reply;
  int r = CallZone(bus_.get(), "removeSource", zone, source, err, reply);
  if (r >= 0 || err.Is("UNKNOWN_SOURCE") || err.Is("NOT_ENABLED")) return absl::OkStatus();
  return Failed("removing", source, zone, err, r);
}

absl::StatusOr<bool> Client::QuerySource(absl::string_view zone, absl::string_view source) {
  BusError err;
  Reply reply;
  int r = CallZone(bus_.get(), "querySource", zone, source, err, reply);
  if (r < 0) return Failed("looking up", source, zone, err, r);
  int in_zone = 0;
  if (r = sd_bus_message_read(reply.m, "b", &in_zone); r < 0) return Failed("reading the answer for", source, zone, err, r);
  return in_zone != 0;
}

}  // namespace cni::firewall::firewalld

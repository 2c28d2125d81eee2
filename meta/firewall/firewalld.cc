#include "firewalld.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "cni/base/error.h"
#include "cni/base/quoted.h"
#include "cni/base/status_macros.h"
#include "sd_bus_api.h"

namespace cni::firewall::firewalld {
namespace {

// firewalld's name on the bus.
constexpr const char* kFirewalldName = "org.fedoraproject.FirewallD1";
// The D-Bus error firewalld replies with for its own errors; the message
// starts with firewalld's error name ("INVALID_ZONE: nope").
constexpr const char* kFirewalldException = "org.fedoraproject.FirewallD1.Exception";

// How long one call waits for its reply. sd-bus's default is 25 s, and a
// runtime's own deadline for a whole CNI ADD may be shorter than that, so a
// hung bus or a firewalld stuck in a reload would hang the plugin until the
// runtime kills it, with no error. firewalld answers addSource in well under a
// second even when the first source of a zone makes it apply the whole zone
// (one nft transaction); 10 s leaves room for a loaded host and still fails
// (code 11, try again later) well inside any runtime's deadline.
constexpr uint64_t kCallTimeoutUsec = 10'000'000;

struct MessageUnref {
  void operator()(sd_bus_message* m) const { Api().message_unref(m); }
};
using MessagePtr = std::unique_ptr<sd_bus_message, MessageUnref>;

// An sd_bus_error that frees itself.
class BusError {
 public:
  BusError() = default;
  ~BusError() { Api().error_free(&error_); }
  BusError(const BusError&) = delete;
  BusError& operator=(const BusError&) = delete;

  sd_bus_error* get() { return &error_; }
  const sd_bus_error* get() const { return &error_; }
  bool HasName(const char* name) const { return Api().error_has_name(&error_, name) > 0; }

  // firewalld's error name ("INVALID_ZONE") when firewalld itself refused,
  // else empty.
  std::string FirewalldCode() const {
    if (!HasName(kFirewalldException) || error_.message == nullptr) return "";
    absl::string_view msg = error_.message;
    return std::string(absl::StripAsciiWhitespace(msg.substr(0, msg.find(':'))));
  }

  // "<D-Bus error name>: <message>".
  std::string Describe() const {
    if (error_.name == nullptr) return "unknown D-Bus error";
    if (error_.message == nullptr || *error_.message == '\0') return error_.name;
    return absl::StrCat(error_.name, ": ", error_.message);
  }

 private:
  sd_bus_error error_ = SD_BUS_ERROR_NULL;
};

struct Method {
  const char* destination;
  const char* path;
  const char* interface;
  const char* member;
};

// Calls `method` with string arguments `args` and waits at most
// kCallTimeoutUsec for the reply. Returns sd-bus's result: >= 0 with `reply`
// set, or a negative errno with `error` set (also for local failures, which
// sd-bus names "System.Error.<ERRNO>").
int Call(sd_bus* bus, const Method& method, std::initializer_list<absl::string_view> args,
         BusError& error, MessagePtr& reply) {
  if (bus == nullptr) return Api().error_set_errno(error.get(), ENOTCONN);
  sd_bus_message* raw = nullptr;
  int r = Api().message_new_method_call(bus, &raw, method.destination, method.path,
                                         method.interface, method.member);
  if (r < 0) return Api().error_set_errno(error.get(), r);
  MessagePtr call(raw);
  for (absl::string_view arg : args) {
    std::string s(arg);  // sd-bus wants a NUL-terminated string
    r = Api().message_append_basic(call.get(), 's', s.c_str());
    if (r < 0) return Api().error_set_errno(error.get(), r);
  }
  sd_bus_message* raw_reply = nullptr;
  r = Api().call(bus, call.get(), kCallTimeoutUsec, error.get(), &raw_reply);
  reply.reset(raw_reply);
  if (r < 0 && !Api().error_is_set(error.get())) Api().error_set_errno(error.get(), r);
  return r;
}

// A method of firewalld's zone interface, called with (zone, source): what
// Call returns.
int CallZone(sd_bus* bus, const char* member, absl::string_view zone, absl::string_view source, BusError& error,
             MessagePtr& reply) {
  const Method method{kFirewalldName, "/org/fedoraproject/FirewallD1", "org.fedoraproject.FirewallD1.zone", member};
  return Call(bus, method, {zone, source}, error, reply);
}

// The CNI code for a failed call.
ErrorCode CodeFor(const BusError& error, int r) {
  const std::string fw = error.FirewalldCode();
  // The zone comes from the network configuration (firewalldZone, default
  // "trusted") and firewalld says no such zone exists: the configuration does
  // not fit this host, and asking again gives the same answer, so it is a
  // configuration error (7), not a transient one (11) nor an internal one.
  if (fw == "INVALID_ZONE") return ErrorCode::kInvalidNetworkConfig;
  // firewalld is starting up (it owns its name before it has loaded).
  if (fw == "NOT_RUNNING") return ErrorCode::kTryAgainLater;
  // Nobody answers (firewalld stopped or restarting, the bus went away, the
  // reply timed out): transient, the runtime should retry.
  if (Api().error_has_names_sentinel(error.get(), SD_BUS_ERROR_SERVICE_UNKNOWN, SD_BUS_ERROR_NAME_HAS_NO_OWNER,
                             SD_BUS_ERROR_NO_REPLY, SD_BUS_ERROR_TIMEOUT,
                             SD_BUS_ERROR_DISCONNECTED, SD_BUS_ERROR_NO_SERVER,
                             SD_BUS_ERROR_LIMITS_EXCEEDED, nullptr) > 0) {
    return ErrorCode::kTryAgainLater;
  }
  switch (-r) {
    case ETIMEDOUT:
    case ECONNRESET:
    case ECONNREFUSED:
    case ENOTCONN:
    case EPIPE:
    case ESHUTDOWN:
      return ErrorCode::kTryAgainLater;
    default:
      return ErrorCode::kInternal;
  }
}

absl::Status CallError(absl::string_view what, const BusError& error, int r) {
  return Error(CodeFor(error, r), absl::StrCat("firewalld: ", what, ": ", error.Describe()));
}

}  // namespace

void Client::BusUnref::operator()(sd_bus* bus) const { Api().flush_close_unref(bus); }

absl::StatusOr<Client> Client::Connect() {
  CNI_ASSIGN_OR_RETURN(const SdBus* api, LoadSdBus());
  sd_bus* bus = nullptr;
  int r = api->open_system(&bus);
  if (r < 0) {
    return WithCode(ErrnoError(-r, "firewalld: connecting to the system D-Bus"), ErrorCode::kTryAgainLater);
  }
  return Client(bus);
}

bool Client::FirewalldRunning() {
  BusError error;
  MessagePtr reply;
  // The bus's own GetNameOwner: does anyone own firewalld's name?
  const Method get_name_owner{"org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetNameOwner"};
  return Call(bus_.get(), get_name_owner, {kFirewalldName}, error, reply) >= 0;
}

absl::Status Client::AddSource(absl::string_view zone, absl::string_view source) {
  BusError error;
  MessagePtr reply;
  int r = CallZone(bus_.get(), "addSource", zone, source, error, reply);
  // Already a source of this zone: what we wanted (upstream does the same).
  if (r < 0 && error.FirewalldCode() != "ZONE_ALREADY_SET") {
    return CallError(absl::StrCat("adding ", source, " to zone ", Quoted(zone)), error, r);
  }
  return absl::OkStatus();
}

absl::Status Client::RemoveSource(absl::string_view zone, absl::string_view source) {
  BusError error;
  MessagePtr reply;
  int r = CallZone(bus_.get(), "removeSource", zone, source, error, reply);
  if (r >= 0) return absl::OkStatus();
  // Not in this zone: in no zone (UNKNOWN_SOURCE), in another one
  // (ZONE_CONFLICT), or the zone does not exist (INVALID_ZONE; firewalld
  // checks the zone only when the source is in some zone). Nothing to remove.
  const std::string fw = error.FirewalldCode();
  if (fw == "UNKNOWN_SOURCE" || fw == "ZONE_CONFLICT" || fw == "INVALID_ZONE") return absl::OkStatus();
  return CallError(absl::StrCat("removing ", source, " from zone ", Quoted(zone)), error, r);
}

absl::StatusOr<bool> Client::QuerySource(absl::string_view zone, absl::string_view source) {
  BusError error;
  MessagePtr reply;
  const std::string what = absl::StrCat("querying ", source, " in zone ", Quoted(zone));
  int r = CallZone(bus_.get(), "querySource", zone, source, error, reply);
  if (r < 0) return CallError(what, error, r);
  int in_zone = 0;  // sd-bus reads a D-Bus boolean into an int
  r = Api().message_read_basic(reply.get(), 'b', &in_zone);
  if (r <= 0) {
    return Error(ErrorCode::kInternal,
                 absl::StrCat("firewalld: ", what, ": reading the reply: ", r < 0 ? std::strerror(-r) : "no boolean"));
  }
  return in_zone != 0;
}

}  // namespace cni::firewall::firewalld

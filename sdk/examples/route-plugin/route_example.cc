#include "route_example.h"

#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/json.h"
#include "cni/base/status_macros.h"
#include "cni/net/link.h"
#include "cni/net/netlink.h"
#include "cni/net/netns.h"
#include "cni/net/route.h"
#include "cni/plugin/config_schema.h"
#include "cni/protocol/version.h"

namespace route_example {
namespace {

using cni::ErrorCode;
namespace config = cni::config;

absl::Status Invalid(absl::string_view msg) {
  return cni::Error(ErrorCode::kInvalidNetworkConfig, absl::StrCat("route-example: ", msg));
}

// One entry of "routes": {"dst": "192.0.2.0/24", "gw": "10.1.0.1"}.
absl::StatusOr<RouteEntry> ParseRoute(const cni::Json& entry, const std::string& where) {
  if (!entry.is_object()) {
    return cni::Error(ErrorCode::kDecodingFailure, absl::StrCat(where, " is not an object"));
  }
  ASSIGN_OR_RETURN(std::optional<std::string> dst, cni::GetString(entry, "dst"), where);
  if (!dst) return Invalid(absl::StrCat(where, " has no \"dst\""));
  ASSIGN_OR_RETURN(cni::net::IpPrefix prefix, cni::net::IpPrefix::Parse(*dst),
                   "route-example: ", where, ".dst");
  RouteEntry route{prefix.Network(), std::nullopt};
  ASSIGN_OR_RETURN(std::optional<std::string> gw, cni::GetString(entry, "gw"), where);
  if (gw && !gw->empty()) {
    ASSIGN_OR_RETURN(cni::net::IpAddress ip, cni::net::IpAddress::Parse(*gw),
                     "route-example: ", where, ".gw");
    if (ip.family() != route.dst.family()) {
      return Invalid(absl::StrCat(where, ": gateway ", ip.ToString(), " is not of the family of ",
                                  route.dst.ToString()));
    }
    route.gw = ip;
  }
  return route;
}

absl::StatusOr<std::vector<RouteEntry>> ParseRoutes(const cni::Json& list) {
  if (!list.is_array()) return cni::Error(ErrorCode::kDecodingFailure, "\"routes\" is not a list");
  std::vector<RouteEntry> routes;
  for (size_t i = 0; i < list.size(); ++i) {
    ASSIGN_OR_RETURN(RouteEntry route, ParseRoute(list[i], absl::StrCat("routes[", i, "]")));
    routes.push_back(std::move(route));
  }
  return routes;
}

// Every key the plugin reads, as data.
const config::Schema<Config>& Keys() {
  static const config::Schema<Config> keys = {
      config::Custom("routes", &Config::routes, ParseRoutes),
  };
  return keys;
}

// The kernel's view of one configured route, on the link `ifindex`.
cni::net::RouteSpec ToSpec(const RouteEntry& r, int ifindex) {
  cni::net::RouteSpec spec;
  spec.dst = r.dst;
  spec.gw = r.gw;
  spec.ifindex = ifindex;
  return spec;
}

std::string Describe(const RouteEntry& r, absl::string_view ifname) {
  return absl::StrCat("route ", r.dst.ToString(), r.gw ? absl::StrCat(" via ", r.gw->ToString()) : "",
                      " on \"", ifname, "\"");
}

// The chained plugin's input: the previous plugin's result. It must name
// CNI_IFNAME as a container interface when it lists interfaces at all.
absl::StatusOr<cni::Result> RequirePrevResult(const cni::CmdArgs& args, const Config& config) {
  if (!config.prev_result) return Invalid("must be chained after an interface plugin: prevResult missing");
  const cni::Result& r = *config.prev_result;
  if (!r.interfaces.empty()) {
    bool found = false;
    for (const cni::Interface& i : r.interfaces) found |= (i.name == args.ifname && !i.sandbox.empty());
    if (!found) return Invalid(absl::StrCat("prevResult has no container interface \"", args.ifname, "\""));
  }
  return r;
}

// The container's netns, a netlink socket in it, and the interface.
struct Target {
  cni::net::NetlinkSocket sock;
  cni::net::LinkInfo link;
};

absl::StatusOr<Target> OpenTarget(const cni::CmdArgs& args) {
  ASSIGN_OR_RETURN(cni::net::Netns ns, cni::net::Netns::Open(args.netns));
  ASSIGN_OR_RETURN(cni::net::NetlinkSocket sock, cni::net::NetlinkSocket::OpenIn(ns));
  ASSIGN_OR_RETURN(cni::net::LinkInfo link, cni::net::LinkByName(sock, args.ifname));
  return Target{std::move(sock), std::move(link)};
}

}  // namespace

absl::StatusOr<Config> Config::Parse(const cni::CmdArgs& args) {
  Config c;
  RETURN_IF_ERROR(config::ParseKeys(args.conf.raw, Keys(), "route-example", c));
  ASSIGN_OR_RETURN(c.prev_result, cni::ParsePrevResult(args.conf));
  return c;
}

absl::StatusOr<cni::Result> Add(const cni::CmdArgs& args, const Config& config) {
  ASSIGN_OR_RETURN(cni::Result result, RequirePrevResult(args, config));
  if (config.routes.empty()) return result;  // nothing to do: pass prevResult through

  // The kernel work, through a netlink socket opened inside the container.
  ASSIGN_OR_RETURN(Target target, OpenTarget(args), "route-example");
  std::vector<cni::net::RouteSpec> added;
  // Rollback: a failed ADD leaves none of our routes behind.
  absl::Cleanup undo = [&] {
    for (const cni::net::RouteSpec& spec : added) (void)cni::net::DeleteRoute(target.sock, spec);
  };
  for (const RouteEntry& r : config.routes) {
    cni::net::RouteSpec spec = ToSpec(r, target.link.index);
    RETURN_IF_ERROR(cni::net::AddRoute(target.sock, spec), "route-example: adding ",
                    Describe(r, args.ifname));
    added.push_back(spec);
  }
  std::move(undo).Cancel();

  // The result: prevResult with our routes appended.
  for (const RouteEntry& r : config.routes) {
    cni::Route route;
    route.dst = r.dst;
    route.gw = r.gw;
    result.routes.push_back(route);
  }
  return result;
}

absl::Status Del(const cni::CmdArgs& args, const Config& config) {
  if (config.routes.empty() || args.netns.empty()) return absl::OkStatus();
  absl::StatusOr<Target> target = OpenTarget(args);
  // DEL is idempotent: no namespace or no interface means the routes are gone.
  if (absl::IsNotFound(target.status())) return absl::OkStatus();
  RETURN_IF_ERROR(target, "route-example");
  // Keep going past a failure; report every failure together.
  std::vector<absl::Status> failures;
  for (const RouteEntry& r : config.routes) {
    absl::Status s = cni::net::DeleteRoute(target->sock, ToSpec(r, target->link.index));
    if (!s.ok() && !absl::IsNotFound(s)) failures.push_back(s);
  }
  return cni::Annotate(cni::JoinErrors(failures), "route-example: deleting routes");
}

absl::Status Check(const cni::CmdArgs& args, const Config& config) {
  RETURN_IF_ERROR(RequirePrevResult(args, config));
  if (config.routes.empty()) return absl::OkStatus();
  ASSIGN_OR_RETURN(Target target, OpenTarget(args), "route-example");
  cni::net::RouteFilter filter;
  filter.ifindex = target.link.index;
  ASSIGN_OR_RETURN(std::vector<cni::net::RouteSpec> have, cni::net::ListRoutes(target.sock, filter),
                   "route-example: listing routes");
  for (const RouteEntry& want : config.routes) {
    bool found = false;
    for (const cni::net::RouteSpec& h : have) found |= h.dst.Network() == want.dst && h.gw == want.gw;
    if (!found) return Invalid(absl::StrCat(Describe(want, args.ifname), " is missing"));
  }
  return absl::OkStatus();
}

cni::PluginFuncs Funcs() {
  return cni::Typed<Config>({.add = Add, .del = Del, .check = Check});
}

std::vector<std::string> SupportedVersions() {
  std::vector<std::string> out;
  for (const std::string& v : cni::AllVersions()) {
    if (cni::VersionAtLeast(v, "0.3.0")) out.push_back(v);
  }
  return out;
}

}  // namespace route_example

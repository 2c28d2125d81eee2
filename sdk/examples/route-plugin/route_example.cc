#include "route_example.h"

#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cni/error.h"
#include "cni/json.h"
#include "cni/net/link.h"
#include "cni/net/netlink.h"
#include "cni/net/netns.h"
#include "cni/net/route.h"
#include "cni/version.h"

namespace route_example {
namespace {

using cni::ErrorCode;

absl::Status Invalid(absl::string_view msg) {
  return cni::Error(ErrorCode::kInvalidNetworkConfig, absl::StrCat("route-example: ", msg));
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
absl::StatusOr<cni::Result> RequirePrevResult(const cni::CmdArgs& args) {
  absl::StatusOr<std::optional<cni::Result>> prev = cni::ParsePrevResult(args.conf);
  if (!prev.ok()) return prev.status();
  if (!*prev) return Invalid("must be chained after an interface plugin: prevResult missing");
  const cni::Result& r = **prev;
  if (!r.interfaces.empty()) {
    bool found = false;
    for (const cni::Interface& i : r.interfaces) found |= (i.name == args.ifname && !i.sandbox.empty());
    if (!found) return Invalid(absl::StrCat("prevResult has no container interface \"", args.ifname, "\""));
  }
  return **std::move(prev);
}

// The container's netns, a netlink socket in it, and the interface.
struct Target {
  cni::net::NetlinkSocket sock;
  cni::net::LinkInfo link;
};

absl::StatusOr<Target> OpenTarget(const cni::CmdArgs& args) {
  absl::StatusOr<cni::net::Netns> ns = cni::net::Netns::Open(args.netns);
  if (!ns.ok()) return ns.status();
  absl::StatusOr<cni::net::NetlinkSocket> sock = cni::net::NetlinkSocket::OpenIn(*ns);
  if (!sock.ok()) return sock.status();
  absl::StatusOr<cni::net::LinkInfo> link = cni::net::LinkByName(*sock, args.ifname);
  if (!link.ok()) return link.status();
  return Target{*std::move(sock), *std::move(link)};
}

}  // namespace

absl::StatusOr<Config> ParseConfig(const cni::NetConf& conf) {
  Config config;
  absl::StatusOr<std::optional<cni::Json>> list = cni::GetArray(conf.raw, "routes");
  if (!list.ok()) return list.status();  // not an array: code 6
  if (!*list) return config;             // no routes: a valid no-op
  for (size_t i = 0; i < (*list)->size(); ++i) {
    const cni::Json& entry = (**list)[i];
    std::string where = absl::StrCat("routes[", i, "]");
    if (!entry.is_object()) return cni::Error(ErrorCode::kDecodingFailure, absl::StrCat(where, " is not an object"));
    absl::StatusOr<std::optional<std::string>> dst = cni::GetString(entry, "dst");
    if (!dst.ok()) return cni::Annotate(dst.status(), where);
    if (!*dst) return Invalid(absl::StrCat(where, " has no \"dst\""));
    absl::StatusOr<cni::net::IpPrefix> prefix = cni::net::IpPrefix::Parse(**dst);
    if (!prefix.ok()) return cni::Annotate(prefix.status(), absl::StrCat("route-example: ", where, ".dst"));
    RouteEntry route{prefix->Network(), std::nullopt};
    absl::StatusOr<std::optional<std::string>> gw = cni::GetString(entry, "gw");
    if (!gw.ok()) return cni::Annotate(gw.status(), where);
    if (*gw && !(*gw)->empty()) {
      absl::StatusOr<cni::net::IpAddress> ip = cni::net::IpAddress::Parse(**gw);
      if (!ip.ok()) return cni::Annotate(ip.status(), absl::StrCat("route-example: ", where, ".gw"));
      if (ip->family() != route.dst.family()) {
        return Invalid(absl::StrCat(where, ": gateway ", ip->ToString(), " is not of the family of ",
                                    route.dst.ToString()));
      }
      route.gw = *ip;
    }
    config.routes.push_back(route);
  }
  return config;
}

absl::StatusOr<cni::Result> Add(const cni::CmdArgs& args) {
  // 1. Parse and validate everything before the first side effect.
  absl::StatusOr<Config> config = ParseConfig(args.conf);
  if (!config.ok()) return config.status();
  absl::StatusOr<cni::Result> result = RequirePrevResult(args);
  if (!result.ok()) return result.status();
  if (config->routes.empty()) return result;  // nothing to do: pass prevResult through

  // 2. The kernel work, through a netlink socket opened inside the container.
  absl::StatusOr<Target> target = OpenTarget(args);
  if (!target.ok()) return cni::Annotate(target.status(), "route-example");
  std::vector<cni::net::RouteSpec> added;
  // Rollback: a failed ADD leaves none of our routes behind.
  absl::Cleanup undo = [&] {
    for (const cni::net::RouteSpec& spec : added) (void)cni::net::DeleteRoute(target->sock, spec);
  };
  for (const RouteEntry& r : config->routes) {
    cni::net::RouteSpec spec = ToSpec(r, target->link.index);
    if (absl::Status s = cni::net::AddRoute(target->sock, spec); !s.ok()) {
      return cni::Annotate(s, absl::StrCat("route-example: adding ", Describe(r, args.ifname)));
    }
    added.push_back(spec);
  }
  std::move(undo).Cancel();

  // 3. The result: prevResult with our routes appended.
  for (const RouteEntry& r : config->routes) {
    cni::Route route;
    route.dst = r.dst;
    route.gw = r.gw;
    result->routes.push_back(route);
  }
  return result;
}

absl::Status Del(const cni::CmdArgs& args) {
  absl::StatusOr<Config> config = ParseConfig(args.conf);
  if (!config.ok()) return config.status();
  if (config->routes.empty() || args.netns.empty()) return absl::OkStatus();
  absl::StatusOr<Target> target = OpenTarget(args);
  // DEL is idempotent: no namespace or no interface means the routes are gone.
  if (absl::IsNotFound(target.status())) return absl::OkStatus();
  if (!target.ok()) return cni::Annotate(target.status(), "route-example");
  // Keep going past a failure; report every failure together.
  std::vector<std::string> failures;
  for (const RouteEntry& r : config->routes) {
    absl::Status s = cni::net::DeleteRoute(target->sock, ToSpec(r, target->link.index));
    if (!s.ok() && !absl::IsNotFound(s)) failures.push_back(std::string(s.message()));
  }
  if (!failures.empty()) {
    return cni::Error(ErrorCode::kIoFailure,
                      absl::StrCat("route-example: deleting routes: ", absl::StrJoin(failures, "; ")));
  }
  return absl::OkStatus();
}

absl::Status Check(const cni::CmdArgs& args) {
  absl::StatusOr<Config> config = ParseConfig(args.conf);
  if (!config.ok()) return config.status();
  absl::StatusOr<cni::Result> prev = RequirePrevResult(args);
  if (!prev.ok()) return prev.status();
  if (config->routes.empty()) return absl::OkStatus();
  absl::StatusOr<Target> target = OpenTarget(args);
  if (!target.ok()) return cni::Annotate(target.status(), "route-example");
  cni::net::RouteFilter filter;
  filter.ifindex = target->link.index;
  absl::StatusOr<std::vector<cni::net::RouteSpec>> have = cni::net::ListRoutes(target->sock, filter);
  if (!have.ok()) return cni::Annotate(have.status(), "route-example: listing routes");
  for (const RouteEntry& want : config->routes) {
    bool found = false;
    for (const cni::net::RouteSpec& h : *have) {
      found |= h.dst.Network() == want.dst && h.gw == want.gw;
    }
    if (!found) return Invalid(absl::StrCat(Describe(want, args.ifname), " is missing"));
  }
  return absl::OkStatus();
}

// route-example keeps no state outside the container's namespace (which goes
// away with the container), so there is nothing to collect.
absl::Status Gc(const cni::CmdArgs&) { return absl::OkStatus(); }

// Ready whenever the configuration is valid.
absl::Status Status(const cni::CmdArgs& args) { return ParseConfig(args.conf).status(); }

cni::PluginFuncs Funcs() {
  cni::PluginFuncs f;
  f.add = Add;
  f.del = Del;
  f.check = Check;
  f.gc = Gc;
  f.status = Status;
  return f;
}

std::vector<std::string> SupportedVersions() {
  std::vector<std::string> out;
  for (const std::string& v : cni::AllVersions()) {
    if (cni::VersionAtLeast(v, "0.3.0")) out.push_back(v);
  }
  return out;
}

}  // namespace route_example

#include "route_example.h"

#include <optional>
#include <string>

#include "absl/cleanup/cleanup.h"
#include "cni/base/json.h"
#include "cni/base/status_macros.h"
#include "cni/net/container_link.h"
#include "cni/net/route.h"
#include "cni/plugin/attachment_store.h"
#include "cni/plugin/chained.h"
#include "cni/plugin/check.h"
#include "cni/plugin/config_schema.h"
#include "cni/plugin/plugin_keys.h"

namespace route_example {
namespace {

constexpr char kPlugin[] = "route-example";

// What ADD added, per attachment, for DEL and GC: {"routes": [...]}.
const cni::AttachmentStore kStore("/var/lib/cni/route-example");

const cni::config::Schema<Config> kKeys = {
    cni::config::Parsed("routes", &Config::routes, cni::ParseRoutesKey),
};

// The kernel's view of a configured route, on the link `ifindex`.
cni::net::RouteSpec OnLink(const cni::Route& r, int ifindex) {
  cni::net::RouteSpec spec;
  spec.dst = r.dst;
  spec.gw = r.gw;
  spec.ifindex = ifindex;
  return spec;
}

}  // namespace

absl::StatusOr<Config> Config::Parse(const cni::CmdArgs& args) {
  Config c;
  RETURN_IF_ERROR(cni::config::ParseKeys(args.conf.raw, kKeys, kPlugin, c));
  return c;
}

absl::StatusOr<Teardown> Teardown::Parse(const cni::CmdArgs& args) {
  Teardown t;
  if (absl::StatusOr<Config> config = Config::Parse(args); config.ok()) t.routes = config->routes;
  return t;
}

absl::StatusOr<cni::Result> Add(const cni::CmdArgs& args, const Config& config) {
  ASSIGN_OR_RETURN(cni::PrevInterface prev, cni::RequirePrevInterface(args, kPlugin));
  if (config.routes.empty()) return prev.result;  // nothing to do: pass prevResult through

  ASSIGN_OR_RETURN(cni::net::ContainerLink target, cni::net::OpenContainerLink(args.netns, args.ifname), kPlugin);
  std::vector<cni::net::RouteSpec> added;
  // Rollback: a failed ADD leaves none of our routes behind.
  absl::Cleanup undo = [&] {
    for (const cni::net::RouteSpec& spec : added) (void)cni::net::DeleteRoute(target.sock, spec);
  };
  for (const cni::Route& r : config.routes) {
    // AddRoute's message names the route and the link: add only our name.
    RETURN_IF_ERROR(cni::net::AddRoute(target.sock, OnLink(r, target.link.index)), kPlugin);
    added.push_back(OnLink(r, target.link.index));
  }
  // The record: the configuration's "routes", as ADD applied them.
  RETURN_IF_ERROR(kStore.Save(args, cni::Dump({{"routes", *cni::FindKey(args.conf.raw, "routes")}})), kPlugin);
  std::move(undo).Cancel();

  prev.result.routes.insert(prev.result.routes.end(), config.routes.begin(), config.routes.end());
  return prev.result;
}

absl::Status Check(const cni::CmdArgs& args, const Config& config) {
  RETURN_IF_ERROR(cni::RequirePrevInterface(args, kPlugin).status());  // code 7: not chained
  if (config.routes.empty()) return absl::OkStatus();
  ASSIGN_OR_RETURN(cni::net::ContainerLink target, cni::net::OpenContainerLink(args.netns, args.ifname), kPlugin);
  // A missing route is a mismatch, code 999 (cni/plugin/check.h says why).
  return cni::Annotate(cni::net::CheckRoutesOn(target.sock, target.link, config.routes), kPlugin);
}

absl::Status Del(const cni::CmdArgs& args, const Teardown& teardown) {
  // The routes ADD recorded; none (an ADD killed before it recorded) or
  // unreadable: the configuration's, when they parse.
  std::vector<cni::Route> added = teardown.routes;
  absl::StatusOr<std::optional<std::string>> record = kStore.Load(args);
  if (record.ok() && *record) {
    if (absl::StatusOr<cni::Json> j = cni::ParseJson(**record); j.ok()) {
      Config recorded;
      if (cni::config::ParseKeys(*j, kKeys, kPlugin, recorded).ok()) added = recorded.routes;
    }
  }
  ASSIGN_OR_RETURN(std::optional<cni::net::ContainerLink> target,
                   cni::net::OpenContainerLinkForTeardown(args.netns, args.ifname), kPlugin);
  // Keep going past a failure; report every failure together.
  std::vector<absl::Status> failures;
  for (const cni::Route& r : target ? added : std::vector<cni::Route>{}) {
    absl::Status st = cni::net::DeleteRoute(target->sock, OnLink(r, target->link.index));
    if (!absl::IsNotFound(st)) failures.push_back(st);
  }
  failures.push_back(kStore.Remove(args));
  return cni::NamedBy(cni::JoinErrors(failures), kPlugin);
}

absl::Status Gc(const cni::CmdArgs& args, const Teardown&) { return cni::NamedBy(kStore.Gc(args), kPlugin); }

cni::PluginFuncs Funcs() {
  // DEL and GC parse Teardown, which refuses no value of a key.
  return cni::TypedWithTeardown<Config, Teardown>({.add = Add, .check = Check}, {.del = Del, .gc = Gc});
}

}  // namespace route_example

#include "support/cni_call.h"

#include <filesystem>

#include "cni/base/ip.h"
#include "cni/protocol/version.h"

namespace cni::test {

RunResult CallPlugin(absl::string_view name, const std::string& command, const std::string& conf,
                     const std::string& netns, const std::string& id, const CallOptions& options) {
  PluginCall call;
  call.command = command;
  call.container_id = id;
  call.netns = netns;
  call.ifname = options.ifname;
  call.args = options.args;
  call.config = conf;
  call.extra_env = options.env;
  if (!options.dir.empty()) call.path = options.dir;
  return RunPlugin(name, call, options.dir);
}

CallOptions OnInterface(const std::string& ifname) {
  CallOptions o;
  o.ifname = ifname;
  return o;
}

void NormalizeForDiff(cni::Result& result, const std::string& host_veth) {
  for (cni::Interface& i : result.interfaces) {
    if (i.name == host_veth) i.name = "HOSTVETH";
    i.mac.clear();
    i.sandbox = i.sandbox.empty() ? "" : "SANDBOX";
  }
}

std::vector<std::string> Reservations(const TempDir& dir) {
  std::vector<std::string> out;
  if (!std::filesystem::exists(dir.path())) return out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir.path())) {
    std::string name = e.path().filename().string();
    if (e.is_regular_file() && cni::net::IpAddress::Parse(name).ok()) out.push_back(name);
  }
  return out;
}

Json NetConf(const std::string& version, const std::string& name, const std::string& type,
             const Json& keys, const Json& prev_result) {
  Json conf = {{"cniVersion", version}, {"name", name}, {"type", type}};
  for (const auto& [k, v] : keys.items()) conf[k] = v;
  if (!prev_result.is_null()) conf["prevResult"] = prev_result;
  return conf;
}

Json StaticIpam(const std::string& address, const std::string& gateway, const Json& routes) {
  Json a = {{"address", address}};
  if (!gateway.empty()) a["gateway"] = gateway;
  Json ipam = {{"type", "static"}, {"addresses", Json::array({a})}};
  if (!routes.is_null()) ipam["routes"] = routes;
  return ipam;
}

Json HostLocalIpam(const TempDir& dir, const std::vector<std::string>& subnets, const Json& routes) {
  Json ranges = Json::array();
  for (const std::string& subnet : subnets) ranges.push_back(Json::array({{{"subnet", subnet}}}));
  Json ipam = {{"type", "host-local"}, {"dataDir", dir.str()}, {"ranges", ranges}};
  if (!routes.is_null()) ipam["routes"] = routes;
  return ipam;
}

}  // namespace cni::test

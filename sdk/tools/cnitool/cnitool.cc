#include "cnitool.h"

#include <unistd.h>

#include <filesystem>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "cni/base/error.h"
#include "cni/base/hash.h"
#include "cni/runtime/runtime.h"

namespace cnitool {
namespace {

using OrderedJson = nlohmann::ordered_json;

constexpr const char* kUsage =
    "Usage: cnitool [-i|--ifname <name>] add|check|del|gc|status <network-name> <netns>\n"
    "Environment: NETCONFPATH (default /etc/cni/net.d), CNI_PATH, CNI_ARGS, CAP_ARGS (JSON),\n"
    "             CNI_IFNAME (default eth0)\n";

// Go struct field order of the result types (types/100, 040, 020): the order
// MarshalIndent prints them in. Keys we do not know follow, sorted.
const std::vector<std::string>& OrderFor(absl::string_view context) {
  static const std::map<std::string, std::vector<std::string>, std::less<>> kOrders = {
      {"result", {"cniVersion", "interfaces", "ip4", "ip6", "ips", "routes", "dns"}},
      {"interfaces", {"name", "mac", "mtu", "sandbox", "socketPath", "pciID"}},
      {"ips", {"version", "interface", "address", "gateway"}},
      {"ip4", {"ip", "gateway", "routes"}},
      {"routes", {"dst", "gw", "mtu", "advmss", "priority", "table", "scope"}},
      {"dns", {"nameservers", "domain", "search", "options"}},
  };
  static const std::vector<std::string> kNone;
  std::string key(context == "ip6" ? "ip4" : context);
  auto it = kOrders.find(key);
  return it == kOrders.end() ? kNone : it->second;
}

OrderedJson Reorder(const cni::Json& j, absl::string_view context) {
  if (j.is_array()) {
    OrderedJson arr = OrderedJson::array();
    for (const cni::Json& e : j) arr.push_back(Reorder(e, context));
    return arr;
  }
  if (!j.is_object()) return OrderedJson::parse(j.dump());
  OrderedJson obj = OrderedJson::object();
  const std::vector<std::string>& order = OrderFor(context);
  for (const std::string& k : order) {
    if (auto it = j.find(k); it != j.end()) obj[k] = Reorder(*it, k);
  }
  for (const auto& [k, v] : j.items()) {  // nlohmann iterates sorted
    if (std::find(order.begin(), order.end(), k) == order.end()) obj[k] = Reorder(v, k);
  }
  return obj;
}

std::string Get(const std::map<std::string, std::string>& env, const std::string& key) {
  auto it = env.find(key);
  return it == env.end() ? std::string() : it->second;
}

// Go's error text for a CNI error: "msg; details".
std::string ErrorText(const absl::Status& s) {
  std::string details = cni::DetailsOf(s);
  return details.empty() ? std::string(s.message()) : absl::StrCat(s.message(), "; ", details);
}

}  // namespace

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ParseCniArgs(absl::string_view s) {
  std::vector<std::pair<std::string, std::string>> out;
  for (absl::string_view pair : absl::StrSplit(s, ';')) {
    std::vector<absl::string_view> kv = absl::StrSplit(pair, '=');
    if (kv.size() != 2 || kv[0].empty() || kv[1].empty()) {
      return absl::InvalidArgumentError(absl::StrCat("invalid CNI_ARGS pair \"", pair, "\""));
    }
    out.emplace_back(std::string(kv[0]), std::string(kv[1]));
  }
  return out;
}

std::string AbsPath(absl::string_view path) {
  std::filesystem::path p{std::string(path)};
  if (p.is_relative()) p = std::filesystem::current_path() / p;
  std::string clean = p.lexically_normal().string();
  while (clean.size() > 1 && clean.back() == '/') clean.pop_back();
  return clean;
}

std::string ContainerIdFor(absl::string_view abs_netns) {
  // Upstream: fmt.Sprintf("cnitool-%x", sha512.Sum512(netns)[:10]).
  return cni::HashWithPrefix(8 + 20, "cnitool-", abs_netns);
}

std::string PrettyResult(const cni::Json& result) {
  return absl::StrReplaceAll(Reorder(result, "result").dump(4), {{"<", "\\u003c"},
                                                                {">", "\\u003e"},
                                                                {"&", "\\u0026"}});
}

int Main(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
         std::string& out, std::string& err) {
  std::string ifname;
  std::vector<std::string> positional;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help" || a == "help") {
      out += kUsage;
      return 0;
    } else if (a == "-i" || a == "--ifname") {
      if (i + 1 == args.size()) {
        err += absl::StrCat("flag needs an argument: ", a, "\n", kUsage);
        return 1;
      }
      ifname = args[++i];
    } else if (a.rfind("--ifname=", 0) == 0) {
      ifname = a.substr(9);
    } else {
      positional.push_back(a);
    }
  }
  if (positional.size() < 3) {
    err += kUsage;
    return 1;
  }
  const std::string& verb = positional[0];
  if (verb != "add" && verb != "check" && verb != "del" && verb != "gc" && verb != "status") {
    err += absl::StrCat("unknown command \"", verb, "\"\n", kUsage);
    return 1;
  }
  auto fail = [&](const absl::Status& s) {
    err += ErrorText(s) + "\n";
    return 1;
  };

  std::string netdir = Get(env, "NETCONFPATH");
  if (netdir.empty()) netdir = "/etc/cni/net.d";
  absl::StatusOr<cni::runtime::NetworkConfigList> list = cni::runtime::LoadNetworkConf(netdir, positional[1]);
  if (!list.ok()) return fail(list.status());

  cni::runtime::RuntimeConf rt;
  if (std::string caps = Get(env, "CAP_ARGS"); !caps.empty()) {
    absl::StatusOr<cni::Json> j = cni::ParseJson(caps);
    if (!j.ok() || !j->is_object()) return fail(absl::InvalidArgumentError("CAP_ARGS is not a JSON object"));
    rt.capability_args = *std::move(j);
  }
  if (std::string a = Get(env, "CNI_ARGS"); !a.empty()) {
    auto parsed = ParseCniArgs(a);
    if (!parsed.ok()) return fail(parsed.status());
    rt.args = *std::move(parsed);
  }
  if (ifname.empty()) ifname = Get(env, "CNI_IFNAME");
  rt.ifname = ifname.empty() ? "eth0" : ifname;
  rt.netns = AbsPath(positional[2]);
  rt.container_id = ContainerIdFor(rt.netns);

  cni::runtime::Options options;
  // filepath.SplitList: ':'-separated; an empty CNI_PATH is no directory.
  if (std::string path = Get(env, "CNI_PATH"); !path.empty()) {
    options.plugin_dirs = absl::StrSplit(path, ':');
  }
  cni::runtime::Runtime runtime(options);

  absl::Status status;
  if (verb == "add") {
    absl::StatusOr<cni::Json> result = runtime.AddNetworkList(*list, rt);
    if (!result.ok()) return fail(result.status());
    out += PrettyResult(*result);  // no trailing newline, as upstream
    return 0;
  } else if (verb == "check") {
    status = runtime.CheckNetworkList(*list, rt);
  } else if (verb == "del") {
    status = runtime.DelNetworkList(*list, rt);
  } else if (verb == "gc") {
    // Upstream passes no valid attachments: everything cached is collected.
    status = runtime.GcNetworkList(*list, std::nullopt);
  } else {
    status = runtime.StatusNetworkList(*list);
  }
  return status.ok() ? 0 : fail(status);
}

}  // namespace cnitool

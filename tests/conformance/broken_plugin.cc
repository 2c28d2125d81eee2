// A plugin that gets the protocol right but breaks the rules cni-conformance
// checks after that, so the checker is seen to fail (tests/conformance):
//   - ADD's result is invalid (a MAC that is not one, an address without a
//     prefix length, an interface index past the list) and drops prevResult;
//   - ADD leaves a file under /run/cni that neither DEL nor GC removes;
//   - CHECK always fails;
//   - an unknown CNI_COMMAND succeeds.
// Everything else (VERSION, the about line, codes 1, 4 and 6, DEL, STATUS)
// is as the spec asks, so only the checks aimed at these faults may fail.
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

#include "nlohmann/json.hpp"

namespace {

using Json = nlohmann::json;

const char* Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

int Fail(int code, const std::string& msg) {
  std::cout << Json{{"code", code}, {"msg", msg}}.dump() << "\n";
  return 1;
}

}  // namespace

int main() {
  const char* cmd = Env("CNI_COMMAND");
  if (cmd == nullptr) {
    std::cerr << "CNI broken plugin (cni-conformance's own test)\n";
    return 0;
  }
  std::string in((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  const std::string command(cmd);
  const Json supported = {"1.0.0", "1.1.0"};
  Json conf = Json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (command == "VERSION") {
    std::string v = conf.is_object() && conf.value("cniVersion", Json()).is_string() ? conf["cniVersion"].get<std::string>() : "1.1.0";
    std::cout << Json{{"cniVersion", v}, {"supportedVersions", supported}}.dump() << "\n";
    return 0;
  }
  if (command != "ADD" && command != "DEL" && command != "CHECK" && command != "GC" && command != "STATUS") {
    return 0;  // fault: should be code 4
  }
  if (conf.is_discarded() || !conf.is_object()) return Fail(6, "config is not a JSON object");
  const bool attachment = command == "ADD" || command == "DEL" || command == "CHECK";
  for (const char* name : {"CNI_CONTAINERID", "CNI_IFNAME"}) {
    if (attachment && Env(name) == nullptr) return Fail(4, std::string("required env variables [") + name + "] missing");
  }
  if ((command == "ADD" || command == "CHECK") && Env("CNI_NETNS") == nullptr) {
    return Fail(4, "required env variables [CNI_NETNS] missing");
  }
  std::string version = conf.value("cniVersion", "");
  if (std::find(supported.begin(), supported.end(), version) == supported.end()) {
    return Fail(1, "incompatible CNI versions: config is " + version + ", plugin supports 1.0.0 1.1.0");
  }
  if (command == "ADD") {
    mkdir("/run/cni", 0755);
    mkdir("/run/cni/broken", 0755);
    std::ofstream(std::string("/run/cni/broken/") + Env("CNI_CONTAINERID")) << "leaked\n";
    std::cout << Json{{"cniVersion", version},
                      {"interfaces", {{{"name", Env("CNI_IFNAME")}, {"mac", "not-a-mac"}}}},
                      {"ips", {{{"address", "10.0.0.2"}, {"interface", 3}}}}}
                     .dump()
              << "\n";
    return 0;
  }
  if (command == "CHECK") return Fail(999, "CHECK always fails here");
  return 0;  // DEL, GC, STATUS: success, and nothing removed
}

#include <string>
#include <vector>

#include "cni/protocol/skel.h"
#include "daemon.h"
#include "dhcp.h"

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "daemon") {
    return cni::dhcp::DaemonMain(std::vector<std::string>(argv + 2, argv + argc));
  }
  return cni::PluginMain(cni::dhcp::Funcs(), {{}, cni::AboutLine("dhcp")});
}

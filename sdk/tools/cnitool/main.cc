// cnitool: add|check|del|gc|status <network> <netns>. See cnitool.h.
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "cni/base/exec.h"
#include "cnitool.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::map<std::string, std::string> env = cni::EnvironmentMap(cni::ProcessEnvironment());
  std::string out, err;
  int code = cnitool::Main(args, env, out, err);
  std::cout << out << std::flush;
  std::cerr << err << std::flush;
  return code;
}

// cnitool: add|check|del|gc|status <network> <netns>. See cnitool.h.
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "cnitool.h"

extern char** environ;

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv(*e);
    size_t eq = kv.find('=');
    if (eq != std::string::npos) env.emplace(kv.substr(0, eq), kv.substr(eq + 1));
  }
  std::string out, err;
  int code = cnitool::Main(args, env, out, err);
  std::cout << out << std::flush;
  std::cerr << err << std::flush;
  return code;
}

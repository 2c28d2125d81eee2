// The whole process side of a plugin: hand the command table to skel.
#include "cni/protocol/skel.h"
#include "cni/protocol/version.h"
#include "route_example.h"

int main() {
  // Chaining (prevResult) exists from CNI 0.3.0 on: the versions we accept.
  return cni::PluginMain(route_example::Funcs(), {cni::VersionsFrom("0.3.0"), cni::AboutLine("route-example")});
}

// The whole process side of a plugin: hand the command table to skel.
#include "cni/protocol/skel.h"
#include "route_example.h"

int main() {
  return cni::PluginMain(route_example::Funcs(),
                         {route_example::SupportedVersions(), cni::AboutLine("route-example")});
}
